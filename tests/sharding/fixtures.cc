#include "fixtures.h"

namespace autopar::testing {

HardwareProfile round_device() {
  HardwareProfile hw;
  hw.name = "round";
  hw.peak_flops[static_cast<size_t>(DType::f32)] = 1e12;
  hw.peak_flops[static_cast<size_t>(DType::bf16)] = 1e12;
  hw.memory_bandwidth_bytes_per_s = 100e9;
  hw.devices_per_node = 4;
  hw.intra_node = {100e9, 1e-6};
  hw.inter_node = {10e9, 10e-6};
  return hw;
}

DeviceMesh mesh_of(std::vector<int64_t> shape, std::vector<std::string> names) {
  MeshOptions options;
  options.names = std::move(names);
  return *make_mesh(shape, round_device(), options);
}

namespace {

TensorMeta f32(Shape shape) { return {std::move(shape), DType::f32}; }
TensorMeta i64(Shape shape) { return {std::move(shape), DType::i64}; }

struct Builder {
  OpFixture fx;
  NodeId in(TensorMeta meta) {
    return fx.graph.add_placeholder(fx.graph.fresh_name("x"), PlaceholderKind::kInput, std::move(meta));
  }
  std::optional<OpFixture> op(OpId op, std::vector<NodeId> inputs, Attrs attrs = {}) {
    Expected<NodeId> id = fx.graph.add(op, std::move(inputs), std::move(attrs));
    if (!id) return std::nullopt;
    fx.node = *id;
    return std::move(fx);
  }
};

std::optional<OpFixture> unary(OpId op, Attrs attrs = {}) {
  Builder b;
  return b.op(op, {b.in(f32({4, 6}))}, std::move(attrs));
}

using V = std::vector<int64_t>;

}  // namespace

// Shapes mix dims of 4 and 8 (shardable twice on a 2x2 mesh), 6 (once) and
// 1 or 2 (never twice), so the golden strategies show validity filtering.
std::optional<OpFixture> op_fixture(OpId op) {
  Builder b;
  switch (op) {
    case OpId::kPlaceholder: {
      b.fx.node = b.in(f32({4, 6}));
      return std::move(b.fx);
    }
    case OpId::kGeneric: {
      NodeId x = b.in(f32({4, 6}));
      Expected<NodeId> id =
          b.fx.graph.add_generic("aten.triu.default", {x}, {{"diagonal", int64_t{1}}}, {f32({4, 6})});
      if (!id) return std::nullopt;
      b.fx.node = *id;
      return std::move(b.fx);
    }
    case OpId::kBernoulliP: return unary(op, {{"p", 0.5}});
    case OpId::kGetItem: {
      TensorMeta t = f32({2, 4, 8, 4});
      NodeId sdpa = *b.fx.graph.add(OpId::kSdpaFlashCpu, {b.in(t), b.in(t), b.in(t)},
                                    {{"is_causal", true}});
      return b.op(op, {sdpa}, {{"index", int64_t{1}}});
    }
    case OpId::kAddmm: return b.op(op, {b.in(f32({8})), b.in(f32({4, 6})), b.in(f32({6, 8}))});
    case OpId::kBmm: return b.op(op, {b.in(f32({2, 4, 6})), b.in(f32({2, 6, 8}))});
    case OpId::kMm: return b.op(op, {b.in(f32({4, 6})), b.in(f32({6, 8}))});
    case OpId::kClone: return unary(op);
    case OpId::kExpand: return b.op(op, {b.in(f32({1, 6}))}, {{"size", V{4, 6}}});
    case OpId::kT: return unary(op);
    case OpId::kTranspose:
      return b.op(op, {b.in(f32({2, 4, 6}))}, {{"dim0", int64_t{1}}, {"dim1", int64_t{2}}});
    case OpId::kUnsafeView: return b.op(op, {b.in(f32({4, 6}))}, {{"size", V{24}}});
    case OpId::kUnsqueeze: return unary(op, {{"dim", int64_t{1}}});
    case OpId::kView: return b.op(op, {b.in(f32({4, 24}))}, {{"size", V{4, 4, 6}}});
    case OpId::kConj: return b.op(op, {b.in({{4, 6}, DType::c64})});
    case OpId::kViewAsComplex: return b.op(op, {b.in(f32({4, 6, 2}))});
    case OpId::kViewAsReal: return b.op(op, {b.in({{4, 6}, DType::c64})});
    case OpId::kAddScalar: return unary(op, {{"other", 1.0}});
    case OpId::kAddTensor: return b.op(op, {b.in(f32({4, 6})), b.in(f32({6}))});
    case OpId::kDivScalar: return unary(op, {{"other", 2.0}});
    case OpId::kMulScalar: return unary(op, {{"other", 2.0}});
    case OpId::kMulTensor: return b.op(op, {b.in(f32({4, 6})), b.in(f32({4, 1}))});
    case OpId::kPowTensorScalar: return unary(op, {{"exponent", 2.0}});
    case OpId::kRelu: return unary(op);
    case OpId::kRsqrt: return unary(op);
    case OpId::kSilu: return unary(op);
    case OpId::kSiluBackward: return b.op(op, {b.in(f32({4, 6})), b.in(f32({4, 6}))});
    case OpId::kThresholdBackward:
      return b.op(op, {b.in(f32({4, 6})), b.in(f32({4, 6}))}, {{"threshold", 0.0}});
    case OpId::kToCopy: return unary(op, {{"dtype", DType::bf16}});
    case OpId::kMeanDim: return unary(op, {{"dim", V{1}}, {"keepdim", true}});
    case OpId::kSumDimIntList: return unary(op, {{"dim", V{0}}});
    case OpId::kEmbedding: return b.op(op, {b.in(f32({8, 4})), b.in(i64({2, 4}))});
    case OpId::kEmbeddingDenseBackward:
      return b.op(op, {b.in(f32({2, 4, 4})), b.in(i64({2, 4}))}, {{"num_weights", int64_t{8}}});
    case OpId::kLogSoftmax: return b.op(op, {b.in(f32({4, 8}))}, {{"dim", int64_t{1}}});
    case OpId::kLogSoftmaxBackwardData:
      return b.op(op, {b.in(f32({4, 8})), b.in(f32({4, 8}))},
                  {{"dim", int64_t{1}}, {"input_dtype", DType::f32}});
    case OpId::kNllLossBackward:
      return b.op(op, {b.in(f32({})), b.in(f32({4, 8})), b.in(i64({4})), b.in(f32({}))},
                  {{"reduction", int64_t{1}}, {"ignore_index", int64_t{-100}}});
    case OpId::kNllLossForward:
      return b.op(op, {b.in(f32({4, 8})), b.in(i64({4}))},
                  {{"reduction", int64_t{1}}, {"ignore_index", int64_t{-100}}});
    case OpId::kSdpaFlashCpu:
      return b.op(op, {b.in(f32({2, 4, 8, 4})), b.in(f32({2, 4, 8, 4})), b.in(f32({2, 4, 8, 4}))},
                  {{"is_causal", true}});
    case OpId::kSdpaFlashCpuBackward: {
      TensorMeta t = f32({2, 4, 8, 4});
      return b.op(op, {b.in(t), b.in(t), b.in(t), b.in(t), b.in(t), b.in(f32({2, 4, 8}))},
                  {{"is_causal", true}});
    }
    // PyTorch import: CNN ops
    case OpId::kConvolution:
    case OpId::kConvolutionBackward:
    case OpId::kHardtanh:
    case OpId::kHardtanhBackward:
    case OpId::kMaxPool2dWithIndices:
    case OpId::kMaxPool2dWithIndicesBackward:
    case OpId::kNativeBatchNorm:
    case OpId::kNativeBatchNormBackward: return cnn_op_fixture(op);
    // PyTorch import: transformer ops
    case OpId::kCat: return b.op(op, {b.in(f32({4, 2})), b.in(f32({4, 6}))}, {{"dim", int64_t{1}}});
    case OpId::kGelu: return unary(op);
    case OpId::kGeluBackward: return b.op(op, {b.in(f32({4, 6})), b.in(f32({4, 6}))});
    case OpId::kNativeLayerNorm:
      return b.op(op, {b.in(f32({4, 8, 6})), b.in(f32({6})), b.in(f32({6}))},
                  {{"normalized_shape", V{6}}, {"eps", 1e-5}});
    case OpId::kNativeLayerNormBackward: {
      TensorMeta x = f32({4, 8, 6});
      TensorMeta stats = f32({4, 8, 1});
      return b.op(op, {b.in(x), b.in(x), b.in(stats), b.in(stats), b.in(f32({6})), b.in(f32({6}))},
                  {{"normalized_shape", V{6}}});
    }
    case OpId::kPermute: return b.op(op, {b.in(f32({2, 4, 6}))}, {{"dims", V{2, 0, 1}}});
    case OpId::kSelectBackward:
      return b.op(op, {b.in(f32({4, 6}))},
                  {{"input_sizes", V{4, 2, 6}}, {"dim", int64_t{1}}, {"index", int64_t{1}}});
    case OpId::kSelectInt:
      return b.op(op, {b.in(f32({4, 2, 6}))}, {{"dim", int64_t{1}}, {"index", int64_t{1}}});
    case OpId::kSliceBackward:
      return b.op(op, {b.in(f32({4, 3}))}, {{"input_sizes", V{4, 6}}, {"dim", int64_t{1}},
                                            {"start", int64_t{1}}, {"end", int64_t{4}}, {"step", int64_t{1}}});
    case OpId::kSliceTensor:
      return b.op(op, {b.in(f32({4, 6}))}, {{"dim", int64_t{1}}, {"start", int64_t{1}}, {"end", int64_t{4}}});
    case OpId::kSoftmax: return b.op(op, {b.in(f32({4, 8}))}, {{"dim", int64_t{1}}});
    case OpId::kSoftmaxBackwardData:
      return b.op(op, {b.in(f32({4, 8})), b.in(f32({4, 8}))},
                  {{"dim", int64_t{1}}, {"input_dtype", DType::f32}});
    default: return zoo_op_fixture(op);  // ops without one: the golden test lists them
  }
  return std::nullopt;
}

}  // namespace autopar::testing
