// mm, bmm, addmm, baddbmm on local shards: a contraction over a sharded dim gives a
// partial sum per device; the sharding rule marks that output Partial.
#include <ATen/ops/addmm.h>
#include <ATen/ops/baddbmm.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/mm.h>

#include "runtime/kernels/kernel_call.h"

namespace autopar::kernels {

KernelResult addmm(const KernelCall& call) {
  return one(at::addmm(call.in[0], call.in[1], call.in[2], scalar_attr(call.attrs(), "beta", 1.0),
                       scalar_attr(call.attrs(), "alpha", 1.0)));
}

KernelResult baddbmm(const KernelCall& call) {
  return one(at::baddbmm(call.in[0], call.in[1], call.in[2],
                         scalar_attr(call.attrs(), "beta", 1.0), scalar_attr(call.attrs(), "alpha", 1.0)));
}

KernelResult bmm(const KernelCall& call) { return one(at::bmm(call.in[0], call.in[1])); }

KernelResult mm(const KernelCall& call) { return one(at::mm(call.in[0], call.in[1])); }

}  // namespace autopar::kernels
