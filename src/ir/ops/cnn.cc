// Convolution, batch norm, max pooling and hardtanh (relu6), with their
// backward ops: what torchvision CNNs (resnet18, mobilenet_v2) produce when a
// training step is traced with make_fx. They appear only in imported joint
// graphs (autopar's own autodiff has no rule for them).
//
// Layout is NCHW. Attribute names are the aten schema's argument names. An
// output that an output_mask turns off (PyTorch returns None there) is an
// empty tensor of shape [0], so the output list keeps its positions.
#include <cmath>

#include "ir/ops/rules.h"

namespace autopar::rules {
namespace {

constexpr int64_t kSpatialDims = 2;  // conv2d / max_pool2d only

}  // namespace

// An int[2] argument; aten also accepts one int for both dims.
Expected<std::vector<int64_t>> pair_attr(const Attrs& attrs, std::string_view name,
                                         std::vector<int64_t> fallback) {
  std::vector<int64_t> v = attrs.has(name) ? attrs.get_ints(name) : fallback;
  if (v.empty()) v = fallback;
  if (v.size() == 1) v.push_back(v[0]);
  if (v.size() != kSpatialDims) {
    return make_error("'{}' must have 1 or 2 values, got {}", name, v.size());
  }
  return v;
}

// floor((in + 2p - d(k-1) - 1) / s) + 1; with ceil_mode the division rounds up,
// but the last window must still start inside the input or its left padding.
Expected<int64_t> window_out(int64_t in, const Window& w, size_t d, bool ceil_mode) {
  // Far beyond any real window, and small enough that nothing below overflows
  // int64 whatever a graph file gives (|span| < 2^61 + 2^32 + 2^62).
  constexpr int64_t kMaxAttr = int64_t{1} << 31, kMaxIn = int64_t{1} << 61;
  bool too_large = in > kMaxIn;
  for (int64_t v : {w.kernel[d], w.padding[d], w.dilation[d], w.stride[d]}) {
    too_large = too_large || v < -kMaxAttr || v > kMaxAttr;
  }
  if (too_large) {
    return make_error("spatial dim {} of size {}: kernel {}, padding {}, dilation {} or stride {} "
                      "is beyond 2^31 (or the size beyond 2^61)",
                      d, in, w.kernel[d], w.padding[d], w.dilation[d], w.stride[d]);
  }
  int64_t span = in + 2 * w.padding[d] - w.dilation[d] * (w.kernel[d] - 1) - 1;
  if (w.stride[d] <= 0 || span < 0) {
    return make_error("spatial dim {} of size {} is too small for kernel {} (padding {}, "
                      "dilation {}, stride {})",
                      d, in, w.kernel[d], w.padding[d], w.dilation[d], w.stride[d]);
  }
  int64_t out = (ceil_mode ? (span + w.stride[d] - 1) / w.stride[d] : span / w.stride[d]) + 1;
  if (ceil_mode && (out - 1) * w.stride[d] >= in + w.padding[d]) --out;
  return out;
}

namespace {

Expected<Shape> conv_out_shape(const OpCall& call, const TensorMeta& x, const TensorMeta& w) {
  if (Status s = require_rank(x, 4, "convolution input (NCHW)"); !s) return s.error();
  if (Status s = require_rank(w, 4, "convolution weight (OIHW)"); !s) return s.error();
  if (call.attrs.has("transposed") && call.attrs.get_bool("transposed")) {
    return make_error("transposed convolution is not supported (only conv2d)");
  }
  int64_t groups = call.attrs.get_int("groups");
  // C == weight dim 1 * groups, without a product that could overflow.
  if (groups <= 0 || x.shape[1] % groups != 0 || x.shape[1] / groups != w.shape[1] ||
      w.shape[0] % groups != 0) {
    return make_error("input {} and weight {} do not fit groups={} (need C == weight dim 1 * "
                      "groups and O divisible by groups)",
                      to_string(x), to_string(w), groups);
  }
  Window win{{w.shape[2], w.shape[3]}, {}, {}, {}};
  for (auto [field, name, fallback] : {std::tuple{&win.stride, "stride", int64_t{1}},
                                       std::tuple{&win.padding, "padding", int64_t{0}},
                                       std::tuple{&win.dilation, "dilation", int64_t{1}}}) {
    Expected<std::vector<int64_t>> v = pair_attr(call.attrs, name, {fallback});
    if (!v) return v.error();
    *field = std::move(*v);
  }
  Shape out{x.shape[0], w.shape[0], 0, 0};
  for (size_t d = 0; d < kSpatialDims; ++d) {
    Expected<int64_t> o = window_out(x.shape[2 + d], win, d, /*ceil_mode=*/false);
    if (!o) return o.error();
    out[2 + d] = *o;
  }
  return out;
}

}  // namespace

Expected<Window> pool_window(const Attrs& attrs) {
  Window win;
  Expected<std::vector<int64_t>> k = pair_attr(attrs, "kernel_size", {});
  if (!k) return k.error();
  win.kernel = *k;
  Expected<std::vector<int64_t>> s = pair_attr(attrs, "stride", win.kernel);  // [] = kernel
  Expected<std::vector<int64_t>> p = pair_attr(attrs, "padding", {0});
  Expected<std::vector<int64_t>> d = pair_attr(attrs, "dilation", {1});
  if (!s) return s.error();
  if (!p) return p.error();
  if (!d) return d.error();
  win.stride = *s, win.padding = *p, win.dilation = *d;
  return win;
}

namespace {

Expected<Shape> pool_out_shape(const OpCall& call, const TensorMeta& x) {
  if (Status s = require_rank(x, 4, "max_pool2d input (NCHW)"); !s) return s.error();
  Expected<Window> win = pool_window(call.attrs);
  if (!win) return win.error();
  bool ceil_mode = call.attrs.has("ceil_mode") && call.attrs.get_bool("ceil_mode");
  Shape out = x.shape;
  for (size_t d = 0; d < kSpatialDims; ++d) {
    Expected<int64_t> o = window_out(x.shape[2 + d], *win, d, ceil_mode);
    if (!o) return o.error();
    out[2 + d] = *o;
  }
  return out;
}

// Multiply-adds per output element: (C / groups) * KH * KW.
double conv_macs_per_output(const TensorMeta& w) {
  return static_cast<double>(w.shape[1] * w.shape[2] * w.shape[3]);
}

}  // namespace

// (input [N,C,H,W], weight [O,C/g,KH,KW], bias [O]?) -> [N,O,OH,OW].
Outputs convolution_shape(const OpCall& call) {
  const TensorMeta& x = call.in(0);
  const TensorMeta& w = call.in(1);
  Expected<Shape> out = conv_out_shape(call, x, w);
  if (!out) return out.error();
  if (call.num_inputs() == 3) {
    if (Status s = require_channel_vector(call.in(2), w.shape[0], "convolution bias"); !s) {
      return s.error();
    }
  }
  if (Status s = require_same_dtype(x, w, "convolution input and weight"); !s) return s.error();
  return one({*out, x.dtype});
}

// 2 * MACs, plus one add per output element for the bias.
double convolution_flops(const OpCall& call, Metas outputs) {
  double out = static_cast<double>(outputs[0].numel());
  return 2.0 * out * conv_macs_per_output(call.in(1)) + (call.num_inputs() == 3 ? out : 0.0);
}

// (grad_output [N,O,OH,OW], input, weight) -> (grad_input, grad_weight,
// grad_bias [bias_sizes]).
Outputs convolution_backward_shape(const OpCall& call) {
  const TensorMeta& grad = call.in(0);
  const TensorMeta& x = call.in(1);
  const TensorMeta& w = call.in(2);
  Expected<Shape> out = conv_out_shape(call, x, w);
  if (!out) return out.error();
  if (grad.shape != *out) {
    return make_error("convolution_backward grad_output {} must be the forward output {}",
                      to_string(grad), shape_to_string(*out));
  }
  std::vector<int64_t> bias = call.attrs.has("bias_sizes") ? call.attrs.get_ints("bias_sizes")
                                                            : std::vector<int64_t>{w.shape[0]};
  std::vector<bool> mask = output_mask(call.attrs);
  if (mask[2] && (bias.size() != 1 || bias[0] != w.shape[0])) {
    return make_error("convolution_backward bias_sizes must be [{}] when the bias gradient is "
                      "wanted, got {}",
                      w.shape[0], shape_to_string(bias));
  }
  return std::vector<TensorMeta>{masked(mask[0], x), masked(mask[1], w),
                                 masked(mask[2], {{w.shape[0]}, grad.dtype})};
}

// Each gradient of input and weight is a convolution as large as the
// forward's; the bias gradient one add per grad_output element.
double convolution_backward_flops(const OpCall& call, Metas) {
  std::vector<bool> mask = output_mask(call.attrs);
  double forward = 2.0 * static_cast<double>(call.in(0).numel()) * conv_macs_per_output(call.in(2));
  return (mask[0] ? forward : 0.0) + (mask[1] ? forward : 0.0) +
         (mask[2] ? static_cast<double>(call.in(0).numel()) : 0.0);
}

// (input [N,C,...], weight [C], bias [C], running_mean [C]?, running_var [C]?)
// -> (output, save_mean, save_invstd). Training mode saves the batch
// statistics ([C] each); eval mode saves none ([0]). Weight and bias are
// required (affine=True, as torchvision builds it); running stats come as a pair.
Outputs native_batch_norm_shape(const OpCall& call) {
  const TensorMeta& x = call.in(0);
  if (x.rank() < 2) return make_error("native_batch_norm input must be [N, C, ...], got {}", to_string(x));
  if (call.num_inputs() != 3 && call.num_inputs() != 5) {
    return make_error("native_batch_norm takes input, weight, bias and optionally running_mean "
                      "and running_var (3 or 5 inputs), got {}",
                      call.num_inputs());
  }
  for (int i = 1; i < call.num_inputs(); ++i) {
    if (Status s = require_channel_vector(call.in(i), x.shape[1], "native_batch_norm input " +
                                                                      std::to_string(i));
        !s) {
      return s.error();
    }
  }
  bool training = call.attrs.get_bool("training");
  if (!training && call.num_inputs() != 5) {
    return make_error("native_batch_norm in eval mode needs running_mean and running_var");
  }
  TensorMeta stat{{training ? x.shape[1] : 0}, x.dtype};
  return std::vector<TensorMeta>{x, stat, stat};
}

// Statistics (sum, sum of squares: ~3 per element) and the affine normalize
// (~4 per element).
double native_batch_norm_flops(const OpCall& call, Metas) {
  return 7.0 * static_cast<double>(call.in(0).numel());
}

// (grad_out, input, weight, [running_mean, running_var,] save_mean,
// save_invstd) -> (grad_input, grad_weight [C], grad_bias [C]).
Outputs native_batch_norm_backward_shape(const OpCall& call) {
  const TensorMeta& grad = call.in(0);
  const TensorMeta& x = call.in(1);
  if (x.rank() < 2 || grad.shape != x.shape) {
    return make_error("native_batch_norm_backward grad_out {} and input {} must be one [N, C, "
                      "...] shape",
                      to_string(grad), to_string(x));
  }
  if (call.num_inputs() != 5 && call.num_inputs() != 7) {
    return make_error("native_batch_norm_backward takes grad_out, input, weight, optionally "
                      "running_mean and running_var, save_mean and save_invstd (5 or 7 inputs), "
                      "got {}",
                      call.num_inputs());
  }
  for (int i = 2; i < call.num_inputs(); ++i) {
    if (Status s = require_channel_vector(call.in(i), x.shape[1],
                                          "native_batch_norm_backward input " + std::to_string(i));
        !s) {
      return s.error();
    }
  }
  std::vector<bool> mask = output_mask(call.attrs);
  TensorMeta channel{{x.shape[1]}, x.dtype};
  return std::vector<TensorMeta>{masked(mask[0], x), masked(mask[1], channel),
                                 masked(mask[2], channel)};
}

// Two reductions (sum of grad, sum of grad * xhat) and the input gradient:
// about 8 per element.
double native_batch_norm_backward_flops(const OpCall& call, Metas) {
  return 8.0 * static_cast<double>(call.in(1).numel());
}

// input -> (output, indices i64): indices are flat offsets into each H*W plane.
Outputs max_pool2d_with_indices_shape(const OpCall& call) {
  Expected<Shape> out = pool_out_shape(call, call.in(0));
  if (!out) return out.error();
  return std::vector<TensorMeta>{{*out, call.in(0).dtype}, {*out, DType::i64}};
}

// One comparison per window element of every output.
double max_pool2d_flops(const OpCall& call, Metas outputs) {
  Expected<Window> win = pool_window(call.attrs);
  double window = win ? static_cast<double>(win->kernel[0] * win->kernel[1]) : 1.0;
  return window * static_cast<double>(outputs[0].numel());
}

// (grad_output, input, indices) -> grad_input (the input's shape).
Outputs max_pool2d_with_indices_backward_shape(const OpCall& call) {
  const TensorMeta& grad = call.in(0);
  const TensorMeta& x = call.in(1);
  const TensorMeta& indices = call.in(2);
  Expected<Shape> out = pool_out_shape(call, x);
  if (!out) return out.error();
  if (grad.shape != *out || indices.shape != *out || indices.dtype != DType::i64) {
    return make_error("max_pool2d_with_indices_backward grad_output {} and indices {} must be "
                      "the forward output {} (indices i64)",
                      to_string(grad), to_string(indices), shape_to_string(*out));
  }
  return one(x);
}

// One scatter-add per grad_output element.
double max_pool2d_backward_flops(const OpCall& call, Metas) {
  return static_cast<double>(call.in(0).numel());
}

}  // namespace autopar::rules
