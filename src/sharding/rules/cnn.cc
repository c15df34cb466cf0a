// Convolution, batch norm and max pooling (NCHW), with their backward ops.
//
// Spatial dims are never sharded: a shard of H would need a halo of
// neighbouring rows for every window that crosses the cut. The batch dim and
// the channel dims are sharded where each device can compute its part alone:
//   convolution     batch; output channels (weight dim 0); input channels as
//                   a contraction (output Partial, the bias Partial with it);
//                   depthwise convs shard their one channel dim.
//   batch norm      channels only. In training mode the statistics are over
//                   the batch and spatial dims, so a batch shard would
//                   normalize with its own shard's mean and variance: wrong.
//                   (Eval mode normalizes with the running statistics and
//                   may shard the batch.)
//   max pooling     batch and channels (indices are offsets within one plane).
// An output that an output_mask turns off is an empty [0] tensor: Replicate.
#include "sharding/rules/builders.h"

namespace autopar::sharding_rules {
namespace {

// "nc" followed by one '_' per spatial dim.
std::string nchw(const TensorMeta& t, std::string_view lead = "nc") {
  std::string s(lead);
  for (int64_t d = 2; d < t.rank(); ++d) s += '_';
  return s;
}

// How a convolution's groups split its channels.
enum class Grouping { kDense, kDepthwise, kOther };

Grouping grouping(const RuleCall& call, int weight_input) {
  int64_t groups = call.attrs.get_int("groups");
  if (groups == 1) return Grouping::kDense;
  const TensorMeta& w = call.in(weight_input);
  // Depthwise: one input and one output channel per group, so channel i of
  // the input feeds exactly channel i of the output.
  if (w.shape[0] == groups && w.shape[1] == 1) return Grouping::kDepthwise;
  return Grouping::kOther;
}

// Placement text of one output for an extra option: `on` unless masked.
std::string out_place(const RuleCall& call, int o, std::string_view on) {
  return is_masked(call.outputs[static_cast<size_t>(o)]) ? "R" : std::string(on);
}

}  // namespace

// (input, weight, bias?) -> output.
Expected<OpRule> convolution_rule(const RuleCall& call) {
  bool bias = call.num_inputs() == 3;
  Grouping g = grouping(call, 1);
  std::string x = g == Grouping::kDense ? "nc__" : g == Grouping::kDepthwise ? "nd__" : "n___";
  std::string w = g == Grouping::kDense ? "oc__" : g == Grouping::kDepthwise ? "d1__" : "____";
  std::string b = g == Grouping::kDense ? "o" : g == Grouping::kDepthwise ? "d" : "_";
  std::string out = g == Grouping::kDense ? "no__" : g == Grouping::kDepthwise ? "nd__" : "n___";
  Expected<OpRule> rule = rule_from_spec(x + "," + w + (bias ? "," + b : "") + "->" + out, call);
  if (!rule) return rule;
  if (bias) {
    // Under the input-channel contraction each device adds its Partial share
    // of the bias, so the sum adds it once.
    rule->additive_inputs = 1u << 2;
    add_linear(*rule, {0, 2});
    add_linear(*rule, {1, 2});
  } else {
    add_linear(*rule, {0});
    add_linear(*rule, {1});
  }
  return rule;
}

// (grad_output, input, weight) -> (grad_input, grad_weight, grad_bias). The
// weight and bias gradients sum over the batch and grad_input sums over the
// output channels, so no factor passes through all three outputs: the options
// are written out.
Expected<OpRule> convolution_backward_rule(const RuleCall& call) {
  Grouping g = grouping(call, 2);
  std::string gb = is_masked(call.outputs[2]) ? "_" : "o";
  std::string spec = "no__,nc__,oc__->" + std::string(is_masked(call.outputs[0]) ? "_" : "nc__") +
                     "," + (is_masked(call.outputs[1]) ? "_" : "oc__") + "," + gb;
  Expected<OpRule> rule = rule_from_spec(spec, call);
  if (!rule) return rule;
  for (char f : {'n', 'o', 'c'}) mark_replicate_only(*rule, f);
  add_linear(*rule, {0});
  std::vector<std::string> options = {
      // batch: grad_input sharded; weight and bias gradients are per-shard sums.
      "S(0)S(0)R->" + out_place(call, 0, "S(0)") + out_place(call, 1, "P") + out_place(call, 2, "P")};
  if (g == Grouping::kDense) {
    // output channels: grad_input sums over them.
    options.push_back("S(1)RS(0)->" + out_place(call, 0, "P") + out_place(call, 1, "S(0)") +
                      out_place(call, 2, "S(0)"));
    // input channels: the bias gradient needs only grad_output, held whole.
    options.push_back("RS(1)S(1)->" + out_place(call, 0, "S(1)") + out_place(call, 1, "S(1)") +
                      out_place(call, 2, "R"));
  } else if (g == Grouping::kDepthwise) {
    options.push_back("S(1)S(1)S(0)->" + out_place(call, 0, "S(1)") + out_place(call, 1, "S(0)") +
                      out_place(call, 2, "S(0)"));
  }
  for (const std::string& option : options) {
    if (Status s = add_extra(*rule, option); !s) return s.error();
  }
  return rule;
}

// (input, weight, bias, [running_mean, running_var]) -> (output, save_mean,
// save_invstd).
Expected<OpRule> native_batch_norm_rule(const RuleCall& call) {
  const TensorMeta& x = call.in(0);
  bool training = call.attrs.get_bool("training");
  std::string spec = nchw(x);
  for (int i = 1; i < call.num_inputs(); ++i) spec += ",c";
  std::string stat = training ? "c" : "_";
  spec += "->" + nchw(x) + "," + stat + "," + stat;
  Expected<OpRule> rule = rule_from_spec(spec, call);
  if (!rule) return rule;
  mark_replicate_only(*rule, 'n');
  if (training) {
    // SyncBatchNorm: a batch shard, with the statistics all-reduced by the op
    // (a sum, then a centred sum of squares: two [C] all-reduces).
    std::string whole(static_cast<size_t>(call.num_inputs() - 1), 'R');
    if (Status s = add_extra(*rule, "S(0)" + whole + "->S(0)RR", /*sync=*/true); !s) return s.error();
    rule->sync = {call.num_inputs() + 1, {1, 1}};
  }
  if (!training) {
    // The saved statistics are empty ([0]), so both options are written out.
    size_t stats = static_cast<size_t>(call.num_inputs() - 1);
    std::string channel;
    for (size_t i = 0; i < stats; ++i) channel += "S(0)";
    for (std::string option : {"S(0)" + std::string(stats, 'R') + "->S(0)RR",
                               "S(1)" + channel + "->S(1)RR"}) {
      if (Status s = add_extra(*rule, option); !s) return s.error();
    }
  }
  return rule;
}

// (grad_out, input, weight, [running_mean, running_var,] save_mean,
// save_invstd) -> (grad_input, grad_weight, grad_bias). Per channel
// independent; linear in grad_out (the batch statistics come in as inputs).
Expected<OpRule> native_batch_norm_backward_rule(const RuleCall& call) {
  const TensorMeta& x = call.in(1);
  std::string spec = nchw(x) + "," + nchw(x);
  for (int i = 2; i < call.num_inputs(); ++i) spec += ",c";
  spec += "->" + (is_masked(call.outputs[0]) ? std::string("_") : nchw(x));
  for (size_t o = 1; o < 3; ++o) spec += is_masked(call.outputs[o]) ? ",_" : ",c";
  Expected<OpRule> rule = rule_from_spec(spec, call);
  if (!rule) return rule;
  mark_replicate_only(*rule, 'n');
  add_linear(*rule, {0});
  if (call.attrs.get_bool("train")) {
    // SyncBatchNorm's backward: grad_input needs the sums of grad_out and of
    // grad_out * x_hat over the whole batch (one [2, C] all-reduce), which are
    // also the weight and bias gradients.
    std::string whole(static_cast<size_t>(call.num_inputs() - 2), 'R');
    std::string grad_input = is_masked(call.outputs[0]) ? "R" : "S(0)";
    if (Status s = add_extra(*rule, "S(0)S(0)" + whole + "->" + grad_input + "RR", /*sync=*/true);
        !s) {
      return s.error();
    }
    rule->sync = {call.num_inputs() - 2, {2}};  // units of save_mean ([C])
  }
  return rule;
}

Expected<OpRule> max_pool2d_with_indices_rule(const RuleCall& call) {
  std::string x = nchw(call.in(0));
  return rule_from_spec(x + "->" + x + "," + x, call);
}

// (grad_output, input, indices) -> grad_input: a scatter of grad_output.
Expected<OpRule> max_pool2d_with_indices_backward_rule(const RuleCall& call) {
  std::string x = nchw(call.in(1));
  Expected<OpRule> rule = rule_from_spec(x + "," + x + "," + x + "->" + x, call);
  if (rule) add_linear(*rule, {0});
  return rule;
}

}  // namespace autopar::sharding_rules
