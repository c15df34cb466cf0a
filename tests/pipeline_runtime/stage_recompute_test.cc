// Whole-layer recomputation in pipeline stages (stage_recompute.h): where the
// re-runs go in each backward list, what the keep rules keep, and what the
// memory model predicts with them (the stage runtime is held to it by
// `autopar pipeline --check`, pipeline_run_tests.cmake).
#include "pipeline_runtime/stage_recompute.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "memory/recompute.h"
#include "models/registry.h"
#include "pipeline/lower.h"
#include "pipeline_runtime/keep_rules.h"
#include "pipeline_runtime/pipeline_memory.h"

namespace autopar::pipeline {
namespace {

// llama3-debugmodel, 2 layers, microbatch 2 x 16, one layer per stage on 2 ranks.
struct TwoStageLlama {
  Graph graph;
  std::vector<Stage> stages;
  std::vector<StageProgram> programs;

  TwoStageLlama() {
    ModelOptions o;
    o.name = "llama3-debugmodel";
    o.layers = 2;
    o.batch = 2;
    o.seq = 16;
    Expected<Graph> g = build_model(o);
    EXPECT_TRUE(g.ok()) << g.error().message;
    graph = std::move(*g);
    Expected<std::vector<Stage>> s = split_stages(graph, {2, 2, StageBalance::kCount, nullptr, {}});
    EXPECT_TRUE(s.ok()) << s.error().message;
    stages = std::move(*s);
    Expected<std::vector<StageProgram>> p = partition_stages(graph, stages);
    EXPECT_TRUE(p.ok()) << p.error().message;
    programs = std::move(*p);
  }
  Expected<std::vector<RankMemory>> peaks(ScheduleKind kind) const {
    Expected<Schedule> schedule = make_schedule({kind, 2, 4, 1});
    EXPECT_TRUE(schedule.ok()) << schedule.error().message;
    Schedule lowered = lower_communication(*schedule);
    return predict_pipeline_memory({&graph, &stages, &programs, &lowered, 0});
  }
};

bool has(const std::vector<NodeId>& nodes, NodeId v) { return std::find(nodes.begin(), nodes.end(), v) != nodes.end(); }

TEST(StageRecompute, EachStageReRunsItsLayerBeforeTheFirstBackwardNodeThatNeedsIt) {
  TwoStageLlama t;
  const std::vector<StageProgram> kept = t.programs;
  EXPECT_EQ(add_layer_recomputation(t.graph, t.programs), 2);
  const RecomputeCandidates layers = find_layer_recompute(t.graph);
  for (size_t s = 0; s < t.programs.size(); ++s) {
    const StageProgram& p = t.programs[s];
    ASSERT_FALSE(p.rerun.empty()) << "stage " << s;
    std::vector<int32_t> position(static_cast<size_t>(t.graph.size()), -1);
    for (size_t i = 0; i < p.backward.size(); ++i) {
      NodeId v = p.backward[i];
      EXPECT_EQ(position[static_cast<size_t>(v)], -1) << t.graph.node(v).name << " runs twice in B";
      position[static_cast<size_t>(v)] = static_cast<int32_t>(i);
    }
    EXPECT_EQ(p.backward.size(), kept[s].backward.size() + p.rerun.size());
    for (NodeId v : p.rerun) {
      EXPECT_TRUE(layers.is_candidate(v)) << t.graph.node(v).name;
      EXPECT_TRUE(has(p.forward, v));
      ASSERT_GE(position[static_cast<size_t>(v)], 0) << t.graph.node(v).name << " not re-run in B";
      // What it reads is made before it in B, or kept from F.
      for (NodeId u : t.graph.node(v).inputs) {
        if (has(p.rerun, u)) {
          EXPECT_LT(position[static_cast<size_t>(u)], position[static_cast<size_t>(v)]);
        }
      }
    }
    // Every node B reads is held: re-run before it, or kept after F.
    const StageKeepRules rules = keep_rules(t.graph, p);
    for (size_t i = 0; i < p.backward.size(); ++i) {
      for (NodeId u : t.graph.node(p.backward[i]).inputs) {
        if (has(p.rerun, u)) {
          EXPECT_LT(position[static_cast<size_t>(u)], static_cast<int32_t>(i));
          EXPECT_FALSE(rules.after_forward[static_cast<size_t>(u)]) << t.graph.node(u).name << " kept after F";
        }
      }
    }
    // I and W together re-run each node once at most (W reuses what I kept).
    for (NodeId v : p.rerun) {
      const int runs = static_cast<int>(std::count(p.input_grad.begin(), p.input_grad.end(), v) +
                                        std::count(p.weight_grad.begin(), p.weight_grad.end(), v));
      EXPECT_LE(runs, 1) << t.graph.node(v).name;
      if (runs == 1 && has(p.input_grad, v)) {
        bool w_reads = false;
        for (NodeId w : p.weight_grad)
          for (NodeId u : t.graph.node(w).inputs) w_reads = w_reads || u == v;
        if (w_reads) {
          EXPECT_TRUE(rules.after_input_grad[static_cast<size_t>(v)]) << t.graph.node(v).name;
        }
      }
    }
  }
}

TEST(StageRecompute, TheFirstStageHoldsLessAtItsPeak) {
  TwoStageLlama kept, rerun;
  add_layer_recomputation(rerun.graph, rerun.programs);
  for (ScheduleKind kind : {ScheduleKind::k1F1B, ScheduleKind::kGPipe, ScheduleKind::kZBH1}) {
    Expected<std::vector<RankMemory>> a = kept.peaks(kind), b = rerun.peaks(kind);
    ASSERT_TRUE(a.ok()) << a.error().message;
    ASSERT_TRUE(b.ok()) << b.error().message;
    // Rank 0 holds up to 2 (1F1B) or 4 (GPipe) microbatches of layer 0.
    EXPECT_LT((*b)[0].peak_bytes, (*a)[0].peak_bytes) << schedule_kind_name(kind);
  }
}

TEST(StageRecompute, AGraphWithoutLayersReRunsNothing) {
  Graph g;
  NodeId w = g.add_placeholder("w", PlaceholderKind::kParam, {{8, 8}, DType::f32});
  NodeId x = g.add_placeholder("x", PlaceholderKind::kInput, {{4, 8}, DType::f32});
  NodeId h = *g.add(OpId::kRelu, {x});
  NodeId m = *g.add(OpId::kMm, {h, w});
  NodeId s = *g.add(OpId::kRelu, {m});
  *g.add(OpId::kRelu, {h});
  NodeId grad = *g.add(OpId::kMm, {w, w});
  g.add_output({s, OutputKind::kLoss});
  g.add_output({grad, OutputKind::kGradient, w});
  std::vector<StageProgram> programs(1);
  programs[0].forward = {h, m, s};
  programs[0].backward = {static_cast<NodeId>(s + 1), grad};
  const std::vector<NodeId> before = programs[0].backward;
  EXPECT_EQ(add_layer_recomputation(g, programs), 0);
  EXPECT_EQ(programs[0].backward, before);
  EXPECT_TRUE(programs[0].rerun.empty());
}

}  // namespace
}  // namespace autopar::pipeline
