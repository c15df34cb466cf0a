// Pointwise ops: one output element per (broadcast) input element.
#include "ir/ops/rules.h"

namespace autopar::rules {

Outputs binary_broadcast_shape(const OpCall& call) {
  const TensorMeta& a = call.in(0);
  const TensorMeta& b = call.in(1);
  if (Status s = require_same_dtype(a, b, "operands"); !s) return s.error();
  Expected<Shape> shape = broadcast_shapes(a.shape, b.shape);
  if (!shape) return shape.error();
  return one({*shape, a.dtype});
}

Outputs unary_shape(const OpCall& call) { return one(call.in(0)); }

Outputs grad_and_input_shape(const OpCall& call) {
  const TensorMeta& grad = call.in(0);
  const TensorMeta& x = call.in(1);
  if (grad != x) {
    return make_error("gradient {} and input {} must have one shape and dtype", to_string(grad),
                      to_string(x));
  }
  return one(grad);
}

// Integer division is true division in aten: an f32 result.
Outputs div_tensor_shape(const OpCall& call) {
  Outputs out = binary_broadcast_shape(call);
  if (out && !is_floating(out->front().dtype) && !is_complex(out->front().dtype)) {
    out->front().dtype = DType::f32;
  }
  return out;
}

// (condition bool, self, other): the three broadcast; self's dtype.
Outputs where_shape(const OpCall& call) {
  const TensorMeta& cond = call.in(0);
  if (cond.dtype != DType::boolean) {
    return make_error("where condition must be bool, got {}", to_string(cond));
  }
  if (Status s = require_same_dtype(call.in(1), call.in(2), "where self and other"); !s) {
    return s.error();
  }
  Expected<Shape> values = broadcast_shapes(call.in(1).shape, call.in(2).shape);
  if (!values) return values.error();
  Expected<Shape> shape = broadcast_shapes(cond.shape, *values);
  if (!shape) return shape.error();
  return one({*shape, call.in(1).dtype});
}

// (self, mask bool): the mask broadcasts to self, whose shape the result keeps.
Outputs masked_fill_shape(const OpCall& call) {
  const TensorMeta& self = call.in(0);
  const TensorMeta& mask = call.in(1);
  if (mask.dtype != DType::boolean) {
    return make_error("masked_fill mask must be bool, got {}", to_string(mask));
  }
  Expected<Shape> shape = broadcast_shapes(self.shape, mask.shape);
  if (!shape || *shape != self.shape) {
    return make_error("masked_fill mask {} does not broadcast to self {}", to_string(mask),
                      to_string(self));
  }
  return one(self);
}

Outputs clamp_shape(const OpCall& call) {
  if (!call.attrs.has("min") && !call.attrs.has("max")) {
    return make_error("clamp needs min or max (or both)");
  }
  return one(call.in(0));
}

Outputs compare_scalar_shape(const OpCall& call) {
  return one({call.in(0).shape, DType::boolean});
}

// zeros_like/ones_like: the input's shape, in `dtype` when given.
Outputs like_shape(const OpCall& call) {
  TensorMeta out = call.in(0);
  if (call.attrs.has("dtype")) out.dtype = call.attrs.get_dtype("dtype");
  return one(out);
}

Outputs to_copy_shape(const OpCall& call) {
  TensorMeta out = call.in(0);
  if (call.attrs.has("dtype")) out.dtype = call.attrs.get_dtype("dtype");
  return one(out);
}

double pointwise_flops(const OpCall&, Metas outputs) { return out_numel(outputs); }

// silu(x) = x * sigmoid(x): exp, add, div, mul.
double silu_flops(const OpCall&, Metas outputs) { return 4.0 * out_numel(outputs); }

}  // namespace autopar::rules
