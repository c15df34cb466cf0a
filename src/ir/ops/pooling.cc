// PyTorch import: average pooling, adaptive average pooling and 2-D upsampling
// (nearest, bilinear), with their backward ops: the classifier heads of the
// model zoo (adaptive pooling to 1x1), densenet's and inception's average
// pooling, UNet's upsampling. The pooled dims are the last two ([N, C, H, W];
// the pooling ops also take [C, H, W]). Each op counts the work of its
// windows: one add per window element, one divide (or interpolation) per
// output.
#include "ir/ops/rules.h"

namespace autopar::rules {
namespace {

Status require_image(const TensorMeta& x, std::string_view what, bool allow_chw) {
  if (x.rank() == 4 || (allow_chw && x.rank() == 3)) return ok_status();
  return make_error("{} must be {}, got {}", what,
                    allow_chw ? "[N, C, H, W] or [C, H, W]" : "[N, C, H, W]", to_string(x));
}

Shape with_plane(Shape shape, int64_t h, int64_t w) {
  shape[shape.size() - 2] = h;
  shape[shape.size() - 1] = w;
  return shape;
}

// Elements of all but the last two dims (the planes).
double planes(const TensorMeta& t) {
  double n = 1;
  for (int64_t d = 0; d + 2 < t.rank(); ++d) n *= static_cast<double>(t.shape[static_cast<size_t>(d)]);
  return n;
}

Expected<Shape> avg_pool_out(const OpCall& call, const TensorMeta& x) {
  if (Status s = require_image(x, "avg_pool2d input", /*allow_chw=*/true); !s) return s.error();
  Expected<Window> win = pool_window(call.attrs);
  if (!win) return win.error();
  for (size_t d = 0; d < 2; ++d) {
    if (win->kernel[d] <= 0 || win->padding[d] > win->kernel[d] / 2) {  // 2p > k, without overflow
      return make_error("avg_pool2d kernel_size {} and padding {} must be positive with padding at "
                        "most half the kernel",
                        shape_to_string(win->kernel), shape_to_string(win->padding));
    }
  }
  bool ceil_mode = call.attrs.has("ceil_mode") && call.attrs.get_bool("ceil_mode");
  int64_t plane[2];
  for (size_t d = 0; d < 2; ++d) {
    Expected<int64_t> o = window_out(x.shape[x.shape.size() - 2 + d], *win, d, ceil_mode);
    if (!o) return o.error();
    plane[d] = *o;
  }
  return with_plane(x.shape, plane[0], plane[1]);
}

double avg_pool_window(const Attrs& attrs) {
  Expected<Window> win = pool_window(attrs);
  return win ? static_cast<double>(win->kernel[0] * win->kernel[1]) : 1.0;
}

// Sum over the adaptive windows of one dim of their lengths: window i spans
// [floor(i * in / out), ceil((i + 1) * in / out)).
double adaptive_spans(int64_t in, int64_t out) {
  double sum = 0;
  for (int64_t i = 0; i < out; ++i) {
    sum += static_cast<double>((((i + 1) * in + out - 1) / out) - (i * in / out));
  }
  return sum;
}

// Window work of adaptive pooling from `in` planes to `out` planes.
double adaptive_work(const TensorMeta& in, const TensorMeta& out) {
  size_t h = in.shape.size() - 2, w = in.shape.size() - 1;
  return planes(in) * adaptive_spans(in.shape[h], out.shape[h]) *
             adaptive_spans(in.shape[w], out.shape[w]) +
         static_cast<double>(out.numel());
}

// The upsampled plane of an [.., H, W] input: output_size, or each dim times
// its scale factor (truncated, as aten does). Exactly one of them is given.
Expected<Shape> upsample_out(const Attrs& attrs, const Shape& in) {
  bool sized = attrs.has("output_size");
  if (sized == attrs.has("scale_factors")) {
    return make_error("upsampling needs exactly one of output_size and scale_factors");
  }
  int64_t plane[2];
  if (sized) {
    const std::vector<int64_t>& size = attrs.get_ints("output_size");
    if (size.size() != 2 || size[0] <= 0 || size[1] <= 0) {
      return make_error("output_size must be two positive sizes, got {}", shape_to_string(size));
    }
    plane[0] = size[0], plane[1] = size[1];
  } else {
    const std::vector<double>& scale = attrs.get_floats("scale_factors");
    if (scale.size() != 2) return make_error("scale_factors must have 2 values, got {}", scale.size());
    for (size_t d = 0; d < 2; ++d) {
      plane[d] = static_cast<int64_t>(static_cast<double>(in[2 + d]) * scale[d]);
    }
    if (plane[0] <= 0 || plane[1] <= 0) {
      return make_error("scale_factors [{}, {}] give an empty output for {}", scale[0], scale[1],
                        shape_to_string(in));
    }
  }
  return with_plane(in, plane[0], plane[1]);
}

// A backward op's grad must be what the forward gave for `input`.
Status require_grad_shape(const TensorMeta& grad, const Shape& expect, std::string_view what) {
  if (grad.shape == expect) return ok_status();
  return make_error("{} grad_output {} must be the forward output {}", what, to_string(grad),
                    shape_to_string(expect));
}

}  // namespace

Outputs avg_pool2d_shape(const OpCall& call) {
  Expected<Shape> out = avg_pool_out(call, call.in(0));
  if (!out) return out.error();
  return one({*out, call.in(0).dtype});
}

// (grad_output, self) -> grad_self.
Outputs avg_pool2d_backward_shape(const OpCall& call) {
  Expected<Shape> out = avg_pool_out(call, call.in(1));
  if (!out) return out.error();
  if (Status s = require_grad_shape(call.in(0), *out, "avg_pool2d_backward"); !s) return s.error();
  return one(call.in(1));
}

// One add per window element, one divide per output.
double avg_pool2d_flops(const OpCall& call, Metas outputs) {
  return (avg_pool_window(call.attrs) + 1.0) * out_numel(outputs);
}

// Each grad_output element is divided and added to its window.
double avg_pool2d_backward_flops(const OpCall& call, Metas) {
  return (avg_pool_window(call.attrs) + 1.0) * static_cast<double>(call.in(0).numel());
}

Outputs adaptive_avg_pool2d_shape(const OpCall& call) {
  const TensorMeta& x = call.in(0);
  if (Status s = require_image(x, "_adaptive_avg_pool2d input", /*allow_chw=*/true); !s) {
    return s.error();
  }
  std::vector<int64_t> size = call.attrs.get_ints("output_size");
  if (size.size() == 1) size.push_back(size[0]);
  if (size.size() != 2 || size[0] <= 0 || size[1] <= 0) {
    return make_error("_adaptive_avg_pool2d output_size must be two positive sizes, got {}",
                      shape_to_string(size));
  }
  return one({with_plane(x.shape, size[0], size[1]), x.dtype});
}

// (grad_output, self) -> grad_self; the pooled size is the grad's.
Outputs adaptive_avg_pool2d_backward_shape(const OpCall& call) {
  const TensorMeta& grad = call.in(0);
  const TensorMeta& x = call.in(1);
  if (Status s = require_image(x, "_adaptive_avg_pool2d_backward self", true); !s) return s.error();
  Shape expect = with_plane(x.shape, grad.rank() == x.rank() ? grad.shape[grad.shape.size() - 2] : 0,
                            grad.rank() == x.rank() ? grad.shape.back() : 0);
  if (Status s = require_grad_shape(grad, expect, "_adaptive_avg_pool2d_backward"); !s) {
    return s.error();
  }
  return one(x);
}

double adaptive_avg_pool2d_flops(const OpCall& call, Metas outputs) {
  return adaptive_work(call.in(0), outputs[0]);
}

double adaptive_avg_pool2d_backward_flops(const OpCall& call, Metas) {
  return adaptive_work(call.in(1), call.in(0));
}

// upsample_nearest2d.vec and upsample_bilinear2d.vec: input [N, C, H, W].
Outputs upsample2d_shape(const OpCall& call) {
  const TensorMeta& x = call.in(0);
  if (Status s = require_image(x, "upsampling input", /*allow_chw=*/false); !s) return s.error();
  Expected<Shape> out = upsample_out(call.attrs, x.shape);
  if (!out) return out.error();
  return one({*out, x.dtype});
}

// (grad_output) with input_size, the forward input's full shape -> grad_input.
Outputs upsample2d_backward_shape(const OpCall& call) {
  const std::vector<int64_t>& input_size = call.attrs.get_ints("input_size");
  if (input_size.size() != 4) {
    return make_error("upsampling backward input_size must be [N, C, H, W], got {}",
                      shape_to_string(input_size));
  }
  Expected<Shape> out = upsample_out(call.attrs, input_size);
  if (!out) return out.error();
  if (Status s = require_grad_shape(call.in(0), *out, "upsampling backward"); !s) return s.error();
  return one({input_size, call.in(0).dtype});
}

// Nearest: one index computation and copy per output; its backward one add
// per grad_output element. Bilinear: 4 reads and 3 lerps (about 8 FLOPs) per
// output, and as many per grad_output element backward.
double upsample_nearest2d_flops(const OpCall&, Metas outputs) { return out_numel(outputs); }
double upsample_bilinear2d_flops(const OpCall&, Metas outputs) { return 8.0 * out_numel(outputs); }
double upsample_nearest2d_backward_flops(const OpCall& call, Metas) {
  return static_cast<double>(call.in(0).numel());
}
double upsample_bilinear2d_backward_flops(const OpCall& call, Metas) {
  return 8.0 * static_cast<double>(call.in(0).numel());
}

}  // namespace autopar::rules
