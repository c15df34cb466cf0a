// Group norm. The channel dim is written as the merged "(gc)": g groups (the
// outer factor) of c channels each, so only g can shard it, and a shard of g
// holds whole groups with their statistics (mean and rstd are [N, g]). The
// batch shards too: statistics are per sample. The trailing dims are reduced
// by every group's statistics and never shard; nor does c, inside a group.
//   forward    batch; groups (weight and bias with them); not linear.
//   backward   groups; batch as an extra option (grad_input sharded, the
//              weight and bias gradients Partial sums over the batch, as
//              layer norm's); linear in grad_out.
#include <array>

#include "sharding/rules/builders.h"

namespace autopar::sharding_rules {
namespace {

// "n(gc)" and one '_' per trailing dim.
std::string grouped(const TensorMeta& x) {
  return "n(gc)" + std::string(static_cast<size_t>(x.rank() - 2), '_');
}

}  // namespace

// (input, weight?, bias?) -> (out, mean, rstd).
Expected<OpRule> native_group_norm_rule(const RuleCall& call) {
  std::string x = grouped(call.in(0));
  std::string spec = x;
  for (int i = 1; i < call.num_inputs(); ++i) spec += ",(gc)";
  Expected<OpRule> rule = rule_from_spec(spec + "->" + x + ",ng,ng", call);
  if (rule) mark_replicate_only(*rule, 'c');
  return rule;
}

// (grad_out, input, mean, rstd, weight?) -> (grad_input, grad_weight,
// grad_bias). A masked-out gradient ([0]) is "_" in the spec and R in the
// options; it sees no factor, so with any gradient masked the group
// sharding is written out as an extra option as well.
Expected<OpRule> native_group_norm_backward_rule(const RuleCall& call) {
  const TensorMeta& x = call.in(1);
  bool weight = call.num_inputs() == 5;
  std::array<bool, 3> masked{is_masked(call.outputs[0]), is_masked(call.outputs[1]),
                             is_masked(call.outputs[2])};
  std::string spec = grouped(x) + "," + grouped(x) + ",ng,ng" + (weight ? ",(gc)" : "") + "->" +
                     (masked[0] ? "_" : grouped(x)) + (masked[1] ? ",_" : ",(gc)") +
                     (masked[2] ? ",_" : ",(gc)");
  Expected<OpRule> rule = rule_from_spec(spec, call);
  if (!rule) return rule;
  mark_replicate_only(*rule, 'n');
  mark_replicate_only(*rule, 'c');
  add_linear(*rule, {0});
  auto out = [&](size_t o, std::string_view on) { return masked[o] ? std::string("R") : std::string(on); };
  std::vector<std::string> options = {"S(0)S(0)S(0)S(0)" + std::string(weight ? "R" : "") + "->" +
                                      out(0, "S(0)") + out(1, "P") + out(2, "P")};
  if (masked[0] || masked[1] || masked[2]) {
    options.push_back("S(1)S(1)S(1)S(1)" + std::string(weight ? "S(0)" : "") + "->" +
                      out(0, "S(1)") + out(1, "S(0)") + out(2, "S(0)"));
  }
  for (const std::string& option : options) {
    if (Status s = add_extra(*rule, option); !s) return s.error();
  }
  return rule;
}

}  // namespace autopar::sharding_rules
