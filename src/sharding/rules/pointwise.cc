// Pointwise ops: every output dim is a factor; inputs broadcast onto it.
// Partial flows only through ops linear in the Partial inputs.
#include "sharding/rules/builders.h"

namespace autopar::sharding_rules {

Expected<OpRule> pointwise_linear_rule(const RuleCall& call) {
  return identity_rule(call, /*linear=*/true);
}

// relu, silu, rsqrt, pow, add.Scalar (x + c is not linear: n partial terms
// would add c n times), clamp, comparisons (eq/ne.Scalar), activations.
Expected<OpRule> pointwise_nonlinear_rule(const RuleCall& call) {
  return identity_rule(call, /*linear=*/false);
}

Expected<OpRule> add_tensor_rule(const RuleCall& call) {
  Expected<OpRule> rule = rule_from_spec(pointwise_spec(call), call);
  if (rule) add_linear(*rule, {0, 1});
  return rule;
}

Expected<OpRule> mul_tensor_rule(const RuleCall& call) {
  Expected<OpRule> rule = rule_from_spec(pointwise_spec(call), call);
  if (!rule) return rule;
  add_linear(*rule, {0});
  add_linear(*rule, {1});
  return rule;
}

// a / b: linear in the numerator a only.
Expected<OpRule> div_tensor_rule(const RuleCall& call) {
  Expected<OpRule> rule = rule_from_spec(pointwise_spec(call), call);
  if (rule) add_linear(*rule, {0});
  return rule;
}

// where(cond, a, b) picks a or b per element: linear in a and b together
// (summed terms pick from the summed branches), never in one alone.
Expected<OpRule> where_self_rule(const RuleCall& call) {
  Expected<OpRule> rule = rule_from_spec(pointwise_spec(call), call);
  if (rule) add_linear(*rule, {1, 2});
  return rule;
}

// masked_fill(x, mask, v): linear in x only when v is 0 (else each Partial
// term would carry v).
Expected<OpRule> masked_fill_rule(const RuleCall& call) {
  Expected<OpRule> rule = rule_from_spec(pointwise_spec(call), call);
  if (rule && call.attrs.get_scalar("value") == 0.0) add_linear(*rule, {0});
  return rule;
}

// fill.Scalar: the output shards as the input (whose values are never read).
// Filling with 0 keeps a Partial input Partial (every term is zeros), as
// zeros_like does (registry.cc); any other value, as ones_like, does not.
Expected<OpRule> fill_rule(const RuleCall& call) {
  return identity_rule(call, /*linear=*/call.attrs.get_scalar("value") == 0.0);
}

// silu_backward(grad, x), threshold_backward(grad, x): linear in grad only.
Expected<OpRule> grad_linear_rule(const RuleCall& call) {
  Expected<OpRule> rule = rule_from_spec(pointwise_spec(call), call);
  if (rule) add_linear(*rule, {0});
  return rule;
}

// bernoulli.p: every dim shards (each element is drawn from its index in the
// full tensor); not linear: the output does not depend on the input's values,
// so a Partial input would give a Partial of 0/1 draws, which is not them.
Expected<OpRule> random_rule(const RuleCall& call) { return identity_rule(call, /*linear=*/false); }

}  // namespace autopar::sharding_rules
