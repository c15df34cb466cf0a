// Pointwise ops and their backward ops. zeros_like, ones_like and fill make
// their output at the expected local shape (a shard's input only gives it).
#include <ATen/ops/add.h>
#include <ATen/ops/clamp.h>
#include <ATen/ops/div.h>
#include <ATen/ops/eq.h>
#include <ATen/ops/full.h>
#include <ATen/ops/masked_fill.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/ne.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/relu.h>
#include <ATen/ops/rsqrt.h>
#include <ATen/ops/silu.h>
#include <ATen/ops/silu_backward.h>
#include <ATen/ops/sub.h>
#include <ATen/ops/threshold_backward.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros.h>

#include "runtime/kernels/kernel_call.h"

namespace autopar::kernels {

namespace {

// aten's default alpha is the int 1: a float 1.0 is refused for integer tensors.
at::Scalar alpha(const KernelCall& call) {
  return call.attrs().has("alpha") ? scalar_attr(call.attrs(), "alpha", 1.0) : at::Scalar(int64_t{1});
}

c10::optional<at::Scalar> optional_scalar(const Attrs& attrs, std::string_view name) {
  if (!attrs.has(name)) return c10::nullopt;
  return scalar_attr(attrs, name, 0.0);
}

// The output options of zeros_like/ones_like: the input's, in `dtype` when given.
at::TensorOptions like_options(const KernelCall& call) {
  return call.in[0].options().dtype(to_scalar_type(call.out[0].dtype));
}

}  // namespace

KernelResult add_scalar(const KernelCall& call) {
  return one(at::add(call.in[0], scalar_attr(call.attrs(), "other", 0.0), alpha(call)));
}

KernelResult add_tensor(const KernelCall& call) {
  return one(at::add(call.in[0], call.in[1], alpha(call)));
}

KernelResult clamp(const KernelCall& call) {
  return one(at::clamp(call.in[0], optional_scalar(call.attrs(), "min"),
                       optional_scalar(call.attrs(), "max")));
}

KernelResult div_tensor(const KernelCall& call) { return one(at::div(call.in[0], call.in[1])); }

KernelResult eq_scalar(const KernelCall& call) {
  return one(at::eq(call.in[0], scalar_attr(call.attrs(), "other", 0.0)));
}

KernelResult fill_scalar(const KernelCall& call) {
  return one(at::full(call.out_shape(), scalar_attr(call.attrs(), "value", 0.0),
                      call.in[0].options()));
}

KernelResult masked_fill(const KernelCall& call) {
  return one(at::masked_fill(call.in[0], call.in[1], scalar_attr(call.attrs(), "value", 0.0)));
}

KernelResult ne_scalar(const KernelCall& call) {
  return one(at::ne(call.in[0], scalar_attr(call.attrs(), "other", 0.0)));
}

KernelResult ones_like(const KernelCall& call) {
  return one(at::ones(call.out_shape(), like_options(call)));
}

KernelResult sub_tensor(const KernelCall& call) {
  return one(at::sub(call.in[0], call.in[1], alpha(call)));
}

KernelResult where_self(const KernelCall& call) {
  return one(at::where(call.in[0], call.in[1], call.in[2]));
}

KernelResult zeros_like(const KernelCall& call) {
  return one(at::zeros(call.out_shape(), like_options(call)));
}

KernelResult div_scalar(const KernelCall& call) {
  return one(at::div(call.in[0], scalar_attr(call.attrs(), "other", 1.0)));
}

KernelResult mul_scalar(const KernelCall& call) {
  return one(at::mul(call.in[0], scalar_attr(call.attrs(), "other", 1.0)));
}

KernelResult mul_tensor(const KernelCall& call) { return one(at::mul(call.in[0], call.in[1])); }

KernelResult pow_tensor_scalar(const KernelCall& call) {
  return one(at::pow(call.in[0], scalar_attr(call.attrs(), "exponent", 1.0)));
}

KernelResult relu(const KernelCall& call) { return one(at::relu(call.in[0])); }

KernelResult rsqrt(const KernelCall& call) { return one(at::rsqrt(call.in[0])); }

KernelResult silu(const KernelCall& call) { return one(at::silu(call.in[0])); }

KernelResult silu_backward(const KernelCall& call) {
  return one(at::silu_backward(call.in[0], call.in[1]));
}

KernelResult threshold_backward(const KernelCall& call) {
  return one(
      at::threshold_backward(call.in[0], call.in[1], scalar_attr(call.attrs(), "threshold", 0.0)));
}

// Without a dtype attribute _to_copy is a copy.
KernelResult to_copy(const KernelCall& call) {
  at::ScalarType type = call.attrs().has("dtype") ? to_scalar_type(call.attrs().get_dtype("dtype"))
                                                  : call.in[0].scalar_type();
  return one(call.in[0].to(type, /*non_blocking=*/false, /*copy=*/true));
}

}  // namespace autopar::kernels
