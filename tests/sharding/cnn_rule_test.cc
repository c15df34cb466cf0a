// The CNN ops' sharding rules (src/sharding/rules/cnn.cc) on a 1-D mesh of 2:
// which shardings are offered and, as important, which are not.
#include <gtest/gtest.h>

#include <set>

#include "fixtures.h"
#include "sharding/strategy.h"

namespace autopar {
namespace {

std::set<std::string> strategies_on_2(OpId op) {
  std::optional<testing::OpFixture> fx = testing::cnn_op_fixture(op);
  EXPECT_TRUE(fx) << op_name(op);
  if (!fx) return {};
  Expected<NodeStrategies> ns =
      node_strategies(fx->graph, fx->node, testing::mesh_of({2}), testing::round_device());
  EXPECT_TRUE(ns) << ns.error().message;
  std::set<std::string> out;
  for (StrategyIdx s = 0; ns && s < ns->size(); ++s) out.insert(strategy_string(*ns, s));
  return out;
}

// Fixture: input [4,4,6,6], weight [8,4,3,3], bias [8] -> [4,8,6,6].
TEST(CnnRules, ConvShardsBatchOutputChannelsAndContractsInputChannels) {
  std::set<std::string> s = strategies_on_2(OpId::kConvolution);
  EXPECT_TRUE(s.count("S(0),R,R->S(0)")) << "batch";
  EXPECT_TRUE(s.count("R,S(0),S(0)->S(1)")) << "output channels with weight dim 0 and the bias";
  EXPECT_TRUE(s.count("S(1),S(1),P->P")) << "input channels: a Partial sum, bias Partial with it";
  for (const std::string& x : s) {
    EXPECT_EQ(x.find("S(2)"), std::string::npos) << "spatial dims need halos: " << x;
    EXPECT_EQ(x.find("S(3)"), std::string::npos) << "spatial dims need halos: " << x;
  }
}

TEST(CnnRules, ConvBackwardBatchShardLeavesWeightAndBiasGradientsPartial) {
  std::set<std::string> s = strategies_on_2(OpId::kConvolutionBackward);
  EXPECT_TRUE(s.count("S(0),S(0),R->S(0),P,P"));
  EXPECT_TRUE(s.count("S(1),R,S(0)->P,S(0),S(0)"));
  EXPECT_TRUE(s.count("R,S(1),S(1)->S(1),S(1),R"));
}

// Training mode normalizes with statistics over N, H and W.
// A batch shard is right only as SyncBatchNorm: the op all-reduces its
// statistics across the mesh dim (a sync strategy), never on its own.
TEST(CnnRules, TrainingBatchNormShardsChannelsAndTheBatchOnlyAsSyncBatchNorm) {
  std::set<std::string> s = strategies_on_2(OpId::kNativeBatchNorm);
  EXPECT_TRUE(s.count("S(1),S(0),S(0),S(0),S(0)->S(1),S(0),S(0)"));
  EXPECT_TRUE(s.count("S(0),R,R,R,R->S(0),R,R sync(d0)"));
  for (const std::string& x : s) {
    if (x.substr(0, 4) == "S(0)") {
      EXPECT_NE(x.find(" sync(d0)"), std::string::npos) << x;
    }
  }
  std::set<std::string> b = strategies_on_2(OpId::kNativeBatchNormBackward);
  EXPECT_TRUE(b.count("S(0),S(0),R,R,R,R,R->S(0),R,R sync(d0)"));
  for (const std::string& x : b) {
    if (x.substr(0, 4) == "S(0)") {
      EXPECT_NE(x.find(" sync(d0)"), std::string::npos) << x;
    }
  }
  EXPECT_TRUE(b.count("P,R,R,R,R,R,R->P,P,P")) << "linear in grad_out";
}

TEST(CnnRules, MaxPoolShardsBatchAndChannelsWithItsIndices) {
  std::set<std::string> s = strategies_on_2(OpId::kMaxPool2dWithIndices);
  EXPECT_TRUE(s.count("S(0)->S(0),S(0)"));
  EXPECT_TRUE(s.count("S(1)->S(1),S(1)"));
  EXPECT_EQ(s.size(), 3u);  // and all-Replicate
}

}  // namespace
}  // namespace autopar
