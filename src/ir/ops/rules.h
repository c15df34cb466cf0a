// Shape, FLOP and byte rules of every op family, referenced by the op table
// (op_table.cc). One family per file in this folder. Rules receive calls whose
// arity and attribute types have already been checked against the schema.
#pragma once

#include <span>
#include <vector>

#include "ir/op_def.h"

namespace autopar::rules {

using Outputs = Expected<std::vector<TensorMeta>>;
using Metas = std::span<const TensorMeta>;

// Helpers shared by families (rule_helpers.cc).
Outputs one(TensorMeta meta);
Expected<Shape> broadcast_shapes(const Shape& a, const Shape& b);
Status require_same_dtype(const TensorMeta& a, const TensorMeta& b, std::string_view what);
Status require_rank(const TensorMeta& t, int64_t rank, std::string_view what);
Status require_channel_vector(const TensorMeta& t, int64_t channels, std::string_view what);  // [C]
double out_numel(Metas outputs);  // sum over outputs
double in_bytes(const OpCall& call);
double out_bytes(Metas outputs);
// The output_mask of a backward op (aten bool[3] as 0/1 ints); all on when absent.
std::vector<bool> output_mask(const Attrs& attrs);
// An output the output_mask turns off is the empty [0] tensor (PyTorch: None).
TensorMeta masked(bool on, TensorMeta meta);

// structural.cc
Outputs placeholder_shape(const OpCall& call);
Outputs getitem_shape(const OpCall& call);
Outputs generic_shape(const OpCall& call);  // always an error: outputs come from the file
double generic_flops(const OpCall& call, Metas outputs);

// matmul.cc
Outputs addmm_shape(const OpCall& call);
Outputs baddbmm_shape(const OpCall& call);
Outputs bmm_shape(const OpCall& call);
Outputs mm_shape(const OpCall& call);
double addmm_flops(const OpCall& call, Metas outputs);
double baddbmm_flops(const OpCall& call, Metas outputs);
double bmm_flops(const OpCall& call, Metas outputs);
double mm_flops(const OpCall& call, Metas outputs);

// views.cc
Outputs clone_shape(const OpCall& call);
Outputs expand_shape(const OpCall& call);
Outputs t_shape(const OpCall& call);
Outputs transpose_shape(const OpCall& call);
Outputs unsqueeze_shape(const OpCall& call);
Outputs view_shape(const OpCall& call);
double clone_bytes(const OpCall& call, Metas outputs);

// complex.cc
Outputs conj_shape(const OpCall& call);
Outputs view_as_complex_shape(const OpCall& call);
Outputs view_as_real_shape(const OpCall& call);

// pointwise.cc
Outputs binary_broadcast_shape(const OpCall& call);
Outputs unary_shape(const OpCall& call);
Outputs grad_and_input_shape(const OpCall& call);  // silu_backward, threshold_backward
Outputs to_copy_shape(const OpCall& call);
Outputs clamp_shape(const OpCall& call);
Outputs compare_scalar_shape(const OpCall& call);  // eq/ne.Scalar: bool
Outputs div_tensor_shape(const OpCall& call);
Outputs like_shape(const OpCall& call);  // zeros_like, ones_like
Outputs masked_fill_shape(const OpCall& call);
Outputs where_shape(const OpCall& call);
double pointwise_flops(const OpCall& call, Metas outputs);
double silu_flops(const OpCall& call, Metas outputs);

// reduction.cc
Outputs reduce_all_shape(const OpCall& call);  // mean.default, sum.default
Outputs reduce_dims_shape(const OpCall& call);
double reduction_flops(const OpCall& call, Metas outputs);

// nn.cc
Outputs embedding_shape(const OpCall& call);
Outputs embedding_dense_backward_shape(const OpCall& call);
Outputs log_softmax_shape(const OpCall& call);
Outputs log_softmax_backward_shape(const OpCall& call);
Outputs nll_loss_forward_shape(const OpCall& call);
Outputs nll_loss_backward_shape(const OpCall& call);
double embedding_flops(const OpCall& call, Metas outputs);
double embedding_bytes(const OpCall& call, Metas outputs);
double embedding_dense_backward_flops(const OpCall& call, Metas outputs);
double log_softmax_flops(const OpCall& call, Metas outputs);
double nll_loss_flops(const OpCall& call, Metas outputs);

// attention.cc
Outputs sdpa_shape(const OpCall& call);
Outputs sdpa_backward_shape(const OpCall& call);
double sdpa_flops(const OpCall& call, Metas outputs);
double sdpa_backward_flops(const OpCall& call, Metas outputs);
double sdpa_bytes(const OpCall& call, Metas outputs);

// random.cc
double random_flops(const OpCall& call, Metas outputs);
double random_bytes(const OpCall& call, Metas outputs);

// cnn.cc (PyTorch import: CNN ops)
// The window arguments of convolution and pooling (2-D), and their helpers.
struct Window {
  std::vector<int64_t> kernel, stride, padding, dilation;
};
// An int[2] argument; aten also accepts one int for both dims.
Expected<std::vector<int64_t>> pair_attr(const Attrs& attrs, std::string_view name,
                                         std::vector<int64_t> fallback);
// Output size of spatial dim d: floor((in + 2p - d(k-1) - 1) / s) + 1, or
// rounded up with ceil_mode (the last window starting inside the input).
Expected<int64_t> window_out(int64_t in, const Window& w, size_t d, bool ceil_mode);
// kernel_size, stride (empty: the kernel), padding (0) and dilation (1).
Expected<Window> pool_window(const Attrs& attrs);
Outputs convolution_shape(const OpCall& call);
Outputs convolution_backward_shape(const OpCall& call);
Outputs max_pool2d_with_indices_shape(const OpCall& call);
Outputs max_pool2d_with_indices_backward_shape(const OpCall& call);
Outputs native_batch_norm_shape(const OpCall& call);
Outputs native_batch_norm_backward_shape(const OpCall& call);
double convolution_flops(const OpCall& call, Metas outputs);
double convolution_backward_flops(const OpCall& call, Metas outputs);
double max_pool2d_flops(const OpCall& call, Metas outputs);
double max_pool2d_backward_flops(const OpCall& call, Metas outputs);
double native_batch_norm_flops(const OpCall& call, Metas outputs);
double native_batch_norm_backward_flops(const OpCall& call, Metas outputs);

// transformer.cc (PyTorch import: transformer ops)
Outputs cat_shape(const OpCall& call);
Outputs gelu_shape(const OpCall& call);
Outputs gelu_backward_shape(const OpCall& call);
Outputs native_layer_norm_shape(const OpCall& call);
Outputs native_layer_norm_backward_shape(const OpCall& call);
Outputs permute_shape(const OpCall& call);
Outputs select_shape(const OpCall& call);
Outputs select_backward_shape(const OpCall& call);
Outputs slice_shape(const OpCall& call);
Outputs slice_backward_shape(const OpCall& call);
Outputs softmax_shape(const OpCall& call);
Outputs softmax_backward_shape(const OpCall& call);
double gelu_flops(const OpCall& call, Metas outputs);
double gelu_backward_flops(const OpCall& call, Metas outputs);
double layer_norm_flops(const OpCall& call, Metas outputs);
double layer_norm_backward_flops(const OpCall& call, Metas outputs);

// activations.cc (PyTorch import: model-zoo activations; shapes from pointwise.cc)
double hard_backward_flops(const OpCall& call, Metas outputs);  // hardswish/hardsigmoid
double hardsigmoid_flops(const OpCall& call, Metas outputs);
double hardswish_flops(const OpCall& call, Metas outputs);
double sigmoid_flops(const OpCall& call, Metas outputs);
double sigmoid_backward_flops(const OpCall& call, Metas outputs);
double tanh_flops(const OpCall& call, Metas outputs);
double tanh_backward_flops(const OpCall& call, Metas outputs);

// pooling.cc (PyTorch import: pooling and upsampling)
Outputs adaptive_avg_pool2d_shape(const OpCall& call);
Outputs adaptive_avg_pool2d_backward_shape(const OpCall& call);
Outputs avg_pool2d_shape(const OpCall& call);
Outputs avg_pool2d_backward_shape(const OpCall& call);
Outputs upsample2d_shape(const OpCall& call);           // nearest and bilinear
Outputs upsample2d_backward_shape(const OpCall& call);  // nearest and bilinear
double adaptive_avg_pool2d_flops(const OpCall& call, Metas outputs);
double adaptive_avg_pool2d_backward_flops(const OpCall& call, Metas outputs);
double avg_pool2d_flops(const OpCall& call, Metas outputs);
double avg_pool2d_backward_flops(const OpCall& call, Metas outputs);
double upsample_bilinear2d_flops(const OpCall& call, Metas outputs);
double upsample_bilinear2d_backward_flops(const OpCall& call, Metas outputs);
double upsample_nearest2d_flops(const OpCall& call, Metas outputs);
double upsample_nearest2d_backward_flops(const OpCall& call, Metas outputs);

// norms.cc (PyTorch import: group norm)
Outputs native_group_norm_shape(const OpCall& call);
Outputs native_group_norm_backward_shape(const OpCall& call);
double group_norm_flops(const OpCall& call, Metas outputs);
double group_norm_backward_flops(const OpCall& call, Metas outputs);

// shape.cc (PyTorch import: shape ops)
Outputs constant_pad_nd_shape(const OpCall& call);
Outputs roll_shape(const OpCall& call);
Outputs squeeze_shape(const OpCall& call);
Outputs squeeze_dim_shape(const OpCall& call);
Outputs stack_shape(const OpCall& call);

// losses.cc (PyTorch import: per-pixel loss)
Outputs nll_loss2d_forward_shape(const OpCall& call);
Outputs nll_loss2d_backward_shape(const OpCall& call);
double nll_loss2d_flops(const OpCall& call, Metas outputs);

}  // namespace autopar::rules
