#include <gtest/gtest.h>

#include "autodiff/emitter.h"

namespace autopar {
namespace {

TEST(GraphEmitter, KeepsTheFirstErrorWithItsScopeAndEmitsNothingAfter) {
  Graph g;
  NodeId a = g.add_placeholder("a", PlaceholderKind::kInput, {{16, 32}, DType::f32});
  NodeId b = g.add_placeholder("b", PlaceholderKind::kInput, {{31, 8}, DType::f32});
  GraphEmitter e(g);
  e.set_scope("layers.0.attention");
  NodeId bad = e.add(OpId::kMm, {a, b});
  EXPECT_EQ(bad, kNoNode);
  e.set_scope("layers.1.attention");
  EXPECT_EQ(e.add(OpId::kRelu, {a}), kNoNode);  // sticky: nothing after the first error
  EXPECT_EQ(g.size(), 2);
  ASSERT_FALSE(e.status().ok());
  EXPECT_EQ(e.status().error().message,
            "in layers.0.attention: aten.mm.default: mm inner dims differ: f32[16, 32] @ f32[31, "
            "8]");
}

TEST(GraphEmitter, SumToReducesBroadcastDimsAndViewsAwayLeadingOnes) {
  Graph g;
  NodeId x = g.add_placeholder("x", PlaceholderKind::kInput, {{2, 3, 4}, DType::f32});
  GraphEmitter e(g);
  // [2, 3, 4] -> [1, 4]: sum dims 0 (leading)
  // and 1 (size 1 in the target) keepdim -> [1, 1, 4], view -> [1, 4].
  NodeId summed = e.sum_to(x, {1, 4});
  ASSERT_TRUE(e.ok()) << e.status().error().message;
  EXPECT_EQ(g.node(summed).op, OpId::kView);
  EXPECT_EQ(to_string(g.node(summed).meta()), "f32[1, 4]");
  const Node& sum = g.node(g.node(summed).inputs[0]);
  EXPECT_EQ(sum.attrs.get_ints("dim"), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(e.sum_to(x, {2, 3, 4}), x);  // same shape: nothing emitted
}

}  // namespace
}  // namespace autopar
