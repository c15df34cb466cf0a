#include "pipeline_runtime/partition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "models/registry.h"

namespace autopar::pipeline {
namespace {

// llama3-debugmodel at batch 2, seq 16: dim 256, so the residual stream
// between layers is f32 [2, 16, 256]. The mlp at its defaults, with `layers`
// hidden layers.
Graph model(const std::string& name, int64_t layers) {
  ModelOptions o{name, 2, 16, layers, std::nullopt};
  if (name == "mlp") o = {name, std::nullopt, std::nullopt, layers, std::nullopt};
  Expected<Graph> g = build_model(o);
  EXPECT_TRUE(g.ok()) << (g.ok() ? "" : g.error().message);
  return std::move(*g);
}

std::vector<Stage> cut(const Graph& g, int32_t stages) {
  Expected<std::vector<Stage>> s = split_stages(g, {stages, stages, StageBalance::kCount, nullptr, {}});
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return std::move(*s);
}

int32_t backward_node_count(const Graph& g) {
  std::vector<NodeId> fwd = forward_nodes(g);
  int32_t n = 0;
  for (NodeId id = fwd.back() + 1; id < g.size(); ++id) n += g.node(id).is_placeholder() ? 0 : 1;
  return n;
}

void expect_sound_partition(const std::string& name, int64_t layers, int32_t num_stages) {
  Graph g = model(name, layers);
  std::vector<Stage> stages = cut(g, num_stages);
  Expected<std::vector<StageProgram>> programs = partition_stages(g, stages);
  ASSERT_TRUE(programs.ok()) << programs.error().message;
  ASSERT_EQ(programs->size(), static_cast<size_t>(num_stages));
  std::set<NodeId> seen;
  size_t params = 0;
  for (const StageProgram& p : *programs) {
    for (NodeId id : p.backward) EXPECT_TRUE(seen.insert(id).second) << g.node(id).name << " twice";
    // I and W split the backward: disjoint, together all of it.
    EXPECT_EQ(p.input_grad.size() + p.weight_grad.size(), p.backward.size());
    for (NodeId id : p.input_grad) {
      EXPECT_EQ(std::count(p.weight_grad.begin(), p.weight_grad.end(), id), 0);
    }
    // Weight gradients are never needed for input gradients: all in W.
    for (NodeId grad : p.param_grads) {
      EXPECT_NE(std::find(p.weight_grad.begin(), p.weight_grad.end(), grad), p.weight_grad.end())
          << g.node(grad).name;
    }
    // What stage s sends backward is what stage s-1 receives.
    if (p.stage > 0) {
      EXPECT_EQ(p.grads_out, (*programs)[static_cast<size_t>(p.stage - 1)].grads_in);
      EXPECT_FALSE(p.grads_out.empty()) << "stage " << p.stage;
      EXPECT_FALSE(p.input_grad.empty()) << "stage " << p.stage;
    } else {
      EXPECT_TRUE(p.input_grad.empty());  // nothing to send back
    }
    params += p.params.size();
  }
  EXPECT_EQ(static_cast<int32_t>(seen.size()), backward_node_count(g));
  EXPECT_EQ(params + 1, g.outputs().size());  // one gradient per param, plus the loss
  EXPECT_NE(programs->back().loss, kNoNode);
}

TEST(Partition, MlpInTwoStagesGivesEveryBackwardNodeOneStage) { expect_sound_partition("mlp", 2, 2); }
TEST(Partition, MlpInFourStagesGivesEveryBackwardNodeOneStage) { expect_sound_partition("mlp", 4, 4); }
TEST(Partition, LlamaInTwoStagesGivesEveryBackwardNodeOneStage) {
  expect_sound_partition("llama3-debugmodel", 2, 2);
}
TEST(Partition, LlamaInFourStagesGivesEveryBackwardNodeOneStage) {
  expect_sound_partition("llama3-debugmodel", 4, 4);
}

// 8 stages of the 6-layer debugmodel (the must-show launch) need the cost cut:
// the embedding alone, one layer each, then norm + output + loss.
TEST(Partition, LlamaCutByCostIntoEightStagesHasOneBoundaryGradientPerCut) {
  Graph g = model("llama3-debugmodel", 6);
  Expected<HardwareProfile> cpu = load_hardware("cpu");
  ASSERT_TRUE(cpu.ok());
  Expected<std::vector<Stage>> stages = split_stages(g, {8, 4, StageBalance::kCost, &*cpu, {}});
  ASSERT_TRUE(stages.ok()) << stages.error().message;
  Expected<std::vector<StageProgram>> programs = partition_stages(g, *stages);
  ASSERT_TRUE(programs.ok()) << programs.error().message;
  for (const StageProgram& p : *programs) {
    EXPECT_EQ(p.grads_out.size(), p.stage > 0 ? 1u : 0u) << "stage " << p.stage;
    EXPECT_EQ(p.activations_out.size(), p.stage < 7 ? 1u : 0u) << "stage " << p.stage;
  }
}

TEST(Partition, LlamaBoundaryGradientIsTheResidualStreamGradient) {
  Graph g = model("llama3-debugmodel", 2);
  Expected<std::vector<StageProgram>> programs = partition_stages(g, cut(g, 2));
  ASSERT_TRUE(programs.ok()) << programs.error().message;
  const StageProgram& first = (*programs)[0];
  ASSERT_EQ(first.activations_out.size(), 1u);
  ASSERT_EQ(first.grads_in.size(), 1u);
  // The gradient has the activation's meta: f32 [2, 16, 256].
  EXPECT_EQ(g.node(first.grads_in[0]).meta(), g.node(first.activations_out[0].node).meta());
  EXPECT_EQ(g.node(first.grads_in[0]).meta().shape, (Shape{2, 16, 256}));
}

TEST(Partition, InputGradientPartReadsOnlyItsStageAndTheReceivedGradients) {
  Graph g = model("llama3-debugmodel", 2);
  std::vector<Stage> stages = cut(g, 2);
  Expected<std::vector<StageProgram>> programs = partition_stages(g, stages);
  ASSERT_TRUE(programs.ok()) << programs.error().message;
  Expected<std::vector<StageIdx>> stage_of = node_stages(g, stages);
  ASSERT_TRUE(stage_of.ok());
  const StageProgram& last = (*programs)[1];
  for (NodeId id : last.input_grad) {
    for (NodeId in : g.node(id).inputs) {
      StageIdx s = (*stage_of)[static_cast<size_t>(in)];
      EXPECT_TRUE(s == 1 || g.node(in).is_placeholder() || std::count(last.activations_in.begin(), last.activations_in.end(), Value{in, 0}))
          << g.node(id).name << " reads " << g.node(in).name << " of stage " << s;
    }
  }
}

TEST(Partition, BackwardScopesOfTheWrongStageAreCaughtNamingTheNode) {
  Graph g = model("llama3-debugmodel", 2);
  std::vector<Stage> stages = cut(g, 2);
  std::swap(stages[0].units, stages[1].units);  // backward scopes now name the other stage
  Expected<std::vector<StageProgram>> programs = partition_stages(g, stages);
  ASSERT_FALSE(programs.ok());
  EXPECT_NE(programs.error().message.find("backward node"), std::string::npos)
      << programs.error().message;
}

}  // namespace
}  // namespace autopar::pipeline
