// The model zoo's sharding rules (PyTorch import) on a 1-D mesh of 2: which
// shardings are offered and, as important, which are not.
#include <gtest/gtest.h>

#include <set>

#include "fixtures.h"
#include "sharding/strategy.h"

namespace autopar {
namespace {

using V = std::vector<int64_t>;

std::set<std::string> strategies_of(const Graph& g, NodeId node, std::vector<int64_t> mesh) {
  Expected<NodeStrategies> ns = node_strategies(g, node, testing::mesh_of(std::move(mesh)),
                                                testing::round_device());
  EXPECT_TRUE(ns) << ns.error().message;
  std::set<std::string> out;
  for (StrategyIdx s = 0; ns && s < ns->size(); ++s) out.insert(strategy_string(*ns, s));
  return out;
}

std::set<std::string> strategies_on_2(OpId op) {
  std::optional<testing::OpFixture> fx = testing::zoo_op_fixture(op);
  EXPECT_TRUE(fx) << op_name(op);
  if (!fx) return {};
  return strategies_of(fx->graph, fx->node, {2});
}

// The strategies of `op` on inputs of these metas, on `mesh`.
std::set<std::string> strategies(OpId op, std::vector<TensorMeta> inputs, Attrs attrs,
                                 std::vector<int64_t> mesh = {2}) {
  Graph g;
  std::vector<NodeId> ids;
  for (TensorMeta& m : inputs) {
    ids.push_back(g.add_placeholder(g.fresh_name("x"), PlaceholderKind::kInput, std::move(m)));
  }
  Expected<NodeId> id = g.add(op, ids, std::move(attrs));
  EXPECT_TRUE(id) << id.error().message;
  if (!id) return {};
  return strategies_of(g, *id, std::move(mesh));
}

bool shards_a_plane_dim(const std::string& strategy) {
  return strategy.find("S(2)") != std::string::npos || strategy.find("S(3)") != std::string::npos;
}

TEST(ZooRules, PoolingAndUpsamplingShardBatchAndChannelsNeverThePlane) {
  for (OpId op : {OpId::kAvgPool2d, OpId::kAdaptiveAvgPool2d, OpId::kUpsampleNearest2d,
                  OpId::kUpsampleBilinear2d, OpId::kUpsampleNearest2dBackward,
                  OpId::kUpsampleBilinear2dBackward}) {
    std::set<std::string> s = strategies_on_2(op);
    EXPECT_TRUE(s.count("S(0)->S(0)")) << op_name(op) << ": batch";
    EXPECT_TRUE(s.count("S(1)->S(1)")) << op_name(op) << ": channels";
    EXPECT_TRUE(s.count("P->P")) << op_name(op) << ": a linear map";
    EXPECT_EQ(s.size(), 4u) << op_name(op);  // and all-Replicate
    for (const std::string& x : s) EXPECT_FALSE(shards_a_plane_dim(x)) << op_name(op) << ": " << x;
  }
  for (OpId op : {OpId::kAvgPool2dBackward, OpId::kAdaptiveAvgPool2dBackward}) {
    std::set<std::string> s = strategies_on_2(op);
    EXPECT_TRUE(s.count("S(0),S(0)->S(0)")) << op_name(op);
    EXPECT_TRUE(s.count("P,R->P")) << op_name(op) << ": linear in grad_output only";
    for (const std::string& x : s) EXPECT_FALSE(shards_a_plane_dim(x)) << op_name(op) << ": " << x;
  }
}

// Fixture: input [4, 8, 3, 3] in 4 groups of 2 channels; mean/rstd [4, 4].
TEST(ZooRules, GroupNormShardsSamplesAndWholeGroups) {
  std::set<std::string> s = strategies_on_2(OpId::kNativeGroupNorm);
  EXPECT_TRUE(s.count("S(0),R,R->S(0),S(0),S(0)")) << "batch: statistics are per sample";
  EXPECT_TRUE(s.count("S(1),S(0),S(0)->S(1),S(1),S(1)")) << "groups, weight and bias with them";
  EXPECT_EQ(s.size(), 3u) << "not linear";
  std::set<std::string> b = strategies_on_2(OpId::kNativeGroupNormBackward);
  EXPECT_TRUE(b.count("S(0),S(0),S(0),S(0),R->S(0),P,P")) << "weight/bias gradients sum the batch";
  EXPECT_TRUE(b.count("S(1),S(1),S(1),S(1),S(0)->S(1),S(0),S(0)"));
  EXPECT_TRUE(b.count("P,R,R,R,R->P,P,P")) << "linear in grad_out";
}

// 8 channels in 2 groups of 4: a 4-way channel shard would split groups.
TEST(ZooRules, GroupNormDoesNotSplitAGroup) {
  Attrs attrs{{"N", int64_t{4}}, {"C", int64_t{8}}, {"HxW", int64_t{9}}, {"group", int64_t{2}},
              {"eps", 1e-5}};
  std::set<std::string> s =
      strategies(OpId::kNativeGroupNorm, {{{4, 8, 3, 3}, DType::f32}}, attrs, {4});
  EXPECT_TRUE(s.count("S(0)->S(0),S(0),S(0)"));
  for (const std::string& x : s) EXPECT_EQ(x.find("S(1)"), std::string::npos) << x;
}

// Fixture: self [4, 3, 4, 4], target [4, 4, 4], mean reduction.
TEST(ZooRules, NllLoss2dShardsPixelsNeverClasses) {
  std::set<std::string> s = strategies_on_2(OpId::kNllLoss2dForward);
  EXPECT_TRUE(s.count("S(0),S(0)->P(avg),P"));
  EXPECT_TRUE(s.count("S(2),S(1)->P(avg),P"));
  EXPECT_TRUE(s.count("S(3),S(2)->P(avg),P"));
  for (const std::string& x : s) EXPECT_NE(x.substr(0, 4), "S(1)") << "the class dim: " << x;
  std::set<std::string> b = strategies_on_2(OpId::kNllLoss2dBackward);
  EXPECT_TRUE(b.count("R,S(2),S(1),R->S(2)")) << "total_weight is global";
  EXPECT_TRUE(b.count("P,R,R,R->P"));
}

// Weighted shards divide by different total weights: no mean of means.
TEST(ZooRules, WeightedMeanNllLoss2dStaysWhole) {
  Attrs mean{{"reduction", int64_t{1}}, {"ignore_index", int64_t{-100}}};
  std::set<std::string> s = strategies(
      OpId::kNllLoss2dForward,
      {{{4, 3, 4, 4}, DType::f32}, {{4, 4, 4}, DType::i64}, {{3}, DType::f32}}, mean);
  EXPECT_EQ(s, (std::set<std::string>{"R,R,R->R,R"}));
  Attrs sum{{"reduction", int64_t{2}}, {"ignore_index", int64_t{-100}}};
  std::set<std::string> summed = strategies(
      OpId::kNllLoss2dForward,
      {{{4, 3, 4, 4}, DType::f32}, {{4, 4, 4}, DType::i64}, {{3}, DType::f32}}, sum);
  EXPECT_TRUE(summed.count("S(0),S(0),R->P,P")) << "sums of sums are exact";
}

TEST(ZooRules, PartialFlowsOnlyThroughTheLinearInputs) {
  std::set<std::string> div = strategies_on_2(OpId::kDivTensor);
  EXPECT_TRUE(div.count("P,R->P")) << "linear in the numerator";
  EXPECT_FALSE(div.count("R,P->P")) << "not in the denominator";
  EXPECT_TRUE(strategies_on_2(OpId::kSubTensor).count("P,P->P"));
  std::set<std::string> where = strategies_on_2(OpId::kWhereSelf);
  EXPECT_TRUE(where.count("R,P,P->P"));
  EXPECT_FALSE(where.count("R,P,R->P")) << "one branch alone is not the whole sum";
  EXPECT_EQ(strategies_on_2(OpId::kMaskedFillScalar).count("P,R->P"), 0u) << "fills -1 n times";
  std::set<std::string> zero = strategies(
      OpId::kMaskedFillScalar, {{{4, 6}, DType::f32}, {{4, 6}, DType::boolean}}, {{"value", 0.0}});
  EXPECT_TRUE(zero.count("P,R->P")) << "filling 0 is linear";
  EXPECT_EQ(strategies_on_2(OpId::kClamp).count("P->P"), 0u);
}

// Fixture: self [2, 4, 8], batch1 [2, 4, 6], batch2 [2, 6, 8].
TEST(ZooRules, BaddbmmContractionLeavesSelfAndTheResultPartial) {
  std::set<std::string> s = strategies_on_2(OpId::kBaddbmm);
  EXPECT_TRUE(s.count("P,S(2),S(1)->P"));
  EXPECT_TRUE(s.count("S(0),S(0),S(0)->S(0)"));
  EXPECT_TRUE(s.count("P,P,R->P"));
  EXPECT_TRUE(s.count("P,R,P->P"));
}

TEST(ZooRules, StackNeverShardsTheNewDim) {
  std::set<std::string> s = strategies_on_2(OpId::kStack);  // two [4, 6] stacked at dim 1
  EXPECT_TRUE(s.count("S(0),S(0)->S(0)"));
  EXPECT_TRUE(s.count("S(1),S(1)->S(2)"));
  EXPECT_TRUE(s.count("P,P->P"));
  for (const std::string& x : s) EXPECT_EQ(x.find("->S(1)"), std::string::npos) << x;
}

}  // namespace
}  // namespace autopar
