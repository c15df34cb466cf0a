// The op table: every op the IR knows, declared exactly once.
//
// Each op has an aten overload name, its tensor-input arity, its attribute
// schema, traits, a shape/dtype rule, and a cost (FLOPs and bytes moved). The
// table is an array indexed by OpId; op_table.cc static_asserts that it has one
// complete entry per enumerator, so an op cannot be added without its shape rule
// and cost (habit from ggml's GGML_OP_COUNT guard). Op families live in
// src/ir/ops/*.cc, one file each.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "ir/attr.h"
#include "ir/expected.h"
#include "ir/tensor_meta.h"

namespace autopar {

// Sorted by family, then by name. The printed name is in the table.
enum class OpId : uint16_t {
  // graph structure
  kPlaceholder,
  kGetItem,
  // any other aten op libtorch has, run through its dispatcher (see kGeneric below)
  kGeneric,
  // matmul
  kAddmm,
  kBaddbmm,
  kBmm,
  kMm,
  // views and layout
  kClone,
  kExpand,
  kT,
  kTranspose,
  kUnsafeView,
  kUnsqueeze,
  kView,
  // complex
  kConj,
  kViewAsComplex,
  kViewAsReal,
  // pointwise
  kAddScalar,
  kAddTensor,
  kClamp,
  kDivScalar,
  kDivTensor,
  kEqScalar,
  kFillScalar,
  kMaskedFillScalar,
  kMulScalar,
  kMulTensor,
  kNeScalar,
  kOnesLike,
  kPowTensorScalar,
  kRelu,
  kRsqrt,
  kSilu,
  kSiluBackward,
  kSubTensor,
  kThresholdBackward,
  kToCopy,
  kWhereSelf,
  kZerosLike,
  // reductions
  kMean,
  kMeanDim,
  kSum,
  kSumDimIntList,
  // nn
  kEmbedding,
  kEmbeddingDenseBackward,
  kLogSoftmax,
  kLogSoftmaxBackwardData,
  kNllLossBackward,
  kNllLossForward,
  kSdpaFlashCpu,
  kSdpaFlashCpuBackward,
  // random (src/ir/ops/random.cc): the same numbers whatever the sharding
  kBernoulliP,
  // PyTorch import: CNN ops (src/ir/ops/cnn.cc; only in imported joint graphs)
  kConvolution,
  kConvolutionBackward,
  kHardtanh,
  kHardtanhBackward,
  kMaxPool2dWithIndices,
  kMaxPool2dWithIndicesBackward,
  kNativeBatchNorm,
  kNativeBatchNormBackward,
  // PyTorch import: transformer ops (src/ir/ops/transformer.cc; only in imported joint graphs)
  kCat,
  kGelu,
  kGeluBackward,
  kNativeLayerNorm,
  kNativeLayerNormBackward,
  kPermute,
  kSelectBackward,
  kSelectInt,
  kSliceBackward,
  kSliceTensor,
  kSoftmax,
  kSoftmaxBackwardData,
  // PyTorch import: model-zoo activations (src/ir/ops/activations.cc)
  kHardsigmoid,
  kHardsigmoidBackward,
  kHardswish,
  kHardswishBackward,
  kSigmoid,
  kSigmoidBackward,
  kTanh,
  kTanhBackward,
  // PyTorch import: pooling and upsampling (src/ir/ops/pooling.cc)
  kAdaptiveAvgPool2d,
  kAdaptiveAvgPool2dBackward,
  kAvgPool2d,
  kAvgPool2dBackward,
  kUpsampleBilinear2d,
  kUpsampleBilinear2dBackward,
  kUpsampleNearest2d,
  kUpsampleNearest2dBackward,
  // PyTorch import: group norm (src/ir/ops/norms.cc)
  kNativeGroupNorm,
  kNativeGroupNormBackward,
  // PyTorch import: shape ops (src/ir/ops/shape.cc)
  kConstantPadNd,
  kRoll,
  kSqueeze,
  kSqueezeDim,
  kStack,
  // PyTorch import: per-pixel loss (src/ir/ops/losses.cc)
  kNllLoss2dBackward,
  kNllLoss2dForward,
  kCount
};

inline constexpr int kOpCount = static_cast<int>(OpId::kCount);

// OpId::kGeneric stands for every aten op the op table does not list but
// libtorch has (ir/aten_schema.h): an imported graph may use any of them. Such
// a node carries its aten name (Node::aten) and its outputs come from the
// graph file, never inferred; it is replicated on every mesh dim, costed by
// the bytes it moves, and run through libtorch's dispatcher by schema name.
// The table's own ops are the ones with real rules.

// Trait bits: what kind of computation an op is. Used by cost, sharding
// (follower folding) and the runtime.
enum Trait : uint32_t {
  kTraitNone = 0,
  kPointwise = 1u << 0,   // out[i] = f(in[i]) with broadcasting
  kView = 1u << 1,        // metadata-only in eager PyTorch (may copy here for contiguity)
  kReduction = 1u << 2,   // reduces dims
  kMatmul = 1u << 3,      // contraction
  kStructural = 1u << 4,  // placeholder / getitem: no computation
  kBackward = 1u << 5,    // only emitted by autodiff
  kComplex = 1u << 6,     // produces or consumes complex tensors
};
using Traits = uint32_t;

struct AttrSpec {
  std::string_view name;
  AttrType type;
  bool required = true;
};

// What a rule sees of one call: each input's outputs (an input is a node; only
// getitem may consume a node with several outputs), and the attributes.
struct OpCall {
  std::span<const std::vector<TensorMeta>* const> input_outputs;
  const Attrs& attrs;

  int num_inputs() const { return static_cast<int>(input_outputs.size()); }
  // The single output of input i.
  const TensorMeta& in(int i) const { return (*input_outputs[i])[0]; }
};

using ShapeFn = Expected<std::vector<TensorMeta>> (*)(const OpCall& call);
// FLOPs of one call, given the inferred outputs.
using FlopsFn = double (*)(const OpCall& call, std::span<const TensorMeta> outputs);
// Bytes read plus written in HBM by one call.
using BytesFn = double (*)(const OpCall& call, std::span<const TensorMeta> outputs);

struct OpDef {
  OpId id;
  std::string_view name;  // aten overload name, e.g. "aten.mm.default"
  int min_inputs;
  int max_inputs;
  std::span<const AttrSpec> attrs;
  Traits traits;
  ShapeFn shape;
  FlopsFn flops;
  BytesFn bytes;

  bool has(Trait trait) const { return (traits & trait) != 0; }
};

const OpDef& op_def(OpId id);
std::span<const OpDef> all_ops();
// The op table's op of that name; never kGeneric (not an op name).
std::optional<OpId> find_op(std::string_view name);
inline std::string_view op_name(OpId id) { return op_def(id).name; }

// Checks the call's arity and attributes against the schema, then runs the
// op's shape rule. Errors name the op; callers prefix the node.
Expected<std::vector<TensorMeta>> infer_outputs(OpId id, const OpCall& call);

// Shared cost helpers for rules.
double sum_bytes(const OpCall& call, std::span<const TensorMeta> outputs);  // all in + out
double zero_cost(const OpCall& call, std::span<const TensorMeta> outputs);
// Writes its outputs without reading its inputs' data (zeros_like, fill).
double out_only_bytes(const OpCall& call, std::span<const TensorMeta> outputs);

}  // namespace autopar
