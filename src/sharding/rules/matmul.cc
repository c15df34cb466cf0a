// mm, bmm, addmm, baddbmm: contractions. Sharding the contracted factor leaves the
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

namespace {

// beta*self + alpha*(a @ b) with `product` the contraction's spec: self
// broadcasts onto the output and, under a contraction, must itself be
// Partial so the sum of terms is right; linear in self with either operand.
Expected<OpRule> add_product_rule(const RuleCall& call, std::string_view out_letters,
                                  std::string_view product) {
  const Shape& self = call.in(0).shape;
  const Shape& out = call.outputs[0].shape;
  std::string self_spec;
  size_t lead = out.size() - self.size();
  for (size_t d = 0; d < self.size(); ++d) {
    bool broadcast = self[d] == 1 && out[lead + d] != 1;
    self_spec += broadcast ? '1' : out_letters[lead + d];
  }
  Expected<OpRule> rule = rule_from_spec(self_spec + "," + std::string(product), call);
  if (!rule) return rule;
  rule->additive_inputs = 1u << 0;
  add_linear(*rule, {0, 1});
  add_linear(*rule, {0, 2});
  return rule;
}

}  // namespace

// beta*bias + alpha*(mat1 @ mat2).
Expected<OpRule> addmm_rule(const RuleCall& call) {
  return add_product_rule(call, "mn", "mk,kn->mn");
}

// beta*self + alpha*(batch1 @ batch2): addmm with a batch dim.
Expected<OpRule> baddbmm_rule(const RuleCall& call) {
  return add_product_rule(call, "bmn", "bmk,bkn->bmn");
}

}  // namespace autopar::sharding_rules
