// Group norm and its backward as libtorch calls. The attributes N, C and HxW
// are the full input's sizes and `group` its group count; a shard holds some
// samples and whole groups (sharding/rules/norms.cc), so the call takes the
// local sizes and the local number of groups, C_local / (C / group). aten's
// CPU group norm needs contiguous tensors (a shard or a permute's output may
// be a strided view).
#include <ATen/ops/native_group_norm.h>
#include <ATen/ops/native_group_norm_backward.h>

#include "runtime/kernels/kernel_call.h"

namespace autopar::kernels {
namespace {

struct GroupSizes {
  int64_t n, c, hxw, group;
};

GroupSizes local_sizes(const at::Tensor& x, const Attrs& a) {
  int64_t n = x.size(0), c = x.size(1);
  int64_t hxw = n * c == 0 ? 0 : x.numel() / (n * c);
  int64_t per_group = a.get_int("C") / a.get_int("group");
  return {n, c, hxw, c / per_group};
}

}  // namespace

// (input, weight?, bias?) -> (out, mean, rstd).
KernelResult native_group_norm(const KernelCall& call) {
  GroupSizes s = local_sizes(call.in[0], call.attrs());
  auto [out, mean, rstd] =
      at::native_group_norm(call.in[0].contiguous(), optional_input(call, 1),
                            optional_input(call, 2), s.n, s.c, s.hxw, s.group,
                            call.attrs().get_scalar("eps"));
  return Tensors{out, mean, rstd};
}

// (grad_out, input, mean, rstd, weight?) -> (grad_input, grad_weight, grad_bias).
KernelResult native_group_norm_backward(const KernelCall& call) {
  GroupSizes s = local_sizes(call.in[1], call.attrs());
  return masked_outputs(
      at::native_group_norm_backward(call.in[0].contiguous(), call.in[1].contiguous(),
                                     call.in[2].contiguous(), call.in[3].contiguous(),
                                     optional_input(call, 4), s.n, s.c, s.hxw, s.group,
                                     output_mask(call.attrs())),
      call.in[0]);
}

}  // namespace autopar::kernels
