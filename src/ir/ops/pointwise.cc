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

Outputs to_copy_shape(const OpCall& call) {
  TensorMeta out = call.in(0);
  if (call.attrs.has("dtype")) out.dtype = call.attrs.get_dtype("dtype");
  return one(out);
}

double pointwise_flops(const OpCall&, Metas outputs) { return out_numel(outputs); }

// silu(x) = x * sigmoid(x): exp, add, div, mul.
double silu_flops(const OpCall&, Metas outputs) { return 4.0 * out_numel(outputs); }

}  // namespace autopar::rules
