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

// clang-format off
constexpr std::array<GradEntry, kOpCount> kRules = {{
  {OpId::kPlaceholder, nullptr},
  {OpId::kGetItem, grad::getitem},
  {OpId::kAddmm, grad::addmm},
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
  {OpId::kDivScalar, grad::div_scalar},
  {OpId::kMulScalar, grad::mul_scalar},
  {OpId::kMulTensor, grad::mul_tensor},
  {OpId::kPowTensorScalar, grad::pow_tensor_scalar},
  {OpId::kRelu, grad::relu},
  {OpId::kRsqrt, grad::rsqrt},
  {OpId::kSilu, grad::silu},
  {OpId::kSiluBackward, nullptr},
  {OpId::kThresholdBackward, nullptr},
  {OpId::kToCopy, grad::to_copy},
  {OpId::kMeanDim, grad::mean_dim},
  {OpId::kSumDimIntList, grad::sum_dim},
  {OpId::kEmbedding, grad::embedding},
  {OpId::kEmbeddingDenseBackward, nullptr},
  {OpId::kLogSoftmax, grad::log_softmax},
  {OpId::kLogSoftmaxBackwardData, nullptr},
  {OpId::kNllLossBackward, nullptr},
  {OpId::kNllLossForward, grad::nll_loss_forward},
  {OpId::kSdpaFlashCpu, grad::sdpa_flash_cpu},
  {OpId::kSdpaFlashCpuBackward, nullptr},
}};
// clang-format on

constexpr bool listed_not_differentiable(OpId id) {
  return std::find(kNotDifferentiable.begin(), kNotDifferentiable.end(), id) !=
         kNotDifferentiable.end();
}

constexpr bool table_is_complete() {
  for (int i = 0; i < kOpCount; ++i) {
    const GradEntry& entry = kRules[static_cast<size_t>(i)];
    if (static_cast<int>(entry.id) != i) return false;
    if ((entry.fn == nullptr) != listed_not_differentiable(entry.id)) return false;
  }
  return std::is_sorted(kNotDifferentiable.begin(), kNotDifferentiable.end());
}
static_assert(table_is_complete(),
              "every OpId needs a gradient rule or a place in kNotDifferentiable, in enum order");

}  // namespace

GradFn grad_rule(OpId op) { return kRules[static_cast<size_t>(op)].fn; }

bool is_differentiable(OpId op) { return grad_rule(op) != nullptr; }

std::span<const OpId> non_differentiable_ops() { return kNotDifferentiable; }

}  // namespace autopar
