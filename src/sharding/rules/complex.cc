// Complex views. view_as_complex pairs the trailing dim of 2 into one c64
// element, so that dim is never sharded; all other dims follow. The real view
// is what redistribution sends (see redistribute.h).
#include "sharding/rules/builders.h"

namespace autopar::sharding_rules {

Expected<OpRule> conj_rule(const RuleCall& call) { return identity_rule(call, /*linear=*/true); }

Expected<OpRule> view_as_complex_rule(const RuleCall& call) {
  std::string l = letters(call.outputs[0].rank());
  Expected<OpRule> rule = rule_from_spec(l + "2->" + l, call);
  if (rule) add_linear(*rule, {0});
  return rule;
}

Expected<OpRule> view_as_real_rule(const RuleCall& call) {
  std::string l = letters(call.in(0).rank());
  Expected<OpRule> rule = rule_from_spec(l + "->" + l + "2", call);
  if (rule) add_linear(*rule, {0});
  return rule;
}

}  // namespace autopar::sharding_rules
