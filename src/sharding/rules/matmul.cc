// mm, bmm, addmm: contractions. Sharding the contracted factor leaves the
// product Partial(sum); the product is linear in each operand separately.
#include "sharding/rules/builders.h"

namespace autopar::sharding_rules {

Expected<OpRule> mm_rule(const RuleCall& call) {
  Expected<OpRule> rule = rule_from_spec("mk,kn->mn", call);
  if (!rule) return rule;
  add_linear(*rule, {0});
  add_linear(*rule, {1});
  return rule;
}

Expected<OpRule> bmm_rule(const RuleCall& call) {
  Expected<OpRule> rule = rule_from_spec("bmk,bkn->bmn", call);
  if (!rule) return rule;
  add_linear(*rule, {0});
  add_linear(*rule, {1});
  return rule;
}

// beta*bias + alpha*(mat1 @ mat2): the bias broadcasts onto [m, n] and, under a
// contraction, must itself be Partial so the sum of terms is right.
Expected<OpRule> addmm_rule(const RuleCall& call) {
  const Shape& bias = call.in(0).shape;
  const Shape& out = call.outputs[0].shape;
  std::string bias_spec;
  size_t lead = out.size() - bias.size();
  for (size_t d = 0; d < bias.size(); ++d) {
    bool broadcast = bias[d] == 1 && out[lead + d] != 1;
    bias_spec += broadcast ? '1' : "mn"[lead + d];
  }
  Expected<OpRule> rule = rule_from_spec(bias_spec + ",mk,kn->mn", call);
  if (!rule) return rule;
  rule->additive_inputs = 1u << 0;
  add_linear(*rule, {0, 1});
  add_linear(*rule, {0, 2});
  return rule;
}

}  // namespace autopar::sharding_rules
