// PyTorch import: transformer ops. What make_fx emits for nn.TransformerEncoderLayer,
// nn.LayerNorm, GELU MLPs and torchvision's ViT that the built-in models never
// needed: cat, gelu, layer norm, permute, select, slice, softmax, and their
// backward ops. They appear only in imported joint graphs (no autodiff rule).
#include <algorithm>

#include "ir/ops/rules.h"

namespace autopar::rules {
namespace {

// The "dim" attribute (default 0, as aten's cat has it).
Expected<int64_t> dim_attr(const OpCall& call, const TensorMeta& t, std::string_view what) {
  int64_t dim = normalize_dim(call.attrs.get_int_or("dim", 0), t.rank());
  if (dim < 0) {
    return make_error("{} dim {} is out of range for {}", what, call.attrs.get_int_or("dim", 0),
                      to_string(t));
  }
  return dim;
}

// Rows before the normalized dims of a layer norm; error when the trailing
// dims of `x` are not normalized_shape.
Expected<int64_t> layer_norm_axis(const OpCall& call, const TensorMeta& x) {
  const std::vector<int64_t>& norm = call.attrs.get_ints("normalized_shape");
  int64_t axis = x.rank() - static_cast<int64_t>(norm.size());
  if (axis < 0 || !std::equal(norm.begin(), norm.end(), x.shape.begin() + axis)) {
    return make_error("normalized_shape {} is not the trailing dims of {}", shape_to_string(norm),
                      to_string(x));
  }
  return axis;
}

// Full sizes from input_sizes; the grad must be `expect` of them.
Expected<Shape> backward_sizes(const OpCall& call, const Shape& expect, std::string_view what) {
  if (call.in(0).shape != expect) {
    return make_error("{} grad {} should be {}", what, to_string(call.in(0)), shape_to_string(expect));
  }
  return call.attrs.get_ints("input_sizes");
}

// The [start, end) range of a slice, clamped as aten clamps it, and its length.
int64_t slice_length(const OpCall& call, int64_t size) {
  int64_t start = call.attrs.has("start") ? call.attrs.get_int("start") : 0;
  int64_t end = call.attrs.has("end") ? call.attrs.get_int("end") : size;
  int64_t step = call.attrs.has("step") ? call.attrs.get_int("step") : 1;
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, start, size);
  if (step <= 0) return -1;
  return end == start ? 0 : (end - start - 1) / step + 1;  // ceil((end - start) / step); step may be huge
}

}  // namespace

Outputs cat_shape(const OpCall& call) {
  TensorMeta out = call.in(0);
  Expected<int64_t> dim = dim_attr(call, out, "cat");
  if (!dim) return dim.error();
  for (int i = 1; i < call.num_inputs(); ++i) {
    const TensorMeta& t = call.in(i);
    Shape a = out.shape, b = t.shape;
    if (a.size() != b.size() || t.dtype != out.dtype) {
      return make_error("cat input {} {} does not match {}", i, to_string(t), to_string(call.in(0)));
    }
    a[static_cast<size_t>(*dim)] = b[static_cast<size_t>(*dim)] = 0;
    if (a != b) return make_error("cat input {} {} differs from {} off dim {}", i, to_string(t), to_string(call.in(0)), *dim);
    int64_t& size = out.shape[static_cast<size_t>(*dim)];
    if (__builtin_add_overflow(size, t.shape[static_cast<size_t>(*dim)], &size)) {
      return make_error("cat of {} inputs along dim {} has more elements than int64 can count",
                        call.num_inputs(), *dim);
    }
  }
  return one(out);
}

Outputs native_layer_norm_shape(const OpCall& call) {
  const TensorMeta& x = call.in(0);
  Expected<int64_t> axis = layer_norm_axis(call, x);
  if (!axis) return axis.error();
  for (int i = 1; i < call.num_inputs(); ++i) {
    if (call.in(i).shape != call.attrs.get_ints("normalized_shape")) {
      return make_error("native_layer_norm weight/bias {} must be normalized_shape", to_string(call.in(i)));
    }
  }
  TensorMeta stats{x.shape, x.dtype};
  std::fill(stats.shape.begin() + *axis, stats.shape.end(), 1);
  return std::vector<TensorMeta>{x, stats, stats};
}

// (grad_out, input, mean, rstd[, weight[, bias]]) -> (grad_input, grad_weight, grad_bias).
Outputs native_layer_norm_backward_shape(const OpCall& call) {
  const TensorMeta& x = call.in(1);
  Expected<int64_t> axis = layer_norm_axis(call, x);
  if (!axis) return axis.error();
  if (call.in(0).shape != x.shape) {
    return make_error("native_layer_norm_backward grad {} and input {} differ", to_string(call.in(0)), to_string(x));
  }
  TensorMeta param{call.attrs.get_ints("normalized_shape"), x.dtype};
  return std::vector<TensorMeta>{x, param, param};
}

