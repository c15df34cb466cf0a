// The op table. One entry per OpId, in enum order; the static_asserts below make
// a missing entry, a missing rule or a missing cost a compile error.
#include <algorithm>
#include <array>
#include <string>

#include "ir/op_def.h"
#include "ir/ops/rules.h"

namespace autopar {
namespace {

using namespace rules;
using T = AttrType;

constexpr std::span<const AttrSpec> none() { return {}; }

constexpr AttrSpec kGetItemAttrs[] = {{"index", T::kInt}};
constexpr AttrSpec kAddmmAttrs[] = {{"beta", T::kScalar, false}, {"alpha", T::kScalar, false}};
constexpr AttrSpec kExpandAttrs[] = {{"size", T::kInts}};
constexpr AttrSpec kTransposeAttrs[] = {{"dim0", T::kInt}, {"dim1", T::kInt}};
constexpr AttrSpec kViewAttrs[] = {{"size", T::kInts}};
constexpr AttrSpec kUnsqueezeAttrs[] = {{"dim", T::kInt}};
constexpr AttrSpec kScalarOtherAttrs[] = {{"other", T::kScalar}};
constexpr AttrSpec kAddScalarAttrs[] = {{"other", T::kScalar}, {"alpha", T::kScalar, false}};
constexpr AttrSpec kAddTensorAttrs[] = {{"alpha", T::kScalar, false}};
constexpr AttrSpec kPowAttrs[] = {{"exponent", T::kScalar}};
constexpr AttrSpec kThresholdAttrs[] = {{"threshold", T::kScalar}};
constexpr AttrSpec kToCopyAttrs[] = {{"dtype", T::kDType, false}};
constexpr AttrSpec kReduceAttrs[] = {{"dim", T::kInts, false}, {"keepdim", T::kBool, false}};
constexpr AttrSpec kEmbeddingAttrs[] = {{"padding_idx", T::kInt, false}};
constexpr AttrSpec kEmbeddingBackwardAttrs[] = {{"num_weights", T::kInt},
                                           {"padding_idx", T::kInt, false},
                                           {"scale_grad_by_freq", T::kBool, false}};
constexpr AttrSpec kLogSoftmaxAttrs[] = {{"dim", T::kInt}, {"half_to_float", T::kBool, false}};
constexpr AttrSpec kLogSoftmaxBackwardAttrs[] = {{"dim", T::kInt}, {"input_dtype", T::kDType}};
constexpr AttrSpec kNllLossAttrs[] = {{"reduction", T::kInt}, {"ignore_index", T::kInt}};
constexpr AttrSpec kSdpaAttrs[] = {{"dropout_p", T::kScalar, false},
                              {"is_causal", T::kBool},
                              {"scale", T::kScalar, false}};

constexpr AttrSpec kBernoulliAttrs[] = {{"p", T::kScalar}};

// PyTorch import: CNN ops
constexpr AttrSpec kConvolutionAttrs[] = {{"stride", T::kInts},
                                     {"padding", T::kInts},
                                     {"dilation", T::kInts},
                                     {"transposed", T::kBool, false},
                                     {"output_padding", T::kInts, false},
                                     {"groups", T::kInt}};
// output_mask: aten's bool[3] written as 0/1 ints (the JSON has no bool lists).
constexpr AttrSpec kConvolutionBackwardAttrs[] = {{"bias_sizes", T::kInts, false},
                                             {"stride", T::kInts},
                                             {"padding", T::kInts},
                                             {"dilation", T::kInts},
                                             {"transposed", T::kBool, false},
                                             {"output_padding", T::kInts, false},
                                             {"groups", T::kInt},
                                             {"output_mask", T::kInts, false}};
constexpr AttrSpec kHardtanhAttrs[] = {{"min_val", T::kScalar, false}, {"max_val", T::kScalar, false}};
constexpr AttrSpec kMaxPoolAttrs[] = {{"kernel_size", T::kInts},
                                 {"stride", T::kInts, false},
                                 {"padding", T::kInts, false},
                                 {"dilation", T::kInts, false},
                                 {"ceil_mode", T::kBool, false}};
constexpr AttrSpec kBatchNormAttrs[] = {{"training", T::kBool}, {"momentum", T::kScalar}, {"eps", T::kScalar}};
constexpr AttrSpec kBatchNormBackwardAttrs[] = {{"train", T::kBool},
                                           {"eps", T::kScalar},
                                           {"output_mask", T::kInts, false}};

// PyTorch import: transformer ops
constexpr AttrSpec kCatAttrs[] = {{"dim", T::kInt, false}};
constexpr AttrSpec kLayerNormAttrs[] = {{"normalized_shape", T::kInts}, {"eps", T::kScalar}};
constexpr AttrSpec kLayerNormBackwardAttrs[] = {{"normalized_shape", T::kInts}};
constexpr AttrSpec kPermuteAttrs[] = {{"dims", T::kInts}};
constexpr AttrSpec kSelectAttrs[] = {{"dim", T::kInt}, {"index", T::kInt}};
constexpr AttrSpec kSelectBackwardAttrs[] = {{"input_sizes", T::kInts}, {"dim", T::kInt}, {"index", T::kInt}};
constexpr AttrSpec kSliceAttrs[] = {{"dim", T::kInt, false}, {"start", T::kInt, false},
                               {"end", T::kInt, false}, {"step", T::kInt, false}};
constexpr AttrSpec kSliceBackwardAttrs[] = {{"input_sizes", T::kInts}, {"dim", T::kInt},
                                       {"start", T::kInt}, {"end", T::kInt}, {"step", T::kInt}};
constexpr AttrSpec kGeluAttrs[] = {{"approximate", T::kString, false}};  // "none" or "tanh"

// PyTorch import: model-zoo ops
constexpr AttrSpec kClampAttrs[] = {{"min", T::kScalar, false}, {"max", T::kScalar, false}};
constexpr AttrSpec kValueAttrs[] = {{"value", T::kScalar}};
constexpr AttrSpec kDTypeAttrs[] = {{"dtype", T::kDType, false}};
constexpr AttrSpec kAvgPoolAttrs[] = {{"kernel_size", T::kInts},
                                 {"stride", T::kInts, false},
                                 {"padding", T::kInts, false},
                                 {"ceil_mode", T::kBool, false},
                                 {"count_include_pad", T::kBool, false},
                                 {"divisor_override", T::kInt, false}};
constexpr AttrSpec kAdaptivePoolAttrs[] = {{"output_size", T::kInts}};
constexpr AttrSpec kUpsampleNearestAttrs[] = {{"output_size", T::kInts, false},
                                         {"scale_factors", T::kFloats, false}};
constexpr AttrSpec kUpsampleNearestBackwardAttrs[] = {{"output_size", T::kInts, false},
                                                 {"input_size", T::kInts},
                                                 {"scale_factors", T::kFloats, false}};
constexpr AttrSpec kUpsampleBilinearAttrs[] = {{"output_size", T::kInts, false},
                                          {"align_corners", T::kBool},
                                          {"scale_factors", T::kFloats, false}};
constexpr AttrSpec kUpsampleBilinearBackwardAttrs[] = {{"output_size", T::kInts, false},
                                                  {"input_size", T::kInts},
                                                  {"align_corners", T::kBool},
                                                  {"scale_factors", T::kFloats, false}};
constexpr AttrSpec kGroupNormAttrs[] = {{"N", T::kInt}, {"C", T::kInt}, {"HxW", T::kInt},
                                   {"group", T::kInt}, {"eps", T::kScalar}};
constexpr AttrSpec kGroupNormBackwardAttrs[] = {{"N", T::kInt}, {"C", T::kInt}, {"HxW", T::kInt},
                                           {"group", T::kInt}, {"output_mask", T::kInts, false}};
constexpr AttrSpec kConstantPadAttrs[] = {{"pad", T::kInts}, {"value", T::kScalar, false}};
constexpr AttrSpec kRollAttrs[] = {{"shifts", T::kInts}, {"dims", T::kInts, false}};
constexpr AttrSpec kDimAttrs[] = {{"dim", T::kInt}};  // squeeze.dim

constexpr Traits kPw = kPointwise;
constexpr int kMaxGenericInputs = 1 << 20;
constexpr Traits kBw = kBackward;

// clang-format off
constexpr std::array<OpDef, kOpCount> kOps = {{
  {OpId::kPlaceholder, "placeholder", 0, 0, none(), kStructural, placeholder_shape, zero_cost, zero_cost},
  {OpId::kGetItem, "getitem", 1, 1, kGetItemAttrs, kStructural, getitem_shape, zero_cost, zero_cost},
  {OpId::kGeneric, "<generic aten op>", 0, kMaxGenericInputs, none(), kTraitNone, generic_shape, generic_flops, sum_bytes},
  {OpId::kAddmm, "aten.addmm.default", 3, 3, kAddmmAttrs, kMatmul, addmm_shape, addmm_flops, sum_bytes},
  {OpId::kBaddbmm, "aten.baddbmm.default", 3, 3, kAddmmAttrs, kMatmul, baddbmm_shape, baddbmm_flops, sum_bytes},
  {OpId::kBmm, "aten.bmm.default", 2, 2, none(), kMatmul, bmm_shape, bmm_flops, sum_bytes},
  {OpId::kMm, "aten.mm.default", 2, 2, none(), kMatmul, mm_shape, mm_flops, sum_bytes},
  {OpId::kClone, "aten.clone.default", 1, 1, none(), kPw, clone_shape, zero_cost, clone_bytes},
  {OpId::kExpand, "aten.expand.default", 1, 1, kExpandAttrs, kView, expand_shape, zero_cost, zero_cost},
  {OpId::kT, "aten.t.default", 1, 1, none(), kView, t_shape, zero_cost, zero_cost},
  {OpId::kTranspose, "aten.transpose.int", 1, 1, kTransposeAttrs, kView, transpose_shape, zero_cost, zero_cost},
  {OpId::kUnsafeView, "aten._unsafe_view.default", 1, 1, kViewAttrs, kView, view_shape, zero_cost, zero_cost},
  {OpId::kUnsqueeze, "aten.unsqueeze.default", 1, 1, kUnsqueezeAttrs, kView, unsqueeze_shape, zero_cost, zero_cost},
  {OpId::kView, "aten.view.default", 1, 1, kViewAttrs, kView, view_shape, zero_cost, zero_cost},
  {OpId::kConj, "aten._conj.default", 1, 1, none(), kView | kComplex, conj_shape, zero_cost, zero_cost},
  {OpId::kViewAsComplex, "aten.view_as_complex.default", 1, 1, none(), kView | kComplex, view_as_complex_shape, zero_cost, zero_cost},
  {OpId::kViewAsReal, "aten.view_as_real.default", 1, 1, none(), kView | kComplex, view_as_real_shape, zero_cost, zero_cost},
  {OpId::kAddScalar, "aten.add.Scalar", 1, 1, kAddScalarAttrs, kPw, unary_shape, pointwise_flops, sum_bytes},
  {OpId::kAddTensor, "aten.add.Tensor", 2, 2, kAddTensorAttrs, kPw, binary_broadcast_shape, pointwise_flops, sum_bytes},
  {OpId::kClamp, "aten.clamp.default", 1, 1, kClampAttrs, kPw, clamp_shape, pointwise_flops, sum_bytes},
  {OpId::kDivScalar, "aten.div.Scalar", 1, 1, kScalarOtherAttrs, kPw, unary_shape, pointwise_flops, sum_bytes},
  {OpId::kDivTensor, "aten.div.Tensor", 2, 2, none(), kPw, div_tensor_shape, pointwise_flops, sum_bytes},
  {OpId::kEqScalar, "aten.eq.Scalar", 1, 1, kScalarOtherAttrs, kPw, compare_scalar_shape, pointwise_flops, sum_bytes},
  {OpId::kFillScalar, "aten.fill.Scalar", 1, 1, kValueAttrs, kPw, unary_shape, pointwise_flops, out_only_bytes},
  {OpId::kMaskedFillScalar, "aten.masked_fill.Scalar", 2, 2, kValueAttrs, kPw, masked_fill_shape, pointwise_flops, sum_bytes},
  {OpId::kMulScalar, "aten.mul.Scalar", 1, 1, kScalarOtherAttrs, kPw, unary_shape, pointwise_flops, sum_bytes},
  {OpId::kMulTensor, "aten.mul.Tensor", 2, 2, none(), kPw, binary_broadcast_shape, pointwise_flops, sum_bytes},
  {OpId::kNeScalar, "aten.ne.Scalar", 1, 1, kScalarOtherAttrs, kPw, compare_scalar_shape, pointwise_flops, sum_bytes},
  {OpId::kOnesLike, "aten.ones_like.default", 1, 1, kDTypeAttrs, kPw, like_shape, pointwise_flops, out_only_bytes},
  {OpId::kPowTensorScalar, "aten.pow.Tensor_Scalar", 1, 1, kPowAttrs, kPw, unary_shape, pointwise_flops, sum_bytes},
  {OpId::kRelu, "aten.relu.default", 1, 1, none(), kPw, unary_shape, pointwise_flops, sum_bytes},
  {OpId::kRsqrt, "aten.rsqrt.default", 1, 1, none(), kPw, unary_shape, pointwise_flops, sum_bytes},
  {OpId::kSilu, "aten.silu.default", 1, 1, none(), kPw, unary_shape, silu_flops, sum_bytes},
  {OpId::kSiluBackward, "aten.silu_backward.default", 2, 2, none(), kPw | kBw, grad_and_input_shape, silu_flops, sum_bytes},
  {OpId::kSubTensor, "aten.sub.Tensor", 2, 2, kAddTensorAttrs, kPw, binary_broadcast_shape, pointwise_flops, sum_bytes},
  {OpId::kThresholdBackward, "aten.threshold_backward.default", 2, 2, kThresholdAttrs, kPw | kBw, grad_and_input_shape, pointwise_flops, sum_bytes},
  {OpId::kToCopy, "aten._to_copy.default", 1, 1, kToCopyAttrs, kPw, to_copy_shape, pointwise_flops, sum_bytes},
  {OpId::kWhereSelf, "aten.where.self", 3, 3, none(), kPw, where_shape, pointwise_flops, sum_bytes},
  {OpId::kZerosLike, "aten.zeros_like.default", 1, 1, kDTypeAttrs, kPw, like_shape, pointwise_flops, out_only_bytes},
  {OpId::kMean, "aten.mean.default", 1, 1, kDTypeAttrs, kReduction, reduce_all_shape, reduction_flops, sum_bytes},
  {OpId::kMeanDim, "aten.mean.dim", 1, 1, kReduceAttrs, kReduction, reduce_dims_shape, reduction_flops, sum_bytes},
  {OpId::kSum, "aten.sum.default", 1, 1, kDTypeAttrs, kReduction, reduce_all_shape, reduction_flops, sum_bytes},
  {OpId::kSumDimIntList, "aten.sum.dim_IntList", 1, 1, kReduceAttrs, kReduction, reduce_dims_shape, reduction_flops, sum_bytes},
  {OpId::kEmbedding, "aten.embedding.default", 2, 2, kEmbeddingAttrs, kTraitNone, embedding_shape, embedding_flops, embedding_bytes},
  {OpId::kEmbeddingDenseBackward, "aten.embedding_dense_backward.default", 2, 2, kEmbeddingBackwardAttrs, kBw, embedding_dense_backward_shape, embedding_dense_backward_flops, sum_bytes},
  {OpId::kLogSoftmax, "aten._log_softmax.default", 1, 1, kLogSoftmaxAttrs, kReduction, log_softmax_shape, log_softmax_flops, sum_bytes},
  {OpId::kLogSoftmaxBackwardData, "aten._log_softmax_backward_data.default", 2, 2, kLogSoftmaxBackwardAttrs, kReduction | kBw, log_softmax_backward_shape, log_softmax_flops, sum_bytes},
  {OpId::kNllLossBackward, "aten.nll_loss_backward.default", 4, 4, kNllLossAttrs, kBw, nll_loss_backward_shape, nll_loss_flops, sum_bytes},
  {OpId::kNllLossForward, "aten.nll_loss_forward.default", 2, 2, kNllLossAttrs, kReduction, nll_loss_forward_shape, nll_loss_flops, sum_bytes},
  {OpId::kSdpaFlashCpu, "aten._scaled_dot_product_flash_attention_for_cpu.default", 3, 3, kSdpaAttrs, kMatmul, sdpa_shape, sdpa_flops, sdpa_bytes},
  {OpId::kSdpaFlashCpuBackward, "aten._scaled_dot_product_flash_attention_for_cpu_backward.default", 6, 6, kSdpaAttrs, kMatmul | kBw, sdpa_backward_shape, sdpa_backward_flops, sdpa_bytes},
  {OpId::kBernoulliP, "aten.bernoulli.p", 1, 1, kBernoulliAttrs, kPw, unary_shape, random_flops, random_bytes},
  // PyTorch import: CNN ops
  {OpId::kConvolution, "aten.convolution.default", 2, 3, kConvolutionAttrs, kMatmul, convolution_shape, convolution_flops, sum_bytes},
  {OpId::kConvolutionBackward, "aten.convolution_backward.default", 3, 3, kConvolutionBackwardAttrs, kMatmul | kBw, convolution_backward_shape, convolution_backward_flops, sum_bytes},
  {OpId::kHardtanh, "aten.hardtanh.default", 1, 1, kHardtanhAttrs, kPw, unary_shape, pointwise_flops, sum_bytes},
  {OpId::kHardtanhBackward, "aten.hardtanh_backward.default", 2, 2, kHardtanhAttrs, kPw | kBw, grad_and_input_shape, pointwise_flops, sum_bytes},
  {OpId::kMaxPool2dWithIndices, "aten.max_pool2d_with_indices.default", 1, 1, kMaxPoolAttrs, kReduction, max_pool2d_with_indices_shape, max_pool2d_flops, sum_bytes},
  {OpId::kMaxPool2dWithIndicesBackward, "aten.max_pool2d_with_indices_backward.default", 3, 3, kMaxPoolAttrs, kBw, max_pool2d_with_indices_backward_shape, max_pool2d_backward_flops, sum_bytes},
  {OpId::kNativeBatchNorm, "aten.native_batch_norm.default", 3, 5, kBatchNormAttrs, kReduction, native_batch_norm_shape, native_batch_norm_flops, sum_bytes},
  {OpId::kNativeBatchNormBackward, "aten.native_batch_norm_backward.default", 5, 7, kBatchNormBackwardAttrs, kReduction | kBw, native_batch_norm_backward_shape, native_batch_norm_backward_flops, sum_bytes},
  // PyTorch import: transformer ops
  {OpId::kCat, "aten.cat.default", 1, 64, kCatAttrs, kTraitNone, cat_shape, zero_cost, sum_bytes},
  {OpId::kGelu, "aten.gelu.default", 1, 1, kGeluAttrs, kPw, gelu_shape, gelu_flops, sum_bytes},
  {OpId::kGeluBackward, "aten.gelu_backward.default", 2, 2, kGeluAttrs, kPw | kBw, gelu_backward_shape, gelu_backward_flops, sum_bytes},
  {OpId::kNativeLayerNorm, "aten.native_layer_norm.default", 1, 3, kLayerNormAttrs, kReduction, native_layer_norm_shape, layer_norm_flops, sum_bytes},
  {OpId::kNativeLayerNormBackward, "aten.native_layer_norm_backward.default", 4, 6, kLayerNormBackwardAttrs, kReduction | kBw, native_layer_norm_backward_shape, layer_norm_backward_flops, sum_bytes},
  {OpId::kPermute, "aten.permute.default", 1, 1, kPermuteAttrs, kView, permute_shape, zero_cost, zero_cost},
  {OpId::kSelectBackward, "aten.select_backward.default", 1, 1, kSelectBackwardAttrs, kView | kBw, select_backward_shape, zero_cost, sum_bytes},
  {OpId::kSelectInt, "aten.select.int", 1, 1, kSelectAttrs, kView, select_shape, zero_cost, zero_cost},
  {OpId::kSliceBackward, "aten.slice_backward.default", 1, 1, kSliceBackwardAttrs, kView | kBw, slice_backward_shape, zero_cost, sum_bytes},
  {OpId::kSliceTensor, "aten.slice.Tensor", 1, 1, kSliceAttrs, kView, slice_shape, zero_cost, zero_cost},
  {OpId::kSoftmax, "aten._softmax.default", 1, 1, kLogSoftmaxAttrs, kReduction, softmax_shape, log_softmax_flops, sum_bytes},
  {OpId::kSoftmaxBackwardData, "aten._softmax_backward_data.default", 2, 2, kLogSoftmaxBackwardAttrs, kReduction | kBw, softmax_backward_shape, log_softmax_flops, sum_bytes},
  // PyTorch import: model-zoo activations
  {OpId::kHardsigmoid, "aten.hardsigmoid.default", 1, 1, none(), kPw, unary_shape, hardsigmoid_flops, sum_bytes},
  {OpId::kHardsigmoidBackward, "aten.hardsigmoid_backward.default", 2, 2, none(), kPw | kBw, grad_and_input_shape, hard_backward_flops, sum_bytes},
  {OpId::kHardswish, "aten.hardswish.default", 1, 1, none(), kPw, unary_shape, hardswish_flops, sum_bytes},
  {OpId::kHardswishBackward, "aten.hardswish_backward.default", 2, 2, none(), kPw | kBw, grad_and_input_shape, hard_backward_flops, sum_bytes},
  {OpId::kSigmoid, "aten.sigmoid.default", 1, 1, none(), kPw, unary_shape, sigmoid_flops, sum_bytes},
  {OpId::kSigmoidBackward, "aten.sigmoid_backward.default", 2, 2, none(), kPw | kBw, grad_and_input_shape, sigmoid_backward_flops, sum_bytes},
  {OpId::kTanh, "aten.tanh.default", 1, 1, none(), kPw, unary_shape, tanh_flops, sum_bytes},
  {OpId::kTanhBackward, "aten.tanh_backward.default", 2, 2, none(), kPw | kBw, grad_and_input_shape, tanh_backward_flops, sum_bytes},
  // PyTorch import: pooling and upsampling
  {OpId::kAdaptiveAvgPool2d, "aten._adaptive_avg_pool2d.default", 1, 1, kAdaptivePoolAttrs, kReduction, adaptive_avg_pool2d_shape, adaptive_avg_pool2d_flops, sum_bytes},
  {OpId::kAdaptiveAvgPool2dBackward, "aten._adaptive_avg_pool2d_backward.default", 2, 2, none(), kBw, adaptive_avg_pool2d_backward_shape, adaptive_avg_pool2d_backward_flops, sum_bytes},
  {OpId::kAvgPool2d, "aten.avg_pool2d.default", 1, 1, kAvgPoolAttrs, kReduction, avg_pool2d_shape, avg_pool2d_flops, sum_bytes},
  {OpId::kAvgPool2dBackward, "aten.avg_pool2d_backward.default", 2, 2, kAvgPoolAttrs, kBw, avg_pool2d_backward_shape, avg_pool2d_backward_flops, sum_bytes},
  {OpId::kUpsampleBilinear2d, "aten.upsample_bilinear2d.vec", 1, 1, kUpsampleBilinearAttrs, kTraitNone, upsample2d_shape, upsample_bilinear2d_flops, sum_bytes},
  {OpId::kUpsampleBilinear2dBackward, "aten.upsample_bilinear2d_backward.vec", 1, 1, kUpsampleBilinearBackwardAttrs, kBw, upsample2d_backward_shape, upsample_bilinear2d_backward_flops, sum_bytes},
  {OpId::kUpsampleNearest2d, "aten.upsample_nearest2d.vec", 1, 1, kUpsampleNearestAttrs, kTraitNone, upsample2d_shape, upsample_nearest2d_flops, sum_bytes},
  {OpId::kUpsampleNearest2dBackward, "aten.upsample_nearest2d_backward.vec", 1, 1, kUpsampleNearestBackwardAttrs, kBw, upsample2d_backward_shape, upsample_nearest2d_backward_flops, sum_bytes},
  // PyTorch import: group norm
  {OpId::kNativeGroupNorm, "aten.native_group_norm.default", 1, 3, kGroupNormAttrs, kReduction, native_group_norm_shape, group_norm_flops, sum_bytes},
  {OpId::kNativeGroupNormBackward, "aten.native_group_norm_backward.default", 4, 5, kGroupNormBackwardAttrs, kReduction | kBw, native_group_norm_backward_shape, group_norm_backward_flops, sum_bytes},
  // PyTorch import: shape ops
  {OpId::kConstantPadNd, "aten.constant_pad_nd.default", 1, 1, kConstantPadAttrs, kTraitNone, constant_pad_nd_shape, zero_cost, sum_bytes},
  {OpId::kRoll, "aten.roll.default", 1, 1, kRollAttrs, kTraitNone, roll_shape, zero_cost, sum_bytes},
  {OpId::kSqueeze, "aten.squeeze.default", 1, 1, none(), kView, squeeze_shape, zero_cost, zero_cost},
  {OpId::kSqueezeDim, "aten.squeeze.dim", 1, 1, kDimAttrs, kView, squeeze_dim_shape, zero_cost, zero_cost},
  {OpId::kStack, "aten.stack.default", 1, 64, kCatAttrs, kTraitNone, stack_shape, zero_cost, sum_bytes},
  // PyTorch import: per-pixel loss
  {OpId::kNllLoss2dBackward, "aten.nll_loss2d_backward.default", 4, 5, kNllLossAttrs, kBw, nll_loss2d_backward_shape, nll_loss2d_flops, sum_bytes},
  {OpId::kNllLoss2dForward, "aten.nll_loss2d_forward.default", 2, 3, kNllLossAttrs, kReduction, nll_loss2d_forward_shape, nll_loss2d_flops, sum_bytes},
}};
// clang-format on

constexpr bool table_is_complete() {
  for (int i = 0; i < kOpCount; ++i) {
    const OpDef& def = kOps[static_cast<size_t>(i)];
    if (static_cast<int>(def.id) != i) return false;
    if (def.name.empty() || def.shape == nullptr || def.flops == nullptr || def.bytes == nullptr) {
      return false;
    }
    if (def.min_inputs > def.max_inputs) return false;
  }
  return true;
}
// Under -fsanitize GCC cannot compare function addresses at compile time; the
// normal build checks the same table.
#ifndef AUTOPAR_SANITIZED
static_assert(table_is_complete(),
              "every OpId needs one entry, in enum order, with a shape rule, FLOPs and bytes");
#endif

Status check_attrs(const OpDef& def, const Attrs& attrs) {
  for (const Attr& attr : attrs.items()) {
    auto spec = std::find_if(def.attrs.begin(), def.attrs.end(),
                             [&](const AttrSpec& s) { return s.name == attr.name; });
    if (spec == def.attrs.end()) {
      std::string known;
      for (const AttrSpec& s : def.attrs) known += (known.empty() ? "" : ", ") + std::string(s.name);
      return make_error("{} has no attribute '{}' (it takes: {})", def.name, attr.name,
                        known.empty() ? "none" : known);
    }
    if (!attr_matches(attr.value, spec->type)) {
      return make_error("{} attribute '{}' must be {}, got {}", def.name, attr.name,
                        attr_type_name(spec->type), attr_value_to_string(attr.value));
    }
  }
  for (const AttrSpec& spec : def.attrs) {
    if (spec.required && !attrs.has(spec.name)) {
      return make_error("{} needs attribute '{}' ({})", def.name, spec.name,
                        attr_type_name(spec.type));
    }
  }
  return ok_status();
}

}  // namespace

const OpDef& op_def(OpId id) { return kOps[static_cast<size_t>(id)]; }

std::span<const OpDef> all_ops() { return kOps; }

std::optional<OpId> find_op(std::string_view name) {
  for (const OpDef& def : kOps) {
    if (def.name == name && def.id != OpId::kGeneric) return def.id;
  }
  return std::nullopt;
}

Expected<std::vector<TensorMeta>> infer_outputs(OpId id, const OpCall& call) {
  const OpDef& def = op_def(id);
  if (call.num_inputs() < def.min_inputs || call.num_inputs() > def.max_inputs) {
    if (def.min_inputs == def.max_inputs) {
      return make_error("{} takes {} tensor inputs, got {}", def.name, def.min_inputs,
                        call.num_inputs());
    }
    return make_error("{} takes {} to {} tensor inputs, got {}", def.name, def.min_inputs,
                      def.max_inputs, call.num_inputs());
  }
  if (id != OpId::kGeneric) {
    if (Status s = check_attrs(def, call.attrs); !s) return s.error();
  }
  if (id != OpId::kGetItem) {
    for (int i = 0; i < call.num_inputs(); ++i) {
      if (call.input_outputs[static_cast<size_t>(i)]->size() != 1) {
        return make_error("{} input {} has {} outputs; select one with getitem", def.name, i,
                          call.input_outputs[static_cast<size_t>(i)]->size());
      }
    }
  }
  Expected<std::vector<TensorMeta>> outputs = def.shape(call);
  if (!outputs) return make_error_like(outputs.error(), "{}: {}", def.name, outputs.error().message);
  return outputs;
}

double sum_bytes(const OpCall& call, std::span<const TensorMeta> outputs) {
  return rules::in_bytes(call) + rules::out_bytes(outputs);
}

double zero_cost(const OpCall&, std::span<const TensorMeta>) { return 0; }

double out_only_bytes(const OpCall&, std::span<const TensorMeta> outputs) {
  return rules::out_bytes(outputs);
}

}  // namespace autopar
