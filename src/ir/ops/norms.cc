// PyTorch import: group norm (native_group_norm and its backward), as the
// model zoo's UNet and some detection-style heads use it. The input is
// [N, C, *]; its C channels form `group` groups of C / group consecutive
// channels, each normalized over its channels and all trailing dims, per
// sample. N, C and HxW repeat the input's sizes as attributes (aten's
// schema); the shape rules check that they agree with the input.
#include "ir/ops/rules.h"

namespace autopar::rules {
namespace {

// Checks N, C, HxW and group against the input [N, C, *].
Status check_group_attrs(const Attrs& attrs, const TensorMeta& x, std::string_view what) {
  if (x.rank() < 2) return make_error("{} input must be [N, C, ...], got {}", what, to_string(x));
  int64_t hxw = 1;
  for (size_t d = 2; d < x.shape.size(); ++d) hxw *= x.shape[d];
  int64_t n = attrs.get_int("N"), c = attrs.get_int("C"), group = attrs.get_int("group");
  if (n != x.shape[0] || c != x.shape[1] || attrs.get_int("HxW") != hxw) {
    return make_error("{} N={}, C={}, HxW={} do not describe the input {} (HxW = {})", what, n, c,
                      attrs.get_int("HxW"), to_string(x), hxw);
  }
  if (group <= 0 || c % group != 0) {
    return make_error("{} group={} must divide C={}", what, group, c);
  }
  return ok_status();
}

}  // namespace

// (input, weight?, bias?) -> (out, mean [N, group], rstd [N, group]). Weight
// and bias come together (nn.GroupNorm's affine) or not at all.
Outputs native_group_norm_shape(const OpCall& call) {
  const TensorMeta& x = call.in(0);
  if (Status s = check_group_attrs(call.attrs, x, "native_group_norm"); !s) return s.error();
  if (call.num_inputs() == 2) {
    return make_error("native_group_norm takes input, or input, weight and bias (1 or 3 inputs), "
                      "got 2");
  }
  for (int i = 1; i < call.num_inputs(); ++i) {
    if (Status s = require_channel_vector(call.in(i), x.shape[1], i == 1 ? "native_group_norm weight"
                                                                  : "native_group_norm bias");
        !s) {
      return s.error();
    }
  }
  TensorMeta stat{{x.shape[0], call.attrs.get_int("group")}, x.dtype};
  return std::vector<TensorMeta>{x, stat, stat};
}

// (grad_out, input, mean, rstd, weight?) -> (grad_input, grad_weight [C],
// grad_bias [C]); a gradient the output_mask turns off is [0]. Without a
// weight there are no weight or bias gradients (aten refuses them).
Outputs native_group_norm_backward_shape(const OpCall& call) {
  const TensorMeta& grad = call.in(0);
  const TensorMeta& x = call.in(1);
  if (Status s = check_group_attrs(call.attrs, x, "native_group_norm_backward"); !s) return s.error();
  Shape stat{x.shape[0], call.attrs.get_int("group")};
  if (grad.shape != x.shape || call.in(2).shape != stat || call.in(3).shape != stat) {
    return make_error("native_group_norm_backward grad_out {} must be the input {} and mean/rstd "
                      "{} / {} must be {}",
                      to_string(grad), to_string(x), to_string(call.in(2)), to_string(call.in(3)),
                      shape_to_string(stat));
  }
  std::vector<bool> mask = output_mask(call.attrs);
  bool weight = call.num_inputs() == 5;
  if (weight) {
    if (Status s = require_channel_vector(call.in(4), x.shape[1], "native_group_norm_backward weight"); !s) {
      return s.error();
    }
  } else if (mask[1] || mask[2]) {
    return make_error("native_group_norm_backward without weight gives no weight or bias "
                      "gradients; output_mask must be [1, 0, 0] or [0, 0, 0]");
  }
  TensorMeta channel{{x.shape[1]}, x.dtype};
  return std::vector<TensorMeta>{masked(mask[0], x), masked(mask[1], channel),
                                 masked(mask[2], channel)};
}

// Statistics (sum, sum of squares: ~3 per element), normalize and affine
// (~5 per element), as layer norm.
double group_norm_flops(const OpCall& call, Metas) {
  return 8.0 * static_cast<double>(call.in(0).numel());
}

// Two reductions per group and channel (sum of dy, sum of dy * x) and the
// input gradient: about 8 per element, as batch norm's backward.
double group_norm_backward_flops(const OpCall& call, Metas) {
  return 8.0 * static_cast<double>(call.in(1).numel());
}

}  // namespace autopar::rules
