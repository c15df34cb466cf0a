// nll_loss2d forward and backward as libtorch calls. Sharded over pixels
// (sharding/rules/losses.cc), each device's call sees its own pixels; the
// backward takes the global total_weight, so its gradient is the global one.
#include <ATen/ops/nll_loss2d_backward.h>
#include <ATen/ops/nll_loss2d_forward.h>

#include "runtime/kernels/kernel_call.h"

namespace autopar::kernels {

// (self, target, weight?) -> (loss, total_weight); reduction 0 none, 1 mean, 2 sum.
KernelResult nll_loss2d_forward(const KernelCall& call) {
  auto [loss, total_weight] = at::nll_loss2d_forward(
      call.in[0], call.in[1], optional_input(call, 2), call.attrs().get_int("reduction"),
      call.attrs().get_int("ignore_index"));
  return Tensors{loss, total_weight};
}

// (grad_output, self, target, weight?, total_weight) -> grad_self. aten makes
// grad_self with self's strides and then needs it contiguous: self is passed
// contiguous (a shard or a permute's output may be a strided view).
KernelResult nll_loss2d_backward(const KernelCall& call) {
  bool weight = call.in.size() == 5;
  return one(at::nll_loss2d_backward(call.in[0], call.in[1].contiguous(), call.in[2],
                                     weight ? optional_input(call, 3) : c10::nullopt,
                                     call.attrs().get_int("reduction"),
                                     call.attrs().get_int("ignore_index"), call.in.back()));
}

}  // namespace autopar::kernels
