// Average pooling, adaptive average pooling and 2-D upsampling, with their
// backward ops. As for max pooling (cnn.cc), the last two (spatial) dims are
// never sharded: a window or an interpolation that crosses a cut would need a
// halo of the neighbour's rows. Every other dim (batch, channels) shards
// alone. All of these are linear maps of their one data input (an average,
// an interpolation, or their transposes), so Partial passes through; the
// backward ops are linear in grad_output (pooling's `self` only gives sizes).
#include "sharding/rules/builders.h"

namespace autopar::sharding_rules {
namespace {

// "nc__" (or "c__"): leading dims shard, the plane never does.
std::string image(const TensorMeta& t) { return letters(t.rank() - 2) + "__"; }

Expected<OpRule> linear_in_first(const std::string& spec, const RuleCall& call) {
  Expected<OpRule> rule = rule_from_spec(spec, call);
  if (rule) add_linear(*rule, {0});
  return rule;
}

}  // namespace

// avg_pool2d, _adaptive_avg_pool2d, upsample_*2d.vec, upsample_*2d_backward.vec.
Expected<OpRule> pool_rule(const RuleCall& call) {
  return linear_in_first(image(call.in(0)) + "->" + image(call.outputs[0]), call);
}

// avg_pool2d_backward, _adaptive_avg_pool2d_backward: (grad_output, self).
Expected<OpRule> pool_backward_rule(const RuleCall& call) {
  std::string x = image(call.in(1));
  return linear_in_first(image(call.in(0)) + "," + x + "->" + x, call);
}

}  // namespace autopar::sharding_rules
