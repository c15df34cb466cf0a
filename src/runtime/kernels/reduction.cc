// Reductions over a dim list (an empty or absent list reduces every dim:
// aten's sum.dim_IntList convention, spelled out so mean.dim agrees) and over
// all dims (mean.default, sum.default).
#include <ATen/ops/mean.h>
#include <ATen/ops/sum.h>

#include "runtime/kernels/kernel_call.h"

namespace autopar::kernels {
namespace {

std::vector<int64_t> reduce_dims(const KernelCall& call) {
  std::vector<int64_t> dims = call.attrs().get_ints_or("dim", {});
  if (dims.empty()) {
    for (int64_t d = 0; d < call.in[0].dim(); ++d) dims.push_back(d);
  }
  return dims;
}

bool keepdim(const KernelCall& call) {
  return call.attrs().has("keepdim") && call.attrs().get_bool("keepdim");
}

}  // namespace

c10::optional<at::ScalarType> dtype_attr(const KernelCall& call) {
  if (!call.attrs().has("dtype")) return c10::nullopt;
  return to_scalar_type(call.attrs().get_dtype("dtype"));
}

KernelResult mean(const KernelCall& call) { return one(at::mean(call.in[0], dtype_attr(call))); }

KernelResult sum(const KernelCall& call) { return one(at::sum(call.in[0], dtype_attr(call))); }

KernelResult mean_dim(const KernelCall& call) {
  return one(at::mean(call.in[0], reduce_dims(call), keepdim(call)));
}

KernelResult sum_dim(const KernelCall& call) {
  return one(at::sum(call.in[0], reduce_dims(call), keepdim(call)));
}

}  // namespace autopar::kernels
