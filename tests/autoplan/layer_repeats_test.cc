#include <gtest/gtest.h>

#include "plan_fixtures.h"
#include "planner/layer_repeats.h"

namespace autopar {
namespace {

TEST(LayerRepeats, EveryLlamaLayerAfterTheFirstSharesTheFirstLayersNodes) {
  Graph g = testing::model("llama3-debugmodel", 4, 2, 16);
  LayerRepeats r = find_layer_repeats(g);
  EXPECT_EQ(r.layers_found, 4);
  EXPECT_EQ(r.layers_shared, 3);
  for (NodeId v = 0; v < g.size(); ++v) {
    NodeId rep = r.representative[static_cast<size_t>(v)];
    if (rep == v) continue;
    EXPECT_EQ(g.node(v).op, g.node(rep).op);
    EXPECT_EQ(g.node(v).outputs, g.node(rep).outputs);
    EXPECT_TRUE(g.node(rep).scope.starts_with("layers.0")) << g.node(rep).scope;
  }
}

TEST(LayerRepeats, KeepEndsLeavesTheFirstAndLastLayersTheirOwnVariables) {
  Graph g = testing::model("llama3-debugmodel", 4, 2, 16);
  LayerRepeats r = find_layer_repeats(g, "layers", /*keep_ends=*/true);
  EXPECT_EQ(r.layers_found, 4);
  EXPECT_EQ(r.layers_shared, 1);  // layer 2 shares layer 1's variables
  int shared = 0;
  for (NodeId v = 0; v < g.size(); ++v) {
    NodeId rep = r.representative[static_cast<size_t>(v)];
    const std::string& scope = g.node(v).scope;
    if (scope.starts_with("layers.0") || scope.starts_with("layers.3")) {
      EXPECT_EQ(rep, v) << scope;
    }
    if (rep == v) continue;
    ++shared;
    EXPECT_TRUE(scope.starts_with("layers.2")) << scope;
    EXPECT_TRUE(g.node(rep).scope.starts_with("layers.1")) << g.node(rep).scope;
  }
  EXPECT_EQ(shared, r.nodes_per_layer);
}

TEST(LayerRepeats, LayersWithDifferentShapesKeepTheirOwnVariables) {
  Graph g;
  NodeId x = g.add_placeholder("x", PlaceholderKind::kInput, {{4, 8}, DType::f32});
  NodeId a = *g.add(OpId::kRelu, {x}, {}, "layers.0");
  NodeId v = *g.add(OpId::kView, {a}, {{"size", std::vector<int64_t>{8, 4}}}, "layers.1");
  NodeId b = *g.add(OpId::kRelu, {v}, {}, "layers.1");
  LayerRepeats r = find_layer_repeats(g);
  EXPECT_EQ(r.layers_found, 2);
  EXPECT_EQ(r.layers_shared, 0);  // layer 1 has two nodes, layer 0 one
  EXPECT_EQ(r.representative[static_cast<size_t>(b)], b);
}

}  // namespace
}  // namespace autopar
