// Fused scaled-dot-product attention (the CPU flash kernel's aten op): never
// materialises the [S, L] score matrix, so memory is linear in sequence length.
#include "ir/ops/rules.h"

namespace autopar::rules {
namespace {

Status check_qkv(const TensorMeta& q, const TensorMeta& k, const TensorMeta& v) {
  for (const TensorMeta* t : {&q, &k, &v}) {
    if (Status s = require_rank(*t, 4, "attention q/k/v ([batch, heads, seq, head_dim])"); !s) {
      return s;
    }
  }
  if (q.dtype != k.dtype || q.dtype != v.dtype) {
    return make_error("attention q, k, v must share a dtype: {}, {}, {}", to_string(q),
                      to_string(k), to_string(v));
  }
  if (q.shape[0] != k.shape[0] || q.shape[1] != k.shape[1] || k.shape[0] != v.shape[0] ||
      k.shape[1] != v.shape[1] || k.shape[2] != v.shape[2] || q.shape[3] != k.shape[3]) {
    return make_error("attention shapes disagree: q {}, k {}, v {}", to_string(q), to_string(k),
                      to_string(v));
  }
  return ok_status();
}

// Two matmuls (QK^T and PV), halved when causal.
double forward_flops(const OpCall& call, const TensorMeta& q, const TensorMeta& k,
                     const TensorMeta& v) {
  double flops = 2.0 * static_cast<double>(q.shape[0] * q.shape[1] * q.shape[2] * k.shape[2]) *
                 static_cast<double>(q.shape[3] + v.shape[3]);
  return call.attrs.get_bool("is_causal") ? flops / 2 : flops;
}

}  // namespace

Outputs sdpa_shape(const OpCall& call) {
  const TensorMeta& q = call.in(0);
  const TensorMeta& k = call.in(1);
  const TensorMeta& v = call.in(2);
  if (Status s = check_qkv(q, k, v); !s) return s.error();
  TensorMeta out{{q.shape[0], q.shape[1], q.shape[2], v.shape[3]}, q.dtype};
  TensorMeta logsumexp{{q.shape[0], q.shape[1], q.shape[2]}, DType::f32};
  return std::vector<TensorMeta>{out, logsumexp};
}

double sdpa_flops(const OpCall& call, Metas) {
  return forward_flops(call, call.in(0), call.in(1), call.in(2));
}

Outputs sdpa_backward_shape(const OpCall& call) {
  const TensorMeta& grad = call.in(0);
  const TensorMeta& q = call.in(1);
  const TensorMeta& k = call.in(2);
  const TensorMeta& v = call.in(3);
  if (Status s = check_qkv(q, k, v); !s) return s.error();
  Shape out_shape{q.shape[0], q.shape[1], q.shape[2], v.shape[3]};
  if (grad.shape != out_shape || call.in(4).shape != out_shape) {
    return make_error("attention backward grad {} and out {} must be {}", to_string(grad),
                      to_string(call.in(4)), shape_to_string(out_shape));
  }
  return std::vector<TensorMeta>{q, k, v};
}

// Recomputes the scores and runs four more matmuls: 2.5x the forward.
double sdpa_backward_flops(const OpCall& call, Metas) {
  return 2.5 * forward_flops(call, call.in(1), call.in(2), call.in(3));
}

double sdpa_bytes(const OpCall& call, Metas outputs) { return in_bytes(call) + out_bytes(outputs); }

}  // namespace autopar::rules
