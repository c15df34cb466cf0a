// Views and layout ops. Sizes come from the expected local output (the
// attributes hold full sizes). Results may alias their input and be strided;
// reshape copies only when a view is impossible, and clone makes contiguous.
#include "runtime/kernels/kernel_call.h"

namespace autopar::kernels {

KernelResult clone(const KernelCall& call) {
  return one(call.in[0].clone(at::MemoryFormat::Contiguous));
}

KernelResult expand(const KernelCall& call) { return one(call.in[0].expand(call.out_shape())); }

KernelResult t(const KernelCall& call) { return one(call.in[0].t()); }

KernelResult transpose(const KernelCall& call) {
  return one(call.in[0].transpose(call.attrs().get_int("dim0"), call.attrs().get_int("dim1")));
}

KernelResult unsqueeze(const KernelCall& call) {
  return one(call.in[0].unsqueeze(call.attrs().get_int("dim")));
}

KernelResult view(const KernelCall& call) { return one(call.in[0].reshape(call.out_shape())); }

}  // namespace autopar::kernels
