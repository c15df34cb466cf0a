// Internal to the kernels: what one kernel sees, and the per-family kernels
// (one file each in this folder). kernels.cc dispatches by OpId.
#pragma once

#include <array>
#include <optional>
#include <span>
#include <tuple>
#include <vector>

#include <ATen/core/Tensor.h>

#include "ir/expected.h"
#include "ir/graph.h"
#include "runtime/kernels.h"

namespace autopar::kernels {

using Tensors = std::vector<at::Tensor>;
using KernelResult = Expected<Tensors>;

struct KernelCall {
  const Node& node;
  std::span<const at::Tensor> in;
  std::span<const TensorMeta> out;  // expected local outputs
  const KernelContext& context;

  const Attrs& attrs() const { return node.attrs; }
  at::IntArrayRef out_shape(size_t i = 0) const { return out[i].shape; }
  // Offset of input i / output o along tensor dim d (0 when whole).
  int64_t input_offset(size_t i, size_t d) const;
  int64_t output_offset(size_t o, size_t d) const;
};

using KernelFn = KernelResult (*)(const KernelCall&);

// The kernel of `op`; nullptr for placeholder and getitem (run by the
// executors). run_kernel dispatches through it; bench/executor_overhead_bench
// calls it directly to time the kernels without the executor around them.
KernelFn kernel_for(OpId op);

// A scalar attribute as an at::Scalar that keeps ints ints (so an int tensor
// plus an int scalar stays int); `fallback` when absent.
at::Scalar scalar_attr(const Attrs& attrs, std::string_view name, double fallback);
inline Tensors one(at::Tensor t) { return Tensors{std::move(t)}; }

// Optional attributes with aten's default as `fallback` (ints: see
// Attrs::get_int_or); an empty int list counts as absent (aten's `stride=[]`).
bool bool_or(const Attrs& attrs, std::string_view name, bool fallback);
std::vector<int64_t> ints_or(const Attrs& attrs, std::string_view name,
                             std::vector<int64_t> fallback);
// Input i for a Tensor? argument; absent past the last input. libtorch 1.13
// takes c10::optional (not std::optional) there.
c10::optional<at::Tensor> optional_input(const KernelCall& call, size_t i);
// A backward op's output_mask (aten bool[3] written as 0/1 ints); all on when absent.
std::array<bool, 3> output_mask(const Attrs& attrs);
// Three gradients with the undefined (masked-out) ones as the graph's empty
// [0] tensor of `like`'s dtype.
Tensors masked_outputs(std::tuple<at::Tensor, at::Tensor, at::Tensor> grads, const at::Tensor& like);

// generic.cc: any aten op through libtorch's dispatcher (OpId::kGeneric)
KernelResult generic(const KernelCall& call);
// matmul.cc
KernelResult addmm(const KernelCall& call);
KernelResult baddbmm(const KernelCall& call);
KernelResult bmm(const KernelCall& call);
KernelResult mm(const KernelCall& call);
// views.cc
KernelResult clone(const KernelCall& call);
KernelResult expand(const KernelCall& call);
KernelResult t(const KernelCall& call);
KernelResult transpose(const KernelCall& call);
KernelResult unsqueeze(const KernelCall& call);
KernelResult view(const KernelCall& call);  // view and _unsafe_view
// complex.cc
KernelResult conj(const KernelCall& call);
KernelResult view_as_complex(const KernelCall& call);
KernelResult view_as_real(const KernelCall& call);
// pointwise.cc
KernelResult add_scalar(const KernelCall& call);
KernelResult add_tensor(const KernelCall& call);
KernelResult clamp(const KernelCall& call);
KernelResult div_scalar(const KernelCall& call);
KernelResult div_tensor(const KernelCall& call);
KernelResult eq_scalar(const KernelCall& call);
KernelResult fill_scalar(const KernelCall& call);
KernelResult masked_fill(const KernelCall& call);
KernelResult mul_scalar(const KernelCall& call);
KernelResult mul_tensor(const KernelCall& call);
KernelResult ne_scalar(const KernelCall& call);
KernelResult ones_like(const KernelCall& call);
KernelResult pow_tensor_scalar(const KernelCall& call);
KernelResult relu(const KernelCall& call);
KernelResult rsqrt(const KernelCall& call);
KernelResult silu(const KernelCall& call);
KernelResult silu_backward(const KernelCall& call);
KernelResult sub_tensor(const KernelCall& call);
KernelResult threshold_backward(const KernelCall& call);
KernelResult to_copy(const KernelCall& call);
KernelResult where_self(const KernelCall& call);
KernelResult zeros_like(const KernelCall& call);
// reduction.cc
KernelResult mean(const KernelCall& call);
KernelResult mean_dim(const KernelCall& call);
KernelResult sum(const KernelCall& call);
KernelResult sum_dim(const KernelCall& call);
// nn.cc
KernelResult embedding(const KernelCall& call);
KernelResult embedding_dense_backward(const KernelCall& call);
KernelResult log_softmax(const KernelCall& call);
KernelResult log_softmax_backward(const KernelCall& call);
KernelResult nll_loss_backward(const KernelCall& call);
KernelResult nll_loss_forward(const KernelCall& call);
// attention.cc
KernelResult sdpa_flash_cpu(const KernelCall& call);
KernelResult sdpa_flash_cpu_backward(const KernelCall& call);
// random.cc
KernelResult bernoulli_p(const KernelCall& call);
// cnn.cc (PyTorch import: CNN ops)
KernelResult convolution(const KernelCall& call);
KernelResult convolution_backward(const KernelCall& call);
KernelResult hardtanh(const KernelCall& call);
KernelResult hardtanh_backward(const KernelCall& call);
KernelResult max_pool2d_with_indices(const KernelCall& call);
KernelResult max_pool2d_with_indices_backward(const KernelCall& call);
KernelResult native_batch_norm(const KernelCall& call);
KernelResult native_batch_norm_backward(const KernelCall& call);

// transformer.cc (PyTorch import: transformer ops)
KernelResult cat(const KernelCall& call);
KernelResult gelu(const KernelCall& call);
KernelResult gelu_backward(const KernelCall& call);
KernelResult native_layer_norm(const KernelCall& call);
KernelResult native_layer_norm_backward(const KernelCall& call);
KernelResult permute(const KernelCall& call);
KernelResult select_backward(const KernelCall& call);
KernelResult select_int(const KernelCall& call);
KernelResult slice_backward(const KernelCall& call);
KernelResult slice_tensor(const KernelCall& call);
KernelResult softmax(const KernelCall& call);
KernelResult softmax_backward(const KernelCall& call);

// activations.cc (PyTorch import: model-zoo activations)
KernelResult hardsigmoid(const KernelCall& call);
KernelResult hardsigmoid_backward(const KernelCall& call);
KernelResult hardswish(const KernelCall& call);
KernelResult hardswish_backward(const KernelCall& call);
KernelResult sigmoid(const KernelCall& call);
KernelResult sigmoid_backward(const KernelCall& call);
KernelResult tanh(const KernelCall& call);
KernelResult tanh_backward(const KernelCall& call);

// pooling.cc (PyTorch import: pooling and upsampling)
KernelResult adaptive_avg_pool2d(const KernelCall& call);
KernelResult adaptive_avg_pool2d_backward(const KernelCall& call);
KernelResult avg_pool2d(const KernelCall& call);
KernelResult avg_pool2d_backward(const KernelCall& call);
KernelResult upsample_bilinear2d(const KernelCall& call);
KernelResult upsample_bilinear2d_backward(const KernelCall& call);
KernelResult upsample_nearest2d(const KernelCall& call);
KernelResult upsample_nearest2d_backward(const KernelCall& call);

// norms.cc (PyTorch import: group norm)
KernelResult native_group_norm(const KernelCall& call);
KernelResult native_group_norm_backward(const KernelCall& call);

// shape.cc (PyTorch import: shape ops; squeeze runs as view)
KernelResult constant_pad_nd(const KernelCall& call);
KernelResult roll(const KernelCall& call);
KernelResult stack(const KernelCall& call);

// losses.cc (PyTorch import: per-pixel loss)
KernelResult nll_loss2d_backward(const KernelCall& call);
KernelResult nll_loss2d_forward(const KernelCall& call);

}  // namespace autopar::kernels
