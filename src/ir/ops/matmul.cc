// mm, bmm, addmm, baddbmm: contractions. FLOPs are 2 per multiply-add.
#include "ir/ops/rules.h"

namespace autopar::rules {

Outputs mm_shape(const OpCall& call) {
  const TensorMeta& a = call.in(0);
  const TensorMeta& b = call.in(1);
  if (Status s = require_rank(a, 2, "mm self"); !s) return s.error();
  if (Status s = require_rank(b, 2, "mm mat2"); !s) return s.error();
  if (Status s = require_same_dtype(a, b, "mm operands"); !s) return s.error();
  if (a.shape[1] != b.shape[0]) {
    return make_error("mm inner dims differ: {} @ {}", to_string(a), to_string(b));
  }
  return one({{a.shape[0], b.shape[1]}, a.dtype});
}

double mm_flops(const OpCall& call, Metas) {
  const Shape& a = call.in(0).shape;
  return 2.0 * static_cast<double>(a[0]) * static_cast<double>(a[1]) *
         static_cast<double>(call.in(1).shape[1]);
}

Outputs bmm_shape(const OpCall& call) {
  const TensorMeta& a = call.in(0);
  const TensorMeta& b = call.in(1);
  if (Status s = require_rank(a, 3, "bmm self"); !s) return s.error();
  if (Status s = require_rank(b, 3, "bmm mat2"); !s) return s.error();
  if (Status s = require_same_dtype(a, b, "bmm operands"); !s) return s.error();
  if (a.shape[0] != b.shape[0] || a.shape[2] != b.shape[1]) {
    return make_error("bmm shapes disagree: {} @ {}", to_string(a), to_string(b));
  }
  return one({{a.shape[0], a.shape[1], b.shape[2]}, a.dtype});
}

double bmm_flops(const OpCall& call, Metas) {
  const Shape& a = call.in(0).shape;
  return 2.0 * static_cast<double>(a[0]) * static_cast<double>(a[1]) *
         static_cast<double>(a[2]) * static_cast<double>(call.in(1).shape[2]);
}

Outputs addmm_shape(const OpCall& call) {
  const TensorMeta& bias = call.in(0);
  OpCall product{call.input_outputs.subspan(1), call.attrs};
  Outputs out = mm_shape(product);
  if (!out) return out;
  if (Status s = require_same_dtype(bias, call.in(1), "addmm bias and operands"); !s) {
    return s.error();
  }
  Expected<Shape> b = broadcast_shapes(bias.shape, out->front().shape);
  if (!b || *b != out->front().shape) {
    return make_error("addmm bias {} does not broadcast to {}", to_string(bias),
                      to_string(out->front()));
  }
  return out;
}

// beta * self + alpha * (batch1 @ batch2): self broadcasts to [b, m, n].
Outputs baddbmm_shape(const OpCall& call) {
  const TensorMeta& self = call.in(0);
  OpCall product{call.input_outputs.subspan(1), call.attrs};
  Outputs out = bmm_shape(product);
  if (!out) return out;
  if (Status s = require_same_dtype(self, call.in(1), "baddbmm self and batches"); !s) {
    return s.error();
  }
  Expected<Shape> b = broadcast_shapes(self.shape, out->front().shape);
  if (!b || *b != out->front().shape) {
    return make_error("baddbmm self {} does not broadcast to {}", to_string(self),
                      to_string(out->front()));
  }
  return out;
}

double baddbmm_flops(const OpCall& call, Metas outputs) {
  OpCall product{call.input_outputs.subspan(1), call.attrs};
  return bmm_flops(product, outputs) + out_numel(outputs);
}

double addmm_flops(const OpCall& call, Metas outputs) {
  OpCall product{call.input_outputs.subspan(1), call.attrs};
  return mm_flops(product, outputs) + out_numel(outputs);
}

}  // namespace autopar::rules
