// Fused attention: batch b and heads h shard freely; sequence (s, l) and head
// dims (d, e) stay whole (a ring/context-parallel kernel would be a new rule).
#include "sharding/rules/builders.h"

namespace autopar::sharding_rules {

Expected<OpRule> sdpa_rule(const RuleCall& call) {
  Expected<OpRule> rule = rule_from_spec("bhsd,bhld,bhle->bhse,bhs", call);
  if (!rule) return rule;
  for (char f : {'s', 'l', 'd', 'e'}) mark_replicate_only(*rule, f);
  return rule;
}

// (grad_out, q, k, v, out, logsumexp) -> (dq, dk, dv); linear in grad_out.
Expected<OpRule> sdpa_backward_rule(const RuleCall& call) {
  Expected<OpRule> rule =
      rule_from_spec("bhse,bhsd,bhld,bhle,bhse,bhs->bhsd,bhld,bhle", call);
  if (!rule) return rule;
  for (char f : {'s', 'l', 'd', 'e'}) mark_replicate_only(*rule, f);
  add_linear(*rule, {0});
  return rule;
}

}  // namespace autopar::sharding_rules
