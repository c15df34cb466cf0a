// Fixtures of the model zoo's ops (PyTorch import): the one per op that the
// golden files and the soundness sweep use, and variants the sweep checks too
// (other attributes, optional inputs, masked gradients).
#include "fixtures.h"

namespace autopar::testing {
namespace {

using V = std::vector<int64_t>;
using F = std::vector<double>;

TensorMeta f32(Shape shape) { return {std::move(shape), DType::f32}; }
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
  return out;
}

}  // namespace autopar::testing
