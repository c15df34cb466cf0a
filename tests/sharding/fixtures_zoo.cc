// Fixtures of the model zoo's ops (PyTorch import): the one per op that the
// golden files and the soundness sweep use, and variants the sweep checks too
// (other attributes, optional inputs, masked gradients).
#include "fixtures.h"

namespace autopar::testing {
namespace {

using V = std::vector<int64_t>;
using F = std::vector<double>;

TensorMeta f32(Shape shape) { return {std::move(shape), DType::f32}; }
TensorMeta i64(Shape shape) { return {std::move(shape), DType::i64}; }
TensorMeta mask(Shape shape) { return {std::move(shape), DType::boolean}; }

struct ZooBuilder {
  OpFixture fx;
  NodeId in(TensorMeta meta) {
    return fx.graph.add_placeholder(fx.graph.fresh_name("x"), PlaceholderKind::kInput,
                                    std::move(meta));
  }
  std::optional<OpFixture> op(OpId op, std::vector<TensorMeta> inputs, Attrs attrs = {}) {
    std::vector<NodeId> ids;
    for (TensorMeta& m : inputs) ids.push_back(in(std::move(m)));
    Expected<NodeId> id = fx.graph.add(op, std::move(ids), std::move(attrs));
    if (!id) return std::nullopt;
    fx.node = *id;
    return std::move(fx);
  }
};

std::optional<OpFixture> build(OpId op, std::vector<TensorMeta> inputs, Attrs attrs = {}) {
  return ZooBuilder{}.op(op, std::move(inputs), std::move(attrs));
}

// [N=4, C=4, 6, 6]: batch and channels shard on both axes of a 2x2 mesh.
const Shape kImage{4, 4, 6, 6};
const Shape kSmall{4, 4, 3, 3};

// 3x3 windows, stride 2, padding 1: (6 + 2 - 2 - 1) / 2 + 1 = 3.
Attrs avg_pool_attrs() {
  return {{"kernel_size", V{3, 3}}, {"stride", V{2, 2}}, {"padding", V{1, 1}}};
}

// C = 8 in 4 groups of 2: the group factor shards on both mesh axes.
Attrs group_attrs(int64_t group = 4) {
  return {{"N", int64_t{4}}, {"C", int64_t{8}}, {"HxW", int64_t{9}}, {"group", group}};
}
const Shape kGrouped{4, 8, 3, 3};

std::optional<OpFixture> group_norm_backward(bool weight, V output_mask) {
  std::vector<TensorMeta> in{f32(kGrouped), f32(kGrouped), f32({4, 4}), f32({4, 4})};
  if (weight) in.push_back(f32({8}));
  Attrs attrs = group_attrs();
  attrs.set("output_mask", std::move(output_mask));
  return build(OpId::kNativeGroupNormBackward, std::move(in), std::move(attrs));
}

// self [N=4, C=3, H=4, W=4]: n, h and w shard on both mesh axes, c never.
std::optional<OpFixture> nll_loss2d(int64_t reduction, bool weight) {
  std::vector<TensorMeta> in{f32({4, 3, 4, 4}), i64({4, 4, 4})};
  if (weight) in.push_back(f32({3}));
  return build(OpId::kNllLoss2dForward, std::move(in),
               {{"reduction", reduction}, {"ignore_index", int64_t{-100}}});
}

std::optional<OpFixture> nll_loss2d_backward(int64_t reduction, bool weight) {
  std::vector<TensorMeta> in{f32(reduction == 0 ? Shape{4, 4, 4} : Shape{}), f32({4, 3, 4, 4}),
                             i64({4, 4, 4})};
  if (weight) in.push_back(f32({3}));
  in.push_back(f32({}));
  return build(OpId::kNllLoss2dBackward, std::move(in),
               {{"reduction", reduction}, {"ignore_index", int64_t{-100}}});
}

}  // namespace

std::optional<OpFixture> zoo_op_fixture(OpId op) {
  TensorMeta x = f32({4, 6});
  switch (op) {
    // activations
    case OpId::kHardsigmoid:
    case OpId::kHardswish:
    case OpId::kSigmoid:
    case OpId::kTanh: return build(op, {x});
    case OpId::kHardsigmoidBackward:
    case OpId::kHardswishBackward:
    case OpId::kSigmoidBackward:
    case OpId::kTanhBackward: return build(op, {x, x});
    // pointwise
    case OpId::kClamp: return build(op, {x}, {{"min", -0.5}, {"max", 0.5}});
    case OpId::kDivTensor: return build(op, {x, f32({6})});
    case OpId::kEqScalar: return build(op, {x}, {{"other", 0.0}});
    case OpId::kFillScalar: return build(op, {x}, {{"value", 2.0}});
    case OpId::kMaskedFillScalar: return build(op, {x, mask({6})}, {{"value", -1.0}});
    case OpId::kNeScalar: return build(op, {x}, {{"other", 0.0}});
    case OpId::kOnesLike: return build(op, {x});
    case OpId::kSubTensor: return build(op, {x, f32({4, 1})}, {{"alpha", 2.0}});
    case OpId::kWhereSelf: return build(op, {mask({4, 1}), x, f32({6})});
    case OpId::kZerosLike: return build(op, {x}, {{"dtype", DType::bf16}});
    // full reductions
    case OpId::kMean: return build(op, {x});
    case OpId::kSum: return build(op, {x});
    // matmul
    case OpId::kBaddbmm:
      return build(op, {f32({2, 4, 8}), f32({2, 4, 6}), f32({2, 6, 8})},
                   {{"beta", 0.5}, {"alpha", 2.0}});
    // pooling and upsampling
    case OpId::kAdaptiveAvgPool2d: return build(op, {f32(kImage)}, {{"output_size", V{1, 1}}});
    case OpId::kAdaptiveAvgPool2dBackward: return build(op, {f32({4, 4, 1, 1}), f32(kImage)});
    case OpId::kAvgPool2d: return build(op, {f32(kImage)}, avg_pool_attrs());
    case OpId::kAvgPool2dBackward: return build(op, {f32(kSmall), f32(kImage)}, avg_pool_attrs());
    case OpId::kUpsampleBilinear2d:
      return build(op, {f32(kSmall)}, {{"align_corners", false}, {"scale_factors", F{2, 2}}});
    case OpId::kUpsampleBilinear2dBackward:
      return build(op, {f32(kImage)},
                   {{"input_size", kSmall}, {"align_corners", false}, {"scale_factors", F{2, 2}}});
    case OpId::kUpsampleNearest2d: return build(op, {f32(kSmall)}, {{"scale_factors", F{2, 2}}});
    case OpId::kUpsampleNearest2dBackward:
      return build(op, {f32(kImage)}, {{"input_size", kSmall}, {"scale_factors", F{2, 2}}});
    // norms
    case OpId::kNativeGroupNorm: {
      Attrs attrs = group_attrs();
      attrs.set("eps", 1e-5);
      return build(op, {f32(kGrouped), f32({8}), f32({8})}, std::move(attrs));
    }
    case OpId::kNativeGroupNormBackward: return group_norm_backward(true, {1, 1, 1});
    // shape
    case OpId::kConstantPadNd: return build(op, {f32({4, 6, 4})}, {{"pad", V{1, 1}}});
    case OpId::kRoll: return build(op, {x}, {{"shifts", V{2}}, {"dims", V{1}}});
    case OpId::kStack: return build(op, {x, x}, {{"dim", int64_t{1}}});
    case OpId::kSqueeze: return build(op, {f32({4, 1, 6, 1})});
    case OpId::kSqueezeDim: return build(op, {f32({4, 1, 6})}, {{"dim", int64_t{1}}});
    // losses
    case OpId::kNllLoss2dBackward: return nll_loss2d_backward(1, false);
    case OpId::kNllLoss2dForward: return nll_loss2d(1, false);
    default: break;
  }
  return std::nullopt;
}

std::vector<OpFixture> zoo_variant_fixtures() {
  std::vector<OpFixture> out;
  auto push = [&](std::optional<OpFixture> fx) {
    if (fx) out.push_back(std::move(*fx));
  };
  TensorMeta x = f32({4, 6});
  // gelu's tanh form
  push(build(OpId::kGelu, {x}, {{"approximate", std::string("tanh")}}));
  push(build(OpId::kGeluBackward, {x, x}, {{"approximate", std::string("tanh")}}));
  // pointwise: clamp with one bound; masked_fill with 0 is linear in self
  push(build(OpId::kClamp, {x}, {{"min", 0.0}}));
  push(build(OpId::kMaskedFillScalar, {x, mask({4, 6})}, {{"value", 0.0}}));
  // fill with 0 is linear; a sum in f64
  push(build(OpId::kFillScalar, {x}, {{"value", 0.0}}));
  push(build(OpId::kSum, {x}, {{"dtype", DType::f64}}));
  // baddbmm with a broadcast self
  push(build(OpId::kBaddbmm, {f32({8}), f32({2, 4, 6}), f32({2, 6, 8})}));
  // pooling: ceil_mode (5x5 -> 3x3); no padding in the count and planes of
  // 8 -> 4 that a wrong rule could shard; adaptive windows that overlap
  // (6 -> 4); upsampling to a given size, with align_corners, and 4 -> 8
  push(build(OpId::kAvgPool2d, {f32({4, 4, 5, 5})},
             {{"kernel_size", V{2, 2}}, {"stride", V{2, 2}}, {"ceil_mode", true}}));
  push(build(OpId::kAvgPool2d, {f32({4, 4, 8, 8})},
             {{"kernel_size", V{3, 3}}, {"stride", V{2, 2}}, {"padding", V{1, 1}},
              {"count_include_pad", false}}));
  push(build(OpId::kAdaptiveAvgPool2d, {f32(kImage)}, {{"output_size", V{4, 3}}}));
  push(build(OpId::kAdaptiveAvgPool2dBackward, {f32({4, 4, 4, 3}), f32(kImage)}));
  push(build(OpId::kUpsampleNearest2d, {f32(kSmall)}, {{"output_size", V{5, 7}}}));
  push(build(OpId::kUpsampleNearest2d, {f32({4, 4, 4, 4})}, {{"scale_factors", F{2, 2}}}));
  push(build(OpId::kUpsampleBilinear2d, {f32(kSmall)},
             {{"output_size", V{5, 5}}, {"align_corners", true}}));
  push(build(OpId::kUpsampleBilinear2dBackward, {f32({4, 4, 5, 5})},
             {{"output_size", V{5, 5}}, {"input_size", kSmall}, {"align_corners", true}}));
  // group norm: no affine; 2 groups (shards once); masked gradients
  {
    Attrs attrs = group_attrs();
    attrs.set("eps", 1e-5);
    push(build(OpId::kNativeGroupNorm, {f32(kGrouped)}, std::move(attrs)));
    Attrs two = group_attrs(2);
    two.set("eps", 1e-5);
    push(build(OpId::kNativeGroupNorm, {f32(kGrouped), f32({8}), f32({8})}, std::move(two)));
  }
  push(group_norm_backward(false, {1, 0, 0}));
  push(group_norm_backward(true, {0, 1, 1}));
  // padding the middle dim with ones (not linear); rolling the flattened tensor
  push(build(OpId::kConstantPadNd, {f32({4, 6, 4})}, {{"pad", V{0, 0, 2, 1}}, {"value", 1.0}}));
  push(build(OpId::kRoll, {x}, {{"shifts", V{5}}}));
  // nll_loss2d: every reduction, with and without a class weight
  push(nll_loss2d(0, false));
  push(nll_loss2d(2, true));
  push(nll_loss2d(1, true));
  push(nll_loss2d_backward(0, false));
  push(nll_loss2d_backward(1, true));
  return out;
}

}  // namespace autopar::testing
