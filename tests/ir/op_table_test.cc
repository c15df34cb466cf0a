#include <gtest/gtest.h>

#include "ir/graph.h"
#include "ir/op_def.h"

namespace autopar {
namespace {

TEST(OpTable, EveryOpIsFoundByItsName) {
  for (const OpDef& def : all_ops()) {
    if (def.id == OpId::kGeneric) {
      EXPECT_FALSE(find_op(def.name).has_value()) << "the generic entry has no op name";
      continue;
    }
    std::optional<OpId> found = find_op(def.name);
    ASSERT_TRUE(found.has_value()) << def.name;
    EXPECT_EQ(*found, def.id) << def.name;
  }
}

TEST(OpTable, NamesAreUnique) {
  for (const OpDef& a : all_ops()) {
    for (const OpDef& b : all_ops()) {
      if (a.id != b.id) {
        EXPECT_NE(a.name, b.name);
      }
    }
  }
}

TEST(OpTable, MmInfersShapeAndCountsTwoFlopsPerMultiplyAdd) {
  Graph g;
  NodeId a = g.add_placeholder("a", PlaceholderKind::kInput, {{16, 32}, DType::f32});
  NodeId b = g.add_placeholder("b", PlaceholderKind::kParam, {{32, 8}, DType::f32});
  Expected<NodeId> mm = g.add(OpId::kMm, {a, b});
  ASSERT_TRUE(mm.ok()) << mm.error().message;
  EXPECT_EQ(g.node(*mm).name, "mm");
  EXPECT_EQ(to_string(g.node(*mm).meta()), "f32[16, 8]");
}

TEST(OpTable, MmRejectsMismatchedInnerDims) {
  Graph g;
  NodeId a = g.add_placeholder("a", PlaceholderKind::kInput, {{16, 32}, DType::f32});
  NodeId b = g.add_placeholder("b", PlaceholderKind::kParam, {{31, 8}, DType::f32});
  Expected<NodeId> mm = g.add(OpId::kMm, {a, b});
  ASSERT_FALSE(mm.ok());
  EXPECT_EQ(mm.error().message, "aten.mm.default: mm inner dims differ: f32[16, 32] @ f32[31, 8]");
}

}  // namespace
}  // namespace autopar