// mean, variance, normalize, scale, shift: about 8 per element (backward about twice).
double layer_norm_flops(const OpCall& call, Metas) {
  return 8.0 * static_cast<double>(call.in(0).numel());
}
double layer_norm_backward_flops(const OpCall& call, Metas) {
  return 16.0 * static_cast<double>(call.in(0).numel());
}

Outputs permute_shape(const OpCall& call) {
  const TensorMeta& x = call.in(0);
  std::vector<int64_t> dims = call.attrs.get_ints("dims");
  std::vector<bool> seen(static_cast<size_t>(x.rank()), false);
  if (static_cast<int64_t>(dims.size()) != x.rank()) {
    return make_error("permute dims {} do not match {}", shape_to_string(dims), to_string(x));
  }
  TensorMeta out = x;
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = normalize_dim(dims[i], x.rank());
    if (d < 0 || seen[static_cast<size_t>(d)]) {
      return make_error("permute dims {} are not a permutation of {}", shape_to_string(dims), to_string(x));
    }
    seen[static_cast<size_t>(d)] = true;
    out.shape[i] = x.shape[static_cast<size_t>(d)];
  }
  return one(out);
}

Outputs select_shape(const OpCall& call) {
  const TensorMeta& x = call.in(0);
  Expected<int64_t> dim = dim_attr(call, x, "select");
  if (!dim) return dim.error();
  int64_t index = call.attrs.get_int("index");
  int64_t size = x.shape[static_cast<size_t>(*dim)];
  if (index < -size || index >= size) {
    return make_error("select index {} is out of range for dim {} of {}", index, *dim, to_string(x));
  }
  TensorMeta out = x;
  out.shape.erase(out.shape.begin() + *dim);
  return one(out);
}

Outputs select_backward_shape(const OpCall& call) {
  Shape sizes = call.attrs.get_ints("input_sizes");
  int64_t dim = normalize_dim(call.attrs.get_int("dim"), static_cast<int64_t>(sizes.size()));
  if (dim < 0) return make_error("select_backward dim out of range for {}", shape_to_string(sizes));
  Shape expect = sizes;
  expect.erase(expect.begin() + dim);
  Expected<Shape> full = backward_sizes(call, expect, "select_backward");
  if (!full) return full.error();
  return one({*full, call.in(0).dtype});
}

Outputs slice_shape(const OpCall& call) {
  const TensorMeta& x = call.in(0);
  Expected<int64_t> dim = dim_attr(call, x, "slice");
  if (!dim) return dim.error();
  int64_t n = slice_length(call, x.shape[static_cast<size_t>(*dim)]);
  if (n < 0) return make_error("slice step must be positive, got {}", call.attrs.get_int("step"));
  TensorMeta out = x;
  out.shape[static_cast<size_t>(*dim)] = n;
  return one(out);
}

Outputs slice_backward_shape(const OpCall& call) {
  Shape sizes = call.attrs.get_ints("input_sizes");
  int64_t dim = normalize_dim(call.attrs.get_int("dim"), static_cast<int64_t>(sizes.size()));
  if (dim < 0) return make_error("slice_backward dim out of range for {}", shape_to_string(sizes));
  Shape expect = sizes;
  int64_t n = slice_length(call, sizes[static_cast<size_t>(dim)]);
  if (n < 0) return make_error("slice_backward step must be positive");
  expect[static_cast<size_t>(dim)] = n;
  Expected<Shape> full = backward_sizes(call, expect, "slice_backward");
  if (!full) return full.error();
  return one({*full, call.in(0).dtype});
}

Outputs softmax_shape(const OpCall& call) {
  Expected<int64_t> dim = dim_attr(call, call.in(0), "_softmax");
  if (!dim) return dim.error();
  return one(call.in(0));
}

Outputs softmax_backward_shape(const OpCall& call) {
  if (call.in(0).shape != call.in(1).shape) {
    return make_error("_softmax_backward_data grad {} and output {} differ", to_string(call.in(0)),
                      to_string(call.in(1)));
  }
  return one({call.in(0).shape, call.attrs.get_dtype("input_dtype")});
}

// approximate is "none" (erf) or "tanh" (aten refuses anything else).
Status check_approximate(const OpCall& call) {
  if (!call.attrs.has("approximate")) return ok_status();
  const std::string& form = call.attrs.get_string("approximate");
  if (form == "none" || form == "tanh") return ok_status();
  return make_error("gelu approximate must be 'none' or 'tanh', got '{}'", form);
}

Outputs gelu_shape(const OpCall& call) {
  if (Status s = check_approximate(call); !s) return s.error();
  return unary_shape(call);
}

Outputs gelu_backward_shape(const OpCall& call) {
  if (Status s = check_approximate(call); !s) return s.error();
  return grad_and_input_shape(call);
}

// erf GELU: about 8 per element; its backward about 12 (the tanh form costs
// about the same).
double gelu_flops(const OpCall&, Metas outputs) { return 8.0 * out_numel(outputs); }
double gelu_backward_flops(const OpCall&, Metas outputs) { return 12.0 * out_numel(outputs); }

}  // namespace autopar::rules
