// placeholder, getitem and generic aten ops. Graph inputs (params, inputs, buffers, tangents)
// may take any even Shard/Replicate layout but never Partial: a Partial input
// would need a producer. getitem passes its tuple element through unchanged.
// A generic aten op (OpId::kGeneric) has no rule of its own: every input and
// output stays whole on every device (Replicate), the one layout that is
// right for any op.
#include "sharding/rules/builders.h"

namespace autopar::sharding_rules {

Expected<OpRule> placeholder_rule(const RuleCall& call) {
  Expected<OpRule> rule = rule_from_spec("->" + letters(call.outputs[0].rank()), call);
  if (rule) rule->placeholder = true;
  return rule;
}

Expected<OpRule> getitem_rule(const RuleCall& call) { return identity_rule(call, /*linear=*/true); }

Expected<OpRule> generic_rule(const RuleCall& call) {
  auto whole = [](const Shape& shape) { return std::string(shape.size(), '_'); };
  std::string spec;
  for (int i = 0; i < call.num_inputs(); ++i) spec += (i > 0 ? "," : "") + whole(call.in(i).shape);
  spec += "->";
  for (size_t o = 0; o < call.outputs.size(); ++o) {
    spec += (o > 0 ? "," : "") + whole(call.outputs[o].shape);
  }
  return rule_from_spec(spec, call);
}

}  // namespace autopar::sharding_rules
