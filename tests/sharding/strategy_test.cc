#include <gtest/gtest.h>

#include <algorithm>

#include "fixtures.h"
#include "sharding/edge_costs.h"
#include "sharding/strategy.h"

namespace autopar {
namespace {

using testing::mesh_of;
using testing::round_device;

std::vector<std::string> strategies_of(const Graph& g, NodeId id, const DeviceMesh& mesh) {
  Expected<NodeStrategies> ns = node_strategies(g, id, mesh, round_device());
  std::vector<std::string> out;
  for (StrategyIdx s = 0; s < ns->size(); ++s) out.push_back(strategy_string(*ns, s));
  return out;
}

bool contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(Strategies, SeedTensorIsNeverShardedTwiceOnItsSmallDim) {
  // [32, 4096, 4096] on a (32, 8) mesh: S(0)S(0) would split 32 into 256 shards.
  Graph g;
  NodeId x = g.add_placeholder("x", PlaceholderKind::kInput, {{32, 4096, 4096}, DType::bf16});
  std::vector<std::string> s = strategies_of(g, x, mesh_of({32, 8}));
  EXPECT_FALSE(contains(s, "->S(0)S(0)"));
  EXPECT_TRUE(contains(s, "->S(0)S(1)"));
  EXPECT_TRUE(contains(s, "->S(1)S(1)"));  // 4096 / 256
  // (R, S0, S1, S2) x (R, S0, S1, S2) = 16 combinations, minus S(0)S(0).
  EXPECT_EQ(s.size(), 15u);
}

TEST(Strategies, PlaceholdersGetEveryValidShardReplicateCombinationAndNoPartial) {
  Graph g;
  NodeId x = g.add_placeholder("x", PlaceholderKind::kParam, {{4, 6}, DType::f32});
  // 2x2 mesh: options R, S(0), S(1) per mesh dim; S(1)S(1) splits 6 into 4 (uneven).
  std::vector<std::string> s = strategies_of(g, x, mesh_of({2, 2}));
  EXPECT_EQ(s, (std::vector<std::string>{"->RR", "->RS(0)", "->RS(1)", "->S(0)R", "->S(0)S(0)",
                                         "->S(0)S(1)", "->S(1)R", "->S(1)S(0)"}));
}

TEST(Strategies, StrategyZeroIsAllReplicate) {
  std::optional<testing::OpFixture> fx = testing::op_fixture(OpId::kMm);
  std::vector<std::string> s = strategies_of(fx->graph, fx->node, mesh_of({2, 2}));
  EXPECT_EQ(s.front(), "RR,RR->RR");
  // 2-D: 6 one-dim options squared = 36, minus those splitting k = 6 four ways
  // (S(1)S(0)->P twice: 1 combination) and m... every survivor is valid.
  EXPECT_TRUE(contains(s, "S(0)R,RS(1)->S(0)S(1)"));
  EXPECT_TRUE(contains(s, "S(1)R,S(0)R->PR"));
  EXPECT_FALSE(contains(s, "S(1)S(1),S(0)S(0)->PP"));  // k = 6 into 4 shards
}

TEST(Strategies, OneDimMeshesAndThreeDimMeshesUseTheSameRule) {
  std::optional<testing::OpFixture> fx = testing::op_fixture(OpId::kMm);
  std::vector<std::string> one = strategies_of(fx->graph, fx->node, mesh_of({2}));
  EXPECT_EQ(one, (std::vector<std::string>{"R,R->R", "S(0),R->S(0)", "S(1),S(0)->P", "R,S(1)->S(1)",
                                           "P,R->P", "R,P->P"}));
  // 2x2x2: m = 4 splits at most twice (4 / 8 is not even), k = 6 once, n = 8 three times.
  std::vector<std::string> three = strategies_of(fx->graph, fx->node, mesh_of({2, 2, 2}));
  EXPECT_TRUE(contains(three, "RRR,S(1)S(1)S(1)->S(1)S(1)S(1)"));
  EXPECT_FALSE(contains(three, "S(0)S(0)S(0),RRR->S(0)S(0)S(0)"));
}

TEST(Strategies, ShardingAMatmulDividesItsComputeTime) {
  Graph g;
  NodeId a = g.add_placeholder("a", PlaceholderKind::kInput, {{1024, 1024}, DType::f32});
  NodeId b = g.add_placeholder("b", PlaceholderKind::kParam, {{1024, 1024}, DType::f32});
  NodeId mm = *g.add(OpId::kMm, {a, b});
  Expected<NodeStrategies> ns = node_strategies(g, mm, mesh_of({2, 2}), round_device());
  ASSERT_TRUE(ns.ok());
  // Replicated: 2 * 1024^3 FLOP / 1e12 = 2.147 ms (bytes 12.6 MB / 100 GB/s = 0.126 ms).
  double full = 2.0 * 1024 * 1024 * 1024 / 1e12;
  EXPECT_DOUBLE_EQ(ns->compute_s[0], full);
  for (StrategyIdx s = 0; s < ns->size(); ++s) {
    if (strategy_string(*ns, s) == "S(0)R,RS(1)->S(0)S(1)") {
      EXPECT_DOUBLE_EQ(ns->compute_s[static_cast<size_t>(s)], full / 4);  // [512,1024]@[1024,512]
    }
  }
}

TEST(Strategies, GraphWithAnOpWithoutStrategiesIsNotSilentlyReplicated) {
  // Every op has a rule today; a graph of known ops builds, and has strategies everywhere.
  std::optional<testing::OpFixture> fx = testing::op_fixture(OpId::kAddmm);
  Expected<StrategyGraph> sg = build_strategy_graph(fx->graph, mesh_of({2, 2}), round_device());
  ASSERT_TRUE(sg.ok()) << sg.error().message;
  for (const NodeStrategies& ns : sg->nodes) EXPECT_GT(ns.size(), 0);
}

std::vector<std::string> strategies_under(const Graph& g, NodeId id, const DeviceMesh& mesh, bool even_only) {
  Expected<NodeStrategies> ns = node_strategies(g, id, mesh, round_device(), ShardingOptions{.even_only = even_only});
  std::vector<std::string> out;
  for (StrategyIdx s = 0; s < ns->size(); ++s) out.push_back(strategy_string(*ns, s));
  return out;
}

// Uneven pieces are sound only where piece i of every tensor sharded on the
// mesh dim is the same slice of the same dim size (strategy.cc).
TEST(Strategies, UnevenShardsOnlyWherePiecesLineUp) {
  Graph g;
  DeviceMesh mesh = mesh_of({3});
  NodeId a = g.add_placeholder("a", PlaceholderKind::kInput, {{4, 10}, DType::f32});
  NodeId b = g.add_placeholder("b", PlaceholderKind::kParam, {{10, 8}, DType::f32});
  NodeId mm = *g.add(OpId::kMm, {a, b});
  // k = 10 over 3 (4, 4, 2) on both operands: the partial sums line up.
  EXPECT_TRUE(contains(strategies_under(g, mm, mesh, false), "S(1),S(0)->P"));
  EXPECT_FALSE(contains(strategies_under(g, mm, mesh, true), "S(1),S(0)->P"));
  // A sum over the uneven dim is a pending sum; a mean would average unequal pieces.
  NodeId sum = *g.add(OpId::kSumDimIntList, {a}, {{"dim", std::vector<int64_t>{1}}});
  EXPECT_TRUE(contains(strategies_under(g, sum, mesh, false), "S(1)->P"));
  NodeId mean = *g.add(OpId::kMeanDim, {a}, {{"dim", std::vector<int64_t>{1}}, {"keepdim", true}});
  for (const std::string& s : strategies_under(g, mean, mesh, false)) {
    EXPECT_EQ(s.find("S(1)->"), std::string::npos) << s;
  }
  // A view splitting the uneven dim 20 into 5 x 4: piece i of 20 is not piece i of 5.
  NodeId c = g.add_placeholder("c", PlaceholderKind::kInput, {{6, 20}, DType::f32});
  NodeId view = *g.add(OpId::kView, {c}, {{"size", std::vector<int64_t>{6, 5, 4}}});
  EXPECT_FALSE(contains(strategies_under(g, view, mesh, false), "S(1)->S(1)"));
  EXPECT_TRUE(contains(strategies_under(g, view, mesh, false), "S(0)->S(0)"));  // 6 over 3
}

TEST(EdgeCosts, MatrixHoldsTheRedistributionFromEachProducerToEachConsumerStrategy) {
  Graph g;
  NodeId a = g.add_placeholder("a", PlaceholderKind::kInput, {{8, 16}, DType::f32});
  NodeId r = *g.add(OpId::kRelu, {a});
  DeviceMesh mesh = mesh_of({2, 4});
  Expected<StrategyGraph> sg = build_strategy_graph(g, mesh, round_device());
  ASSERT_TRUE(sg.ok());
  RedistributionCache cache(mesh);
  EdgeCosts e = edge_costs(g, *sg, r, 0, cache);
  EXPECT_EQ(e.producer, a);
  EXPECT_EQ(e.rows, sg->nodes[static_cast<size_t>(a)].size());
  EXPECT_EQ(e.cols, sg->nodes[static_cast<size_t>(r)].size());
  EXPECT_DOUBLE_EQ(e.at(0, 0), 0);  // RR -> RR
  const NodeStrategies& ps = sg->nodes[static_cast<size_t>(a)];
  const NodeStrategies& cs = sg->nodes[static_cast<size_t>(r)];
  for (StrategyIdx i = 0; i < e.rows; ++i) {
    for (StrategyIdx j = 0; j < e.cols; ++j) {
      EXPECT_DOUBLE_EQ(e.at(i, j),
                       plan_redistribution(g.node(a).meta(), ps.output(i, 0), cs.input(j, 0), mesh).time_s);
    }
  }
  // S(0)R -> RR: all-gather over d0 (inter): 10 us + 256 B / 10 GB/s.
  EXPECT_EQ(all_edge_costs(g, *sg, cache).size(), 1u);
}

}  // namespace
}  // namespace autopar
