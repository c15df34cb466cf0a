// The gradient rule table: one entry per OpId, in enum order. An op either has
// a rule or appears in kNotDifferentiable; the static_assert makes adding an op
// without deciding which a compile error.
#include <algorithm>
#include <array>

#include "autodiff/grad_rules.h"

namespace autopar {
namespace {

struct GradEntry {
  OpId id;
  GradFn fn;  // nullptr: listed in kNotDifferentiable
};

// Leaves and ops that only autodiff emits. Their inputs get no gradient.
constexpr std::array kNotDifferentiable = {
    OpId::kPlaceholder,
    OpId::kSiluBackward,
    OpId::kThresholdBackward,
    OpId::kEmbeddingDenseBackward,
    OpId::kLogSoftmaxBackwardData,
    OpId::kNllLossBackward,
    OpId::kSdpaFlashCpuBackward,
};

// Ops that appear only in imported joint graphs (the PyTorch exporter traces
// forward and backward together, so their gradients are already in the graph).
// autopar's autodiff has no rule for them and refuses a forward graph that
// uses one (build_joint_graph), rather than silently cutting the gradient.
constexpr std::array kImportedOnly = {
    OpId::kGeneric,
    OpId::kBaddbmm,
    // pointwise and reductions of the model zoo
    OpId::kClamp,
    OpId::kDivTensor,
    OpId::kEqScalar,
    OpId::kFillScalar,
    OpId::kMaskedFillScalar,
    OpId::kNeScalar,
    OpId::kOnesLike,
    OpId::kSubTensor,
    OpId::kWhereSelf,
    OpId::kZerosLike,
    OpId::kMean,
    OpId::kSum,
    OpId::kBernoulliP,
    // PyTorch import: CNN ops
    OpId::kConvolution,
    OpId::kConvolutionBackward,
    OpId::kHardtanh,
    OpId::kHardtanhBackward,
    OpId::kMaxPool2dWithIndices,
    OpId::kMaxPool2dWithIndicesBackward,
    OpId::kNativeBatchNorm,
    OpId::kNativeBatchNormBackward,
    // PyTorch import: transformer ops
    OpId::kCat,
    OpId::kGelu,
    OpId::kGeluBackward,
    OpId::kNativeLayerNorm,
    OpId::kNativeLayerNormBackward,
    OpId::kPermute,
    OpId::kSelectBackward,
    OpId::kSelectInt,
    OpId::kSliceBackward,
    OpId::kSliceTensor,
    OpId::kSoftmax,
    OpId::kSoftmaxBackwardData,
    // PyTorch import: model-zoo activations
    OpId::kHardsigmoid,
    OpId::kHardsigmoidBackward,
    OpId::kHardswish,
    OpId::kHardswishBackward,
    OpId::kSigmoid,
    OpId::kSigmoidBackward,
    OpId::kTanh,
    OpId::kTanhBackward,
    // PyTorch import: pooling and upsampling
    OpId::kAdaptiveAvgPool2d,
    OpId::kAdaptiveAvgPool2dBackward,
    OpId::kAvgPool2d,
    OpId::kAvgPool2dBackward,
    OpId::kUpsampleBilinear2d,
    OpId::kUpsampleBilinear2dBackward,
    OpId::kUpsampleNearest2d,
    OpId::kUpsampleNearest2dBackward,
    // PyTorch import: group norm
    OpId::kNativeGroupNorm,
    OpId::kNativeGroupNormBackward,
    // PyTorch import: shape ops
    OpId::kConstantPadNd,
    OpId::kRoll,
    OpId::kSqueeze,
    OpId::kSqueezeDim,
    OpId::kStack,
    // PyTorch import: per-pixel loss
    OpId::kNllLoss2dBackward,
    OpId::kNllLoss2dForward,
};

// clang-format off
constexpr std::array<GradEntry, kOpCount> kRules = {{
  {OpId::kPlaceholder, nullptr},
  {OpId::kGetItem, grad::getitem},
  {OpId::kGeneric, nullptr},
  {OpId::kAddmm, grad::addmm},
  {OpId::kBaddbmm, nullptr},
  {OpId::kBmm, grad::bmm},
  {OpId::kMm, grad::mm},
  {OpId::kClone, grad::clone},
  {OpId::kExpand, grad::expand},
  {OpId::kT, grad::t},
  {OpId::kTranspose, grad::transpose},
  {OpId::kUnsafeView, grad::view},
  {OpId::kUnsqueeze, grad::view},
  {OpId::kView, grad::view},
  {OpId::kConj, grad::conj},
  {OpId::kViewAsComplex, grad::view_as_complex},
  {OpId::kViewAsReal, grad::view_as_real},
  {OpId::kAddScalar, grad::add_scalar},
  {OpId::kAddTensor, grad::add_tensor},
  {OpId::kClamp, nullptr},
  {OpId::kDivScalar, grad::div_scalar},
  {OpId::kDivTensor, nullptr},
  {OpId::kEqScalar, nullptr},
  {OpId::kFillScalar, nullptr},
  {OpId::kMaskedFillScalar, nullptr},
  {OpId::kMulScalar, grad::mul_scalar},
  {OpId::kMulTensor, grad::mul_tensor},
  {OpId::kNeScalar, nullptr},
  {OpId::kOnesLike, nullptr},
  {OpId::kPowTensorScalar, grad::pow_tensor_scalar},
  {OpId::kRelu, grad::relu},
  {OpId::kRsqrt, grad::rsqrt},
  {OpId::kSilu, grad::silu},
  {OpId::kSiluBackward, nullptr},
  {OpId::kSubTensor, nullptr},
  {OpId::kThresholdBackward, nullptr},
  {OpId::kToCopy, grad::to_copy},
  {OpId::kWhereSelf, nullptr},
  {OpId::kZerosLike, nullptr},
  {OpId::kMean, nullptr},
  {OpId::kMeanDim, grad::mean_dim},
  {OpId::kSum, nullptr},
  {OpId::kSumDimIntList, grad::sum_dim},
  {OpId::kEmbedding, grad::embedding},
  {OpId::kEmbeddingDenseBackward, nullptr},
  {OpId::kLogSoftmax, grad::log_softmax},
  {OpId::kLogSoftmaxBackwardData, nullptr},
  {OpId::kNllLossBackward, nullptr},
  {OpId::kNllLossForward, grad::nll_loss_forward},
  {OpId::kSdpaFlashCpu, grad::sdpa_flash_cpu},
  {OpId::kSdpaFlashCpuBackward, nullptr},
  {OpId::kBernoulliP, nullptr},
  // PyTorch import: CNN ops
  {OpId::kConvolution, nullptr},
  {OpId::kConvolutionBackward, nullptr},
  {OpId::kHardtanh, nullptr},
  {OpId::kHardtanhBackward, nullptr},
  {OpId::kMaxPool2dWithIndices, nullptr},
  {OpId::kMaxPool2dWithIndicesBackward, nullptr},
  {OpId::kNativeBatchNorm, nullptr},
  {OpId::kNativeBatchNormBackward, nullptr},
  // PyTorch import: transformer ops
  {OpId::kCat, nullptr},
  {OpId::kGelu, nullptr},
  {OpId::kGeluBackward, nullptr},
  {OpId::kNativeLayerNorm, nullptr},
  {OpId::kNativeLayerNormBackward, nullptr},
  {OpId::kPermute, nullptr},
  {OpId::kSelectBackward, nullptr},
  {OpId::kSelectInt, nullptr},
  {OpId::kSliceBackward, nullptr},
  {OpId::kSliceTensor, nullptr},
  {OpId::kSoftmax, nullptr},
  {OpId::kSoftmaxBackwardData, nullptr},
  // PyTorch import: model-zoo activations
  {OpId::kHardsigmoid, nullptr},
  {OpId::kHardsigmoidBackward, nullptr},
  {OpId::kHardswish, nullptr},
  {OpId::kHardswishBackward, nullptr},
  {OpId::kSigmoid, nullptr},
  {OpId::kSigmoidBackward, nullptr},
  {OpId::kTanh, nullptr},
  {OpId::kTanhBackward, nullptr},
  // PyTorch import: pooling and upsampling
  {OpId::kAdaptiveAvgPool2d, nullptr},
  {OpId::kAdaptiveAvgPool2dBackward, nullptr},
  {OpId::kAvgPool2d, nullptr},
  {OpId::kAvgPool2dBackward, nullptr},
  {OpId::kUpsampleBilinear2d, nullptr},
  {OpId::kUpsampleBilinear2dBackward, nullptr},
  {OpId::kUpsampleNearest2d, nullptr},
  {OpId::kUpsampleNearest2dBackward, nullptr},
  // PyTorch import: group norm
  {OpId::kNativeGroupNorm, nullptr},
  {OpId::kNativeGroupNormBackward, nullptr},
  // PyTorch import: shape ops
  {OpId::kConstantPadNd, nullptr},
  {OpId::kRoll, nullptr},
  {OpId::kSqueeze, nullptr},
  {OpId::kSqueezeDim, nullptr},
  {OpId::kStack, nullptr},
  // PyTorch import: per-pixel loss
  {OpId::kNllLoss2dBackward, nullptr},
  {OpId::kNllLoss2dForward, nullptr},
}};
// clang-format on

constexpr bool listed_not_differentiable(OpId id) {
  return std::find(kNotDifferentiable.begin(), kNotDifferentiable.end(), id) !=
         kNotDifferentiable.end();
}

constexpr bool listed_imported_only(OpId id) {
  return std::find(kImportedOnly.begin(), kImportedOnly.end(), id) != kImportedOnly.end();
}

constexpr bool table_is_complete() {
  for (int i = 0; i < kOpCount; ++i) {
    const GradEntry& entry = kRules[static_cast<size_t>(i)];
    if (static_cast<int>(entry.id) != i) return false;
    bool listed = listed_not_differentiable(entry.id) || listed_imported_only(entry.id);
    if ((entry.fn == nullptr) != listed) return false;
  }
  return std::is_sorted(kNotDifferentiable.begin(), kNotDifferentiable.end()) &&
         std::is_sorted(kImportedOnly.begin(), kImportedOnly.end());
}
// Under -fsanitize GCC cannot compare function addresses at compile time; the
// normal build checks the same table.
#ifndef AUTOPAR_SANITIZED
static_assert(table_is_complete(),
              "every OpId needs a gradient rule or a place in kNotDifferentiable or kImportedOnly, in "
              "enum order");
#endif

}  // namespace

GradFn grad_rule(OpId op) { return kRules[static_cast<size_t>(op)].fn; }

bool is_differentiable(OpId op) { return grad_rule(op) != nullptr; }

std::span<const OpId> non_differentiable_ops() { return kNotDifferentiable; }

std::span<const OpId> imported_only_ops() { return kImportedOnly; }

bool is_imported_only(OpId op) { return listed_imported_only(op); }

}  // namespace autopar
