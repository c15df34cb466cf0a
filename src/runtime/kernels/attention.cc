// _scaled_dot_product_flash_attention_for_cpu and its backward. libtorch 1.13
// has no such op, so both are composites with the same results:
//   scores = q k^T * scale (scale default 1/sqrt(E)), causal: key j > query i
//   masked (top-left aligned, as aten's is_causal); lse = logsumexp(scores)
//   (f32, [B, H, S]); p = exp(scores - lse); out = p v.
// Backward (analytic, p rebuilt from lse as flash attention does):
//   dv = p^T dO; dp = dO v^T; D = rowsum(dO * out); ds = p (dp - D);
//   dq = ds k * scale; dk = ds^T q * scale.
#include <cmath>

#include <ATen/ops/exp.h>
#include <ATen/ops/logsumexp.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/ones.h>

#include "runtime/kernels/kernel_call.h"

namespace autopar::kernels {
namespace {

double attention_scale(const KernelCall& call, const at::Tensor& q) {
  if (call.attrs().has("scale")) return call.attrs().get_scalar("scale");
  return 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
}

Status check_no_dropout(const KernelCall& call) {
  if (call.attrs().has("dropout_p") && call.attrs().get_scalar("dropout_p") != 0.0) {
    return make_error("dropout_p {} is not supported (training steps here are deterministic)",
                      call.attrs().get_scalar("dropout_p"));
  }
  return ok_status();
}

// Scaled scores [B, H, S, L], masked with -inf when causal.
at::Tensor scores(const KernelCall& call, const at::Tensor& q, const at::Tensor& k) {
  at::Tensor s = at::matmul(q, k.transpose(-2, -1)).mul(attention_scale(call, q));
  if (call.attrs().get_bool("is_causal")) {
    at::Tensor future = at::ones({q.size(-2), k.size(-2)}, q.options().dtype(at::kBool)).triu(1);
    s = s.masked_fill(future, -std::numeric_limits<double>::infinity());
  }
  return s;
}

}  // namespace

KernelResult sdpa_flash_cpu(const KernelCall& call) {
  if (Status s = check_no_dropout(call); !s) return s.error();
  const at::Tensor& q = call.in[0];
  at::Tensor s = scores(call, q, call.in[1]);
  at::Tensor lse = at::logsumexp(s, -1, /*keepdim=*/true);
  at::Tensor out = at::matmul(at::exp(s.sub(lse)), call.in[2]);
  return Tensors{out, lse.squeeze(-1).to(at::kFloat)};
}

// Inputs: grad_out, q, k, v, out, logsumexp.
KernelResult sdpa_flash_cpu_backward(const KernelCall& call) {
  if (Status s = check_no_dropout(call); !s) return s.error();
  const at::Tensor& grad = call.in[0];
  const at::Tensor& q = call.in[1];
  const at::Tensor& k = call.in[2];
  const at::Tensor& v = call.in[3];
  const at::Tensor& out = call.in[4];
  double scale = attention_scale(call, q);
  at::Tensor p = at::exp(scores(call, q, k).sub(call.in[5].to(q.scalar_type()).unsqueeze(-1)));
  at::Tensor dv = at::matmul(p.transpose(-2, -1), grad);
  at::Tensor dp = at::matmul(grad, v.transpose(-2, -1));
  at::Tensor row = grad.mul(out).sum(-1, /*keepdim=*/true);
  at::Tensor ds = p.mul(dp.sub(row));
  at::Tensor dq = at::matmul(ds, k).mul(scale);
  at::Tensor dk = at::matmul(ds.transpose(-2, -1), q).mul(scale);
  return Tensors{dq, dk, dv};
}

}  // namespace autopar::kernels
