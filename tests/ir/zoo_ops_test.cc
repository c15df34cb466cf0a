// Shape rules and costs of the model zoo's ops (PyTorch import), one case
// and one error per family, with the arithmetic worked by hand.
#include <gtest/gtest.h>

#include "ir/graph.h"
#include "ir/op_def.h"

namespace autopar {
namespace {

using V = std::vector<int64_t>;
using F = std::vector<double>;

struct Zoo {
  Graph g;
  NodeId in(Shape shape, DType dtype = DType::f32) {
    return g.add_placeholder(g.fresh_name("x"), PlaceholderKind::kInput, {std::move(shape), dtype});
  }
  std::string out(const Expected<NodeId>& id) {
    if (!id) return "error: " + id.error().message;
    std::string s;
    for (const TensorMeta& m : g.node(*id).outputs) s += (s.empty() ? "" : " ") + to_string(m);
    return s;
  }
  OpCall call(NodeId id, std::vector<const std::vector<TensorMeta>*>& ins) {
    const Node& n = g.node(id);
    for (NodeId i : n.inputs) ins.push_back(&g.node(i).outputs);
    return OpCall{ins, n.attrs};
  }
  double flops(NodeId id) {
    std::vector<const std::vector<TensorMeta>*> ins;
    return op_def(g.node(id).op).flops(call(id, ins), g.node(id).outputs);
  }
  double bytes(NodeId id) {
    std::vector<const std::vector<TensorMeta>*> ins;
    return op_def(g.node(id).op).bytes(call(id, ins), g.node(id).outputs);
  }
};

void expect_error(const Expected<NodeId>& id, std::string_view part) {
  ASSERT_FALSE(id) << "expected an error containing: " << part;
  EXPECT_NE(id.error().message.find(part), std::string::npos) << id.error().message;
}

TEST(ZooOps, ActivationsKeepTheShapeAndCountTheirElementwiseWork) {
  Zoo z;
  NodeId x = z.in({2, 8});
  Expected<NodeId> s = z.g.add(OpId::kSigmoid, {x});
  EXPECT_EQ(z.out(s), "f32[2, 8]");
  EXPECT_EQ(z.flops(*s), 4.0 * 16);        // neg, exp, add, div per element
  EXPECT_EQ(z.bytes(*s), 2.0 * 16 * 4);    // read 16 floats, write 16
  Expected<NodeId> g = z.g.add(OpId::kTanhBackward, {x, x});
  EXPECT_EQ(z.out(g), "f32[2, 8]");
  EXPECT_EQ(z.flops(*g), 3.0 * 16);
}

TEST(ZooOps, ActivationBackwardRejectsAGradOfAnotherShapeAndGeluAnUnknownForm) {
  Zoo z;
  expect_error(z.g.add(OpId::kHardswishBackward, {z.in({2, 8}), z.in({2, 4})}),
               "must have one shape and dtype");
  expect_error(z.g.add(OpId::kGelu, {z.in({2, 8})}, {{"approximate", std::string("fast")}}),
               "approximate must be 'none' or 'tanh'");
  EXPECT_EQ(z.out(z.g.add(OpId::kGelu, {z.in({2, 8})}, {{"approximate", std::string("tanh")}})),
            "f32[2, 8]");
}

TEST(ZooOps, PointwiseOpsBroadcastLikeAddTensor) {
  Zoo z;
  EXPECT_EQ(z.out(z.g.add(OpId::kDivTensor, {z.in({4, 6}), z.in({6})})), "f32[4, 6]");
  EXPECT_EQ(z.out(z.g.add(OpId::kSubTensor, {z.in({4, 1}), z.in({6})}, {{"alpha", 2.0}})),
            "f32[4, 6]");
  // condition [4, 1], self [1, 6], other [6] -> [4, 6]
  Expected<NodeId> w =
      z.g.add(OpId::kWhereSelf, {z.in({4, 1}, DType::boolean), z.in({1, 6}), z.in({6})});
  EXPECT_EQ(z.out(w), "f32[4, 6]");
  EXPECT_EQ(z.flops(*w), 24.0);
  EXPECT_EQ(z.out(z.g.add(OpId::kMaskedFillScalar, {z.in({4, 6}), z.in({6}, DType::boolean)},
                          {{"value", 0.0}})),
            "f32[4, 6]");
  EXPECT_EQ(z.out(z.g.add(OpId::kClamp, {z.in({4, 6})}, {{"max", 6.0}})), "f32[4, 6]");
}

TEST(ZooOps, PointwiseOpsRejectBadMasksAndAClampWithoutBounds) {
  Zoo z;
  expect_error(z.g.add(OpId::kMaskedFillScalar, {z.in({4, 6}), z.in({4, 6})}, {{"value", 0.0}}),
               "mask must be bool");
  expect_error(z.g.add(OpId::kMaskedFillScalar,
                       {z.in({4, 6}), z.in({2, 4, 6}, DType::boolean)}, {{"value", 0.0}}),
               "does not broadcast to");
  expect_error(z.g.add(OpId::kWhereSelf, {z.in({4, 6}), z.in({4, 6}), z.in({4, 6})}),
               "condition must be bool");
  expect_error(z.g.add(OpId::kClamp, {z.in({4, 6})}), "needs min or max");
}

}  // namespace
}  // namespace autopar
