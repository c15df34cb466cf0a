// Fixtures of the model zoo's ops (PyTorch import): the one per op that the
// golden files and the soundness sweep use, and variants the sweep checks too
// (other attributes, optional inputs, masked gradients).
#include "fixtures.h"

namespace autopar::testing {
namespace {

using V = std::vector<int64_t>;
using F = std::vector<double>;

TensorMeta f32(Shape shape) { return {std::move(shape), DType::f32}; }
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
    case OpId::kMaskedFillScalar: return build(op, {x, mask({6})}, {{"value", -1.0}});
    case OpId::kSubTensor: return build(op, {x, f32({4, 1})}, {{"alpha", 2.0}});
    case OpId::kWhereSelf: return build(op, {mask({4, 1}), x, f32({6})});
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
  return out;
}

}  // namespace autopar::testing
