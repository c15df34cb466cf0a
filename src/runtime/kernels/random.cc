// Random ops: each element is drawn by a counter-based generator from its
// index in the full tensor (runtime/counter_rng.h), so a shard holds exactly
// the draws the single process makes for those elements.
#include <ATen/ops/empty.h>

#include "runtime/counter_rng.h"
#include "runtime/kernels/kernel_call.h"

namespace autopar::kernels {
namespace {

// Row-major strides of the full tensor.
std::vector<int64_t> full_strides(const Shape& full) {
  std::vector<int64_t> strides(full.size(), 1);
  for (size_t d = full.size(); d-- > 1;) strides[d - 1] = strides[d] * full[d];
  return strides;
}

}  // namespace

KernelResult bernoulli_p(const KernelCall& call) {
  const Shape& full = call.node.outputs[0].shape;
  at::IntArrayRef local = call.out_shape(0);
  std::vector<int64_t> strides = full_strides(full);
  float p = static_cast<float>(call.attrs().get_scalar("p"));
  uint64_t key = random_stream_key(call.context.random_key, call.node.name);
  std::vector<float> draws(static_cast<size_t>(c10::multiply_integers(local)));
  std::vector<int64_t> at(local.size(), 0);  // the local element's multi-index
  for (float& draw : draws) {
    uint64_t index = 0;
    for (size_t d = 0; d < at.size(); ++d) {
      index += static_cast<uint64_t>((at[d] + call.output_offset(0, d)) * strides[d]);
    }
    draw = uniform_at(key, index) < p ? 1.0f : 0.0f;
    for (size_t d = at.size(); d-- > 0;) {  // next multi-index, last dim fastest
      if (++at[d] < local[d]) break;
      at[d] = 0;
    }
  }
  at::Tensor out = at::empty(local, at::TensorOptions().dtype(at::kFloat));
  std::copy(draws.begin(), draws.end(), out.data_ptr<float>());
  return one(out.to(call.in[0].scalar_type()));
}

}  // namespace autopar::kernels
