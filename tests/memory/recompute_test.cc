// Recomputation candidates (memory/recompute.h) and how the step's memory
// holds a recomputed activation (memory/step_memory.h), on a step small
// enough to work out by hand.
#include "memory/recompute.h"

#include <gtest/gtest.h>

#include "cost/hardware.h"
#include "memory/step_memory.h"
#include "planner/auto_plan.h"
#include "sharding/mesh.h"

namespace autopar {
namespace {

// position: 0 w (param f32[8,8]), 1 x (input f32[4,8]), 2 h = relu(x),
// 3 m = mm(h, w), 4 s = relu(m) (the loss), 5 k = relu(m), 6 r = add(h, x),
// 7 g = mm(w, w) (w's gradient). h is read in the forward (3) and after the
// loss (6): dropped after 3, re-run before 6, from x, which 6 still reads.
// m is read right after the loss (5): no window. k and r are backward nodes.
struct WindowStep {
  Graph g;
  NodeId w, x, h, m, s, k, r, grad;

  WindowStep() {
    w = g.add_placeholder("w", PlaceholderKind::kParam, {{8, 8}, DType::f32});
    x = g.add_placeholder("x", PlaceholderKind::kInput, {{4, 8}, DType::f32});
    h = *g.add(OpId::kRelu, {x});
    m = *g.add(OpId::kMm, {h, w});
    s = *g.add(OpId::kRelu, {m});
    k = *g.add(OpId::kRelu, {m});
    r = *g.add(OpId::kAddTensor, {h, x});
    grad = *g.add(OpId::kMm, {w, w});
    g.add_output({s, OutputKind::kLoss});
    g.add_output({grad, OutputKind::kGradient, w});
  }
};

// Every node Replicate on 2 devices, evaluated.
Plan replicated_plan(const Graph& g) {
  HardwareProfile hw = *load_hardware("h100");
  Plan plan;
  plan.mesh = *make_mesh({2}, hw, {});
  plan.strategies = *build_strategy_graph(g, plan.mesh, hw);
  plan.choice.assign(static_cast<size_t>(g.size()), 0);
  plan.summary.memory_budget = 1e12;
  evaluate_plan(g, plan);
  return plan;
}

TEST(Recompute, OnlyAForwardActivationReadAgainLaterHasAWindow) {
  WindowStep t;
  RecomputeCandidates c = find_recompute_candidates(t.g);
  EXPECT_EQ(c.count, 1);
  ASSERT_TRUE(c.is_candidate(t.h));
  EXPECT_EQ(c.window[static_cast<size_t>(t.h)].drop_after, t.m);
  EXPECT_EQ(c.window[static_cast<size_t>(t.h)].restore_at, t.r);
  EXPECT_EQ(c.rerun[static_cast<size_t>(t.h)], std::vector<NodeId>{t.h});
  EXPECT_FALSE(c.is_candidate(t.m));  // read at 4 and 5: nothing to free in between
  EXPECT_FALSE(c.is_candidate(t.s));  // the loss
  EXPECT_FALSE(c.is_candidate(t.k));  // backward
  EXPECT_FALSE(c.is_candidate(t.x));  // placeholder
  EXPECT_TRUE(c.exclusive.empty());
}

TEST(Recompute, AReRunMustNotReadAValueAlreadyLetGo) {
  // h2 = relu(h), read in the forward and after the loss; h itself is last
  // read by h2's forward run, so re-running h2 would need a freed h.
  Graph g;
  NodeId w = g.add_placeholder("w", PlaceholderKind::kParam, {{8, 8}, DType::f32});
  NodeId x = g.add_placeholder("x", PlaceholderKind::kInput, {{4, 8}, DType::f32});
  NodeId h = *g.add(OpId::kRelu, {x});
  NodeId h2 = *g.add(OpId::kRelu, {h});
  NodeId m = *g.add(OpId::kMm, {h2, w});
  NodeId s = *g.add(OpId::kRelu, {m});
  NodeId k = *g.add(OpId::kRelu, {m});
  *g.add(OpId::kRelu, {h2});
  NodeId grad = *g.add(OpId::kMm, {w, w});
  (void)k;
  g.add_output({s, OutputKind::kLoss});
  g.add_output({grad, OutputKind::kGradient, w});
  RecomputeCandidates c = find_recompute_candidates(g);
  EXPECT_FALSE(c.is_candidate(h2));
  EXPECT_FALSE(c.is_candidate(h));  // read in the forward only
  EXPECT_EQ(c.count, 0);
}

TEST(Recompute, TheStepDoesNotHoldARecomputedActivationInsideItsWindow) {
  WindowStep t;
  Plan plan = replicated_plan(t.g);
  MemoryTimeline kept = plan_memory(t.g, plan);
  const double compute_kept = plan.summary.compute_s;
  plan.recompute.assign(static_cast<size_t>(t.g.size()), 0);
  plan.recompute[static_cast<size_t>(t.h)] = 1;
  evaluate_plan(t.g, plan);
  MemoryTimeline dropped = plan_memory(t.g, plan);
  const double h_bytes = 4 * 8 * 4;
  for (NodeId p = 0; p < t.g.size(); ++p) {
    const bool in_window = p > t.m && p < t.r;
    EXPECT_DOUBLE_EQ(kept.positions[static_cast<size_t>(p)].activations -
                         dropped.positions[static_cast<size_t>(p)].activations,
                     in_window ? h_bytes : 0.0)
        << "position " << p;
  }
  // The re-run costs h's compute once more, and the summary says so.
  const NodeStrategies& ns = plan.strategies.nodes[static_cast<size_t>(t.h)];
  EXPECT_EQ(plan.summary.recomputed, 1);
  EXPECT_DOUBLE_EQ(plan.summary.recompute_compute_s, ns.compute_s[0]);
  EXPECT_DOUBLE_EQ(plan.summary.compute_s, compute_kept + ns.compute_s[0]);
}

// Whole layers (find_layer_recompute). position: 0 w (param f32[8,8]), 1 x
// (input f32[4,8]); layer "layers.0": 2 a = relu(x), 3 b = relu(a), 4 c =
// mm(b, w) (the layer's output: the loss reads it); 5 s = relu(c) (the
// loss), 6 k = relu(c), 7 r = relu(b), 8 g = mm(w, w) (w's gradient). The
// backward reads b first at 7: b and a, which b is made from, re-run there;
// c, read outside the layer, is kept.
struct LayerStep {
  Graph g;
  NodeId w, x, a, b, c, s, k, r, grad;

