// stack, constant_pad_nd and roll as libtorch calls (squeeze runs as the view
// kernel, shaped by its expected local output). The rules never shard the
// new, padded or rolled dims, so dim, pad and shift arguments hold for a shard.
#include <ATen/ops/constant_pad_nd.h>
#include <ATen/ops/roll.h>
#include <ATen/ops/stack.h>

#include "runtime/kernels/kernel_call.h"

namespace autopar::kernels {

KernelResult stack(const KernelCall& call) {
  std::vector<at::Tensor> parts(call.in.begin(), call.in.end());
  return one(at::stack(parts, call.attrs().get_int_or("dim", 0)));
}

KernelResult constant_pad_nd(const KernelCall& call) {
  return one(at::constant_pad_nd(call.in[0], call.attrs().get_ints("pad"),
                                 scalar_attr(call.attrs(), "value", 0.0)));
}

KernelResult roll(const KernelCall& call) {
  return one(at::roll(call.in[0], call.attrs().get_ints("shifts"),
                      ints_or(call.attrs(), "dims", {})));
}

}  // namespace autopar::kernels
