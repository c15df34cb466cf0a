// The op -> rule registry, in OpId order (the op table's order; a
// static_assert keeps it sorted). A missing op is reported by
// ops_without_rule() (and a coverage test), never silently replicated.
#include <algorithm>
#include <array>

#include "sharding/rules/builders.h"

namespace autopar {
namespace {

using namespace sharding_rules;

struct RuleEntry {
  OpId op;
  RuleFn fn;
};

// clang-format off
constexpr RuleEntry kRules[] = {
  {OpId::kPlaceholder, placeholder_rule},
  {OpId::kGetItem, getitem_rule},
  {OpId::kGeneric, generic_rule},
  {OpId::kAddmm, addmm_rule},
  {OpId::kBaddbmm, baddbmm_rule},
  {OpId::kBmm, bmm_rule},
  {OpId::kMm, mm_rule},
  {OpId::kClone, pointwise_linear_rule},
  {OpId::kExpand, expand_rule},
  {OpId::kT, t_rule},
  {OpId::kTranspose, transpose_rule},
  {OpId::kUnsafeView, view_rule},
  {OpId::kUnsqueeze, unsqueeze_rule},
  {OpId::kView, view_rule},
  {OpId::kConj, conj_rule},
  {OpId::kViewAsComplex, view_as_complex_rule},
  {OpId::kViewAsReal, view_as_real_rule},
  {OpId::kAddScalar, pointwise_nonlinear_rule},
  {OpId::kAddTensor, add_tensor_rule},
  {OpId::kClamp, pointwise_nonlinear_rule},
  {OpId::kDivScalar, pointwise_linear_rule},
  {OpId::kDivTensor, div_tensor_rule},
  {OpId::kEqScalar, pointwise_nonlinear_rule},
  {OpId::kFillScalar, fill_rule},
  {OpId::kMaskedFillScalar, masked_fill_rule},
  {OpId::kMulScalar, pointwise_linear_rule},
  {OpId::kMulTensor, mul_tensor_rule},
  {OpId::kNeScalar, pointwise_nonlinear_rule},
  {OpId::kOnesLike, pointwise_nonlinear_rule},
  {OpId::kPowTensorScalar, pointwise_nonlinear_rule},
  {OpId::kRelu, pointwise_nonlinear_rule},
  {OpId::kRsqrt, pointwise_nonlinear_rule},
  {OpId::kSilu, pointwise_nonlinear_rule},
  {OpId::kSiluBackward, grad_linear_rule},
  {OpId::kSubTensor, add_tensor_rule},
  {OpId::kThresholdBackward, grad_linear_rule},
  {OpId::kToCopy, pointwise_linear_rule},
  {OpId::kWhereSelf, where_self_rule},
  {OpId::kZerosLike, pointwise_linear_rule},
  {OpId::kMean, mean_rule},
  {OpId::kMeanDim, mean_rule},
  {OpId::kSum, sum_rule},
  {OpId::kSumDimIntList, sum_rule},
  {OpId::kEmbedding, embedding_rule},
  {OpId::kEmbeddingDenseBackward, embedding_dense_backward_rule},
  {OpId::kLogSoftmax, log_softmax_rule},
  {OpId::kLogSoftmaxBackwardData, log_softmax_backward_rule},
  {OpId::kNllLossBackward, nll_loss_backward_rule},
  {OpId::kNllLossForward, nll_loss_forward_rule},
  {OpId::kSdpaFlashCpu, sdpa_rule},
  {OpId::kSdpaFlashCpuBackward, sdpa_backward_rule},
  {OpId::kBernoulliP, random_rule},
  // PyTorch import: CNN ops
  {OpId::kConvolution, convolution_rule},
  {OpId::kConvolutionBackward, convolution_backward_rule},
  {OpId::kHardtanh, pointwise_nonlinear_rule},
  {OpId::kHardtanhBackward, grad_linear_rule},
  {OpId::kMaxPool2dWithIndices, max_pool2d_with_indices_rule},
  {OpId::kMaxPool2dWithIndicesBackward, max_pool2d_with_indices_backward_rule},
  {OpId::kNativeBatchNorm, native_batch_norm_rule},
  {OpId::kNativeBatchNormBackward, native_batch_norm_backward_rule},
  // PyTorch import: transformer ops
  {OpId::kCat, cat_rule},
  {OpId::kGelu, pointwise_nonlinear_rule},
  {OpId::kGeluBackward, grad_linear_rule},
  {OpId::kNativeLayerNorm, native_layer_norm_rule},
  {OpId::kNativeLayerNormBackward, native_layer_norm_backward_rule},
  {OpId::kPermute, permute_rule},
  {OpId::kSelectBackward, select_backward_rule},
  {OpId::kSelectInt, select_rule},
  {OpId::kSliceBackward, slice_backward_rule},
  {OpId::kSliceTensor, slice_rule},
  {OpId::kSoftmax, log_softmax_rule},
  {OpId::kSoftmaxBackwardData, log_softmax_backward_rule},
  // PyTorch import: model-zoo activations
  {OpId::kHardsigmoid, pointwise_nonlinear_rule},
  {OpId::kHardsigmoidBackward, grad_linear_rule},
  {OpId::kHardswish, pointwise_nonlinear_rule},
  {OpId::kHardswishBackward, grad_linear_rule},
  {OpId::kSigmoid, pointwise_nonlinear_rule},
  {OpId::kSigmoidBackward, grad_linear_rule},
  {OpId::kTanh, pointwise_nonlinear_rule},
  {OpId::kTanhBackward, grad_linear_rule},
  // PyTorch import: pooling and upsampling
  {OpId::kAdaptiveAvgPool2d, pool_rule},
  {OpId::kAdaptiveAvgPool2dBackward, pool_backward_rule},
  {OpId::kAvgPool2d, pool_rule},
  {OpId::kAvgPool2dBackward, pool_backward_rule},
  {OpId::kUpsampleBilinear2d, pool_rule},
  {OpId::kUpsampleBilinear2dBackward, pool_rule},
  {OpId::kUpsampleNearest2d, pool_rule},
  {OpId::kUpsampleNearest2dBackward, pool_rule},
  // PyTorch import: group norm
  {OpId::kNativeGroupNorm, native_group_norm_rule},
  {OpId::kNativeGroupNormBackward, native_group_norm_backward_rule},
  // PyTorch import: shape ops
  {OpId::kConstantPadNd, constant_pad_nd_rule},
  {OpId::kRoll, roll_rule},
  {OpId::kSqueeze, view_rule},
  {OpId::kSqueezeDim, view_rule},
  {OpId::kStack, stack_rule},
  // PyTorch import: per-pixel loss
  {OpId::kNllLoss2dBackward, nll_loss2d_backward_rule},
  {OpId::kNllLoss2dForward, nll_loss2d_forward_rule},
};
// clang-format on

constexpr bool rules_are_sorted() {
  for (size_t i = 1; i < std::size(kRules); ++i) {
    if (kRules[i - 1].op >= kRules[i].op) return false;
  }
  return true;
}
static_assert(rules_are_sorted(), "keep kRules in OpId order, one entry per op");

// Indexed by OpId, built once from the sorted list.
const std::array<RuleFn, kOpCount>& rule_table() {
  static const std::array<RuleFn, kOpCount> table = [] {
    std::array<RuleFn, kOpCount> t{};
    for (const RuleEntry& e : kRules) t[static_cast<size_t>(e.op)] = e.fn;
    return t;
  }();
  return table;
}

}  // namespace

bool has_rule(OpId op) { return rule_table()[static_cast<size_t>(op)] != nullptr; }

Expected<OpRule> op_rule(OpId op, const RuleCall& call) {
  RuleFn fn = rule_table()[static_cast<size_t>(op)];
  if (fn == nullptr) return make_error("{} has no sharding rule (src/sharding/rules/)", op_name(op));
  Expected<OpRule> rule = fn(call);
  if (!rule) return make_error_like(rule.error(), "{} sharding rule: {}", op_name(op), rule.error().message);
  return rule;
}

std::vector<OpId> ops_without_rule() {
  std::vector<OpId> missing;
  for (const OpDef& def : all_ops()) {
    if (!has_rule(def.id)) missing.push_back(def.id);
  }
  return missing;
}

}  // namespace autopar
