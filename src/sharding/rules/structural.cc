// placeholder and getitem. Graph inputs (params, inputs, buffers, tangents)
// may take any even Shard/Replicate layout but never Partial: a Partial input
// would need a producer. getitem passes its tuple element through unchanged.
#include "sharding/rules/builders.h"

namespace autopar::sharding_rules {

Expected<OpRule> placeholder_rule(const RuleCall& call) {
  Expected<OpRule> rule = rule_from_spec("->" + letters(call.outputs[0].rank()), call);
  if (rule) rule->placeholder = true;
  return rule;
}

Expected<OpRule> getitem_rule(const RuleCall& call) { return identity_rule(call, /*linear=*/true); }

}  // namespace autopar::sharding_rules
