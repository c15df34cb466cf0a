// Complex views (RoPE). view_as_complex needs a unit last stride and even
// other strides, so it reads a contiguous input. _conj is libtorch's lazy
// view (the conjugate bit), as aten defines it and the memory model counts it
// (no storage of its own); view_as_real and redistribution resolve the bit.
#include <ATen/ops/_conj.h>
#include <ATen/ops/view_as_complex.h>
#include <ATen/ops/view_as_real.h>

#include "runtime/kernels/kernel_call.h"

namespace autopar::kernels {

KernelResult conj(const KernelCall& call) { return one(at::_conj(call.in[0])); }

KernelResult view_as_complex(const KernelCall& call) {
  return one(at::view_as_complex(call.in[0].contiguous()));
}

KernelResult view_as_real(const KernelCall& call) {
  return one(at::view_as_real(call.in[0].resolve_conj()));
}

}  // namespace autopar::kernels
