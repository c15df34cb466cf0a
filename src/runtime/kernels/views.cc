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

// Where both sides of a view regroup, the output's inner dims of the group
// may be sliced from a replicated input (sharding/rules/builders.h
// view_spec): the input then holds more than the local output. It is viewed
// with those dims whole, innermost first until the sizes agree, and this
// device's block of each is taken (a strided view of the input).
KernelResult view(const KernelCall& call) {
  const at::Tensor& x = call.in[0];
  std::vector<int64_t> shape(call.out_shape().begin(), call.out_shape().end());
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  if (numel == x.numel() || call.node.outputs.empty()) return one(x.reshape(shape));
  const Shape& full = call.node.outputs[0].shape;
  std::vector<size_t> sliced;
  for (size_t d = shape.size(); d-- > 0 && numel != x.numel();) {
    if (shape[d] == full[d] || shape[d] == 0) continue;
    numel = numel / shape[d] * full[d];
    shape[d] = full[d];
    sliced.push_back(d);
  }
  at::Tensor out = x.reshape(shape);
  for (size_t d : sliced) {
    out = out.narrow(static_cast<int64_t>(d), call.output_offset(0, d), call.out_shape()[d]);
  }
  return one(out);
}

}  // namespace autopar::kernels