  LayerStep() {
    w = g.add_placeholder("w", PlaceholderKind::kParam, {{8, 8}, DType::f32});
    x = g.add_placeholder("x", PlaceholderKind::kInput, {{4, 8}, DType::f32});
    a = *g.add(OpId::kRelu, {x}, {}, "layers.0.ffn");
    b = *g.add(OpId::kRelu, {a}, {}, "layers.0.ffn");
    c = *g.add(OpId::kMm, {b, w}, {}, "layers.0.out");
    s = *g.add(OpId::kRelu, {c}, {}, "loss");
    k = *g.add(OpId::kRelu, {c}, {}, "layers.0.out");
    r = *g.add(OpId::kRelu, {b}, {}, "layers.0.ffn");
    grad = *g.add(OpId::kMm, {w, w});
    g.add_output({s, OutputKind::kLoss});
    g.add_output({grad, OutputKind::kGradient, w});
  }
};

TEST(Recompute, AWholeLayerReRunsWhatTheBackwardReadsAndWhatMakesIt) {
  LayerStep t;
  RecomputeCandidates c = find_layer_recompute(t.g);
  ASSERT_EQ(c.layers, std::vector<std::string>{"layers.0"});
  EXPECT_EQ(c.count, 2);
  ASSERT_TRUE(c.is_candidate(t.a));
  ASSERT_TRUE(c.is_candidate(t.b));
  EXPECT_FALSE(c.is_candidate(t.c));  // read by the loss, outside the layer
  EXPECT_FALSE(c.is_candidate(t.k));  // backward
  EXPECT_EQ(c.window[static_cast<size_t>(t.a)].drop_after, t.b);
  EXPECT_EQ(c.window[static_cast<size_t>(t.a)].restore_at, t.r);
  EXPECT_EQ(c.window[static_cast<size_t>(t.b)].drop_after, t.c);
  EXPECT_EQ(c.window[static_cast<size_t>(t.b)].restore_at, t.r);
  EXPECT_EQ(c.layer[static_cast<size_t>(t.a)], 0);
  EXPECT_EQ(c.layer[static_cast<size_t>(t.s)], -1);
  EXPECT_TRUE(c.exclusive.empty());
  // The one-level rule cannot re-run a: nothing after the loss reads it.
  EXPECT_FALSE(find_recompute_candidates(t.g).is_candidate(t.a));
}

TEST(Recompute, AWholeLayerIsHeldOutsideItsWindowAndAtItsReRun) {
  LayerStep t;
  Plan plan = replicated_plan(t.g);
  MemoryTimeline kept = plan_memory(t.g, plan);
  const double compute_kept = plan.summary.compute_s;
  plan.recompute.assign(static_cast<size_t>(t.g.size()), 0);
  plan.recompute[static_cast<size_t>(t.a)] = plan.recompute[static_cast<size_t>(t.b)] = kLayerMark;
  evaluate_plan(t.g, plan);
  MemoryTimeline dropped = plan_memory(t.g, plan);
  const double bytes = 4 * 8 * 4;  // a and b alike
  for (NodeId p = 0; p < t.g.size(); ++p) {
    // b is not held between its last forward read (4) and its re-run (7);
    // at 7, a is held too (re-run to make b, nothing reads it later).
    const double freed = p > t.c && p < t.r ? bytes : p == t.r ? -bytes : 0.0;
    EXPECT_DOUBLE_EQ(kept.positions[static_cast<size_t>(p)].activations -
                         dropped.positions[static_cast<size_t>(p)].activations,
                     freed)
        << "position " << p;
  }
  const auto& ns = plan.strategies.nodes;
  const double again = ns[static_cast<size_t>(t.a)].compute_s[0] + ns[static_cast<size_t>(t.b)].compute_s[0];
  EXPECT_EQ(plan.summary.recomputed, 2);
  EXPECT_EQ(plan.summary.recomputed_layers, 1);
  EXPECT_DOUBLE_EQ(plan.summary.recompute_compute_s, again);
  EXPECT_DOUBLE_EQ(plan.summary.compute_s, compute_kept + again);
}

TEST(Recompute, ALayerNodeWhoseReRunWouldReadAFreedValueIsKept) {
  // e, outside any layer, is last read by f's forward run: f cannot re-run.
  Graph g;
  NodeId w = g.add_placeholder("w", PlaceholderKind::kParam, {{8, 8}, DType::f32});
  NodeId x = g.add_placeholder("x", PlaceholderKind::kInput, {{4, 8}, DType::f32});
  NodeId e = *g.add(OpId::kRelu, {x}, {}, "embed");
  NodeId f = *g.add(OpId::kRelu, {e}, {}, "h.0.mlp");
  NodeId m = *g.add(OpId::kMm, {f, w}, {}, "h.0.mlp");
  NodeId s = *g.add(OpId::kRelu, {m}, {}, "loss");
  *g.add(OpId::kRelu, {f}, {}, "h.0.mlp");
  NodeId grad = *g.add(OpId::kMm, {w, w});
  g.add_output({s, OutputKind::kLoss});
  g.add_output({grad, OutputKind::kGradient, w});
  RecomputeCandidates c = find_layer_recompute(g);
  ASSERT_EQ(c.layers, std::vector<std::string>{"h.0"});
  EXPECT_FALSE(c.is_candidate(f));
  EXPECT_FALSE(c.is_candidate(e));
  EXPECT_EQ(c.count, 0);
}

TEST(Recompute, ModesParseAndPrint) {
  RecomputeMode mode = RecomputeMode::kNone;
  ASSERT_TRUE(parse_recompute_mode("auto", mode));
  EXPECT_EQ(mode, RecomputeMode::kAuto);
  EXPECT_EQ(recompute_mode_name(RecomputeMode::kFull), "full");
  EXPECT_FALSE(parse_recompute_mode("some", mode));
}

}  // namespace
}  // namespace autopar
