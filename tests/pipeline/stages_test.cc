#include "pipeline/stages.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "cost/compute_cost.h"
#include "models/registry.h"

namespace autopar::pipeline {
namespace {

Graph debugmodel(int64_t batch, int64_t layers = 4) {
  Expected<Graph> g = build_model({"llama3-debugmodel", batch, std::nullopt, layers, std::nullopt});
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return std::move(*g);
}

TEST(Stages, LayerUnitIsTheLayerPrefixOfTheScope) {
  EXPECT_EQ(layer_unit("layers.3.attention"), "layers.3");
  EXPECT_EQ(layer_unit("layers.12"), "layers.12");
  EXPECT_EQ(layer_unit("tok_embeddings"), "tok_embeddings");
  EXPECT_EQ(layer_unit("loss"), "loss");
  EXPECT_EQ(layer_unit(""), "");
}

TEST(Stages, ForwardEndsWhereTheTangentIsFirstRead) {
  Graph g = debugmodel(8, 1);
  std::vector<NodeId> fwd = forward_nodes(g);
  ASSERT_FALSE(fwd.empty());
  EXPECT_EQ(g.node(fwd.front()).name, "embedding");
  EXPECT_EQ(g.node(fwd.back()).name, "getitem_3");  // nll_loss_forward's second output
  for (NodeId id : fwd) EXPECT_FALSE(g.node(id).op == OpId::kNllLossBackward);
}

TEST(Stages, CountCutSpreadsLayersEvenlyWithEmbeddingsFirstAndLossLast) {
  Graph g = debugmodel(8, 4);
  Expected<std::vector<Stage>> stages = split_stages(g, {2, 2, StageBalance::kCount, nullptr, {}});
  ASSERT_TRUE(stages.ok()) << stages.error().message;
  ASSERT_EQ(stages->size(), 2u);
  EXPECT_EQ((*stages)[0].units,
            (std::vector<std::string>{"tok_embeddings", "layers.0", "layers.1"}));
  EXPECT_EQ((*stages)[1].units,
            (std::vector<std::string>{"layers.2", "layers.3", "norm", "output", "loss"}));
  // Stage 0 reads tokens; stage 1 reads the residual stream and labels and
  // produces the loss.
  ASSERT_EQ((*stages)[0].inputs.size(), 1u);
  EXPECT_EQ(g.node((*stages)[0].inputs[0].node).name, "tokens");
  ASSERT_EQ((*stages)[0].outputs.size(), 1u);
  EXPECT_EQ((*stages)[1].inputs.size(), 2u);
  EXPECT_EQ((*stages)[1].outputs.size(), 1u);
}

TEST(Stages, SevenLayersInThreeStagesGiveTheRemainderToEarlierStages) {
  Graph g = debugmodel(8, 7);
  Expected<std::vector<Stage>> stages = split_stages(g, {3, 1, StageBalance::kCount, nullptr, {}});
  ASSERT_TRUE(stages.ok());
  // 7 = 3 + 2 + 2
  EXPECT_EQ((*stages)[0].units.back(), "layers.2");
  EXPECT_EQ((*stages)[1].units, (std::vector<std::string>{"layers.3", "layers.4"}));
  EXPECT_EQ((*stages)[2].units.front(), "layers.5");
}

TEST(Stages, CostCutKeepsTheHeavyOutputLayerAwayFromTheLastLayers) {
  Graph g = debugmodel(8, 4);
  Expected<HardwareProfile> hw = load_hardware("h100");
  ASSERT_TRUE(hw.ok());
  Expected<std::vector<Stage>> stages = split_stages(g, {2, 2, StageBalance::kCost, &*hw, {}});
  ASSERT_TRUE(stages.ok()) << stages.error().message;
  double a = (*stages)[0].compute_s, b = (*stages)[1].compute_s;
  EXPECT_GT(a, 0);
  EXPECT_GT(b, 0);
  // The count cut is never better balanced than the cost cut.
  Expected<std::vector<Stage>> by_count = split_stages(g, {2, 2, StageBalance::kCount, nullptr, {}});
  double count_max = 0;
  for (const Stage& s : *by_count) {
    double t = 0;
    for (NodeId id : s.nodes) t += node_compute_time(g, id, *hw);
    count_max = std::max(count_max, t);
  }
  EXPECT_LE(std::max(a, b), count_max + 1e-15);
}

TEST(Stages, StagesMustBeAMultipleOfRanks) {
  Graph g = debugmodel(8, 4);
  Expected<std::vector<Stage>> stages = split_stages(g, {3, 2, StageBalance::kCount, nullptr, {}});
  ASSERT_FALSE(stages.ok());
  EXPECT_EQ(stages.error().message,
            "stages must be a positive multiple of ranks: 3 stages, 2 ranks");
}

TEST(Stages, MoreStagesThanLayersIsAnError) {
  Graph g = debugmodel(8, 2);
  Expected<std::vector<Stage>> stages = split_stages(g, {4, 4, StageBalance::kCount, nullptr, {}});
  ASSERT_FALSE(stages.ok());
  EXPECT_EQ(stages.error().message.substr(0, 48),
            "cannot cut 2 layers (units named layers.<i>) int");
}

}  // namespace
}  // namespace autopar::pipeline
