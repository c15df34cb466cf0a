#include <algorithm>
#include <limits>

#include <gtest/gtest.h>

#include "ir/aten_schema.h"
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

// Found by fuzz/graph_fuzz.cc: a view size read from a file overflowed int64
// while its elements were counted (undefined behaviour).
TEST(OpTable, ViewSizeWhoseElementsOverflowIsAnError) {
  Graph g;
  NodeId x = g.add_placeholder("x", PlaceholderKind::kInput, {{2, 2}, DType::f32});
  Attrs attrs;
  attrs.set("size", std::vector<int64_t>{int64_t{1} << 32, int64_t{1} << 32, 4});
  Expected<NodeId> view = g.add(OpId::kView, {x}, std::move(attrs));
  ASSERT_FALSE(view.ok());
  EXPECT_EQ(view.error().message, "aten.view.default: view size [4294967296, 4294967296, 4] has more "
                                  "elements than int64 can count");
}

// Found by fuzz/graph_fuzz.cc: ceil((end - start) / step) overflowed for a
// step near INT64_MAX.
TEST(OpTable, SliceWithAHugeStepTakesTheFirstElement) {
  Graph g;
  NodeId x = g.add_placeholder("x", PlaceholderKind::kInput, {{8}, DType::f32});
  Attrs attrs;
  attrs.set("dim", int64_t{0});
  attrs.set("start", int64_t{0});
  attrs.set("end", int64_t{8});
  attrs.set("step", std::numeric_limits<int64_t>::max());
  Expected<NodeId> slice = g.add(OpId::kSliceTensor, {x}, std::move(attrs));
  ASSERT_TRUE(slice.ok()) << slice.error().message;
  EXPECT_EQ(to_string(g.node(*slice).meta()), "f32[1]");
}

// The op table's attributes are the aten schema's non-tensor arguments, and
// one the schema gives a default may be left out (an exported graph omits
// arguments at their default). Ops autopar spells its own way are listed.
TEST(OpTable, AttributesAgreeWithLibtorchsSchemas) {
  std::string problems;
  for (const OpDef& def : all_ops()) {
    const AtenSchema* schema = find_aten_schema(def.name);
    if (schema == nullptr) continue;  // placeholder, getitem, the generic entry
    for (const AttrSpec& spec : def.attrs) {
      auto arg = std::find_if(schema->args.begin(), schema->args.end(),
                              [&](const AtenArg& a) { return a.name == spec.name; });
      if (arg == schema->args.end()) {
        problems += std::string(def.name) + ": no argument '" + std::string(spec.name) + "'\n";
      } else if (spec.required && arg->may_omit()) {
        problems += std::string(def.name) + ": '" + std::string(spec.name) +
                    "' is required but aten gives it a default (" + schema->text + ")\n";
      }
    }
  }
  EXPECT_EQ(problems, "");
}

}  // namespace
}  // namespace autopar
