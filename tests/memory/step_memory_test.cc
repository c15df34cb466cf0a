// The one memory model (memory/step_memory.h) on a five-node step whose every
// byte is worked out by hand, through the planner's plan_memory as the plan
// summary, explain and the report call it.
#include "memory/step_memory.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "cost/hardware.h"
#include "memory/recompute.h"
#include "planner/auto_plan.h"
#include "sharding/mesh.h"

namespace autopar {
namespace {

// position: 0 w (param f32[8,8] = 256 B), 1 x (input f32[4,8] = 128 B),
// 2 mm(x, w) f32[4,8], 3 relu(mm) (the loss output), 4 g = mm(w, w) f32[8,8],
// registered as w's gradient, and (with_tail) 5 relu(x), read by nothing.
// AdamW state: 8 B per parameter element. Mesh: 2 devices.
struct TinyStep {
  Graph g;
  NodeId w, x, mm, relu, grad, tail = kNoNode;
  Plan plan;

  explicit TinyStep(bool with_tail = false) {
    w = g.add_placeholder("w", PlaceholderKind::kParam, {{8, 8}, DType::f32});
    x = g.add_placeholder("x", PlaceholderKind::kInput, {{4, 8}, DType::f32});
    mm = *g.add(OpId::kMm, {x, w});
    relu = *g.add(OpId::kRelu, {mm});
    grad = *g.add(OpId::kMm, {w, w});
    if (with_tail) tail = *g.add(OpId::kRelu, {x});
    g.add_output({relu, OutputKind::kLoss});
    g.add_output({grad, OutputKind::kGradient, w});
    HardwareProfile hw = *load_hardware("h100");
    plan.mesh = *make_mesh({2}, hw, {});
    plan.strategies = *build_strategy_graph(g, plan.mesh, hw);
    plan.choice.assign(static_cast<size_t>(g.size()), 0);  // strategy 0: all Replicate
    plan.summary.memory_budget = 1e12;
  }

  // The first strategy of `node` whose output is `output` (e.g. "S(0)").
  void choose_output(NodeId node, const std::string& output) {
    const NodeStrategies& ns = plan.strategies.nodes[static_cast<size_t>(node)];
    for (StrategyIdx s = 0; s < ns.size(); ++s) {
      if (to_string(ns.output(s, 0)) == output) {
        plan.choice[static_cast<size_t>(node)] = s;
        return;
      }
    }
    FAIL() << "no strategy of " << g.node(node).name << " outputs " << output;
  }

  MemoryTimeline estimate() {
    evaluate_plan(g, plan);
    return plan_memory(g, plan);
  }
};

double listed_sum(const MemoryTimeline& m) {
  double sum = 0;
  for (const LiveTensor& t : m.live_at_peak) sum += t.bytes;
  return sum;
}

TEST(StepMemory, ReplicatedStepHoldsFullTensorsOverTheirLiveness) {
  TinyStep t;
  MemoryTimeline m = t.estimate();
  ASSERT_EQ(m.positions.size(), 5u);
  // All step: w 256, optimizer 64 elements x 8 = 512, x 128.
  EXPECT_DOUBLE_EQ(m.positions[0].params, 256);
  EXPECT_DOUBLE_EQ(m.positions[0].optimizer, 512);
  EXPECT_DOUBLE_EQ(m.positions[0].inputs, 128);
  EXPECT_DOUBLE_EQ(m.positions[0].total(), 896);
  EXPECT_DOUBLE_EQ(m.positions[2].activations, 128);  // mm
  EXPECT_DOUBLE_EQ(m.positions[3].activations, 256);  // mm (read by relu) + relu
  // At 4: relu (the loss, kept) 128 + the gradient 256; it is already in
  // w's placement, so no reduction copy.
  EXPECT_DOUBLE_EQ(m.positions[4].activations, 128);
  EXPECT_DOUBLE_EQ(m.positions[4].grads, 256);
  EXPECT_EQ(m.peak_position, 4);
  EXPECT_EQ(m.peak_node, t.grad);
  EXPECT_DOUBLE_EQ(m.peak_bytes, 896 + 128 + 256);
  EXPECT_DOUBLE_EQ(m.peak.comm_buffers, 0);
  EXPECT_DOUBLE_EQ(listed_sum(m), m.peak_bytes);
  // The plan summary is the same model's peak.
  EXPECT_DOUBLE_EQ(t.plan.summary.memory.peak, m.peak_bytes);
  EXPECT_EQ(t.plan.summary.memory.peak_position, 4);
}

TEST(StepMemory, ShardedParamIsGatheredIntoCommBuffersWhileItsReadersRun) {
  TinyStep t;
  t.choose_output(t.w, "S(0)");  // w: 128 B per device, optimizer 32 x 8 = 256
  MemoryTimeline m = t.estimate();
  // mm at 2 reads w replicated: one 256 B gathered copy while the kernel runs.
  EXPECT_DOUBLE_EQ(m.positions[2].comm_buffers, 256);
  EXPECT_DOUBLE_EQ(m.positions[3].comm_buffers, 0);
  // g at 4 gathers w twice (256 + 256) and runs: static 512, relu 128, its
  // output 256, copies 512. Reducing the gradient to S(0) afterwards (a 128 B
  // slice, the copies freed) holds less.
  EXPECT_DOUBLE_EQ(m.positions[4].comm_buffers, 512);
  EXPECT_DOUBLE_EQ(m.peak_bytes, 512 + 128 + 256 + 512);
  EXPECT_EQ(m.peak_position, 4);
  EXPECT_DOUBLE_EQ(t.plan.summary.memory.peak, m.peak_bytes);
}

TEST(StepMemory, AGradientIsHeldInItsParamsPlacementOnceReduced) {
  TinyStep t(/*with_tail=*/true);
  t.choose_output(t.w, "S(0)");
  MemoryTimeline m = t.estimate();
  ASSERT_EQ(m.positions.size(), 6u);
  EXPECT_DOUBLE_EQ(m.positions[4].grads, 256);  // the replicated gradient, until reduced
  // At 5 only the reduced copy remains: w's S(0) shard, 128 B.
  EXPECT_DOUBLE_EQ(m.positions[5].grads, 128);
  // The reduction at 4 (R -> S(0), one local slice) was counted there.
  TinyStep r(/*with_tail=*/true);
  MemoryTimeline replicated = r.estimate();
  EXPECT_DOUBLE_EQ(replicated.positions[5].grads, 256);
}

TEST(StepMemory, TensorsAtThePeakAreListedLargestFirstAndSumToThePeak) {
  TinyStep t;
  t.choose_output(t.w, "S(0)");
  MemoryTimeline m = t.estimate();
  // At 4, kernel phase: comm 256, 256; grad 256; optimizer 256; w 128; x 128; relu 128.
  ASSERT_EQ(m.live_at_peak.size(), 7u);
  for (size_t i = 1; i < m.live_at_peak.size(); ++i) {
    EXPECT_GE(m.live_at_peak[i - 1].bytes, m.live_at_peak[i].bytes);
  }
  EXPECT_DOUBLE_EQ(listed_sum(m), m.peak_bytes);
  const LiveTensor& w = *std::find_if(m.live_at_peak.begin(), m.live_at_peak.end(),
                                      [](const LiveTensor& l) { return l.kind == MemoryKind::kParam && l.name == "w"; });
  EXPECT_EQ(w.placement, "S(0)");
  EXPECT_EQ(w.shape, "[8, 8]");
  EXPECT_DOUBLE_EQ(w.bytes, 128);
  EXPECT_EQ(std::count_if(m.live_at_peak.begin(), m.live_at_peak.end(),
                          [](const LiveTensor& l) { return l.kind == MemoryKind::kCommBuffer; }),
            2);
  EXPECT_EQ(memory_kind_name(MemoryKind::kCommBuffer), "comm_buffer");
}

TEST(StepMemory, TheMemoryRowsCountTheSameHoldings) {
  // Every holding but the comm buffers goes into the ILP's rows; a holding
  // held all step is static, every other one node's interval.
  TinyStep t(/*with_tail=*/true);
  std::vector<StepHolding> held = step_holdings(t.g, t.plan.strategies, 8);
  int32_t last = t.g.size() - 1;
  std::vector<int> intervals(static_cast<size_t>(t.g.size()), 0);
  for (const StepHolding& h : held) {
    if (!h.all_step(last)) ++intervals[static_cast<size_t>(h.node)];
  }
  for (int count : intervals) EXPECT_LE(count, 1);
  EXPECT_EQ(intervals[static_cast<size_t>(t.w)], 1);  // w's reduced gradient, 5..5
}

// A layer re-run (memory/recompute.h, whole layers) gathers its sharded
// operand again before the node that reads it: position 0 w (param
// f32[8,1]), 1 x (input f32[64,8], S(0): 1024 B per device); layer
// "layers.0": 2 a = mm(x, w) f32[64,1] (x gathered: a 2048 B copy), 3 c =
// relu(a) (read by the loss: kept); 4 s = relu(c) (the loss), 5 r = add(a,
// c) (a's first backward read: a is re-run before it), 6 w's gradient.
TEST(StepMemory, AReRunGathersItsOperandAgainBeforeTheNodeThatReadsIt) {
  Graph g;
  NodeId w = g.add_placeholder("w", PlaceholderKind::kParam, {{8, 1}, DType::f32});
  NodeId x = g.add_placeholder("x", PlaceholderKind::kInput, {{64, 8}, DType::f32});
  NodeId a = *g.add(OpId::kMm, {x, w}, {}, "layers.0.mlp");
  NodeId c = *g.add(OpId::kRelu, {a}, {}, "layers.0.mlp");
  NodeId s = *g.add(OpId::kRelu, {c}, {}, "loss");
  NodeId r = *g.add(OpId::kAddTensor, {a, c}, {}, "layers.0.mlp");
  NodeId grad = *g.add(OpId::kRelu, {w});
  g.add_output({s, OutputKind::kLoss});
  g.add_output({grad, OutputKind::kGradient, w});
  HardwareProfile hw = *load_hardware("h100");
  Plan plan;
  plan.mesh = *make_mesh({2}, hw, {});
  plan.strategies = *build_strategy_graph(g, plan.mesh, hw);
  plan.choice.assign(static_cast<size_t>(g.size()), 0);  // all Replicate but x
  const NodeStrategies& xs = plan.strategies.nodes[static_cast<size_t>(x)];
  for (StrategyIdx k = 0; k < xs.size(); ++k)
    if (to_string(xs.output(k, 0)) == "S(0)") plan.choice[static_cast<size_t>(x)] = k;
  plan.summary.memory_budget = 1e12;
  evaluate_plan(g, plan);
  const MemoryTimeline kept = plan_memory(g, plan);
  ASSERT_TRUE(find_layer_recompute(g).is_candidate(a));
  plan.recompute.assign(static_cast<size_t>(g.size()), 0);
  plan.recompute[static_cast<size_t>(a)] = kLayerMark;
  evaluate_plan(g, plan);
  const MemoryTimeline m = plan_memory(g, plan);
  // The forward's a at 2: the gathered copy (2048 B) and a (256 B) beside
  // what is held all step. Before r at 5, the same re-run beside c and s
  // (256 B each), which the forward did not hold yet: the peak.
  EXPECT_DOUBLE_EQ(m.positions[2].comm_buffers, 2048);
  EXPECT_EQ(m.peak_position, r);
  EXPECT_DOUBLE_EQ(m.peak_bytes, m.positions[2].total() + 512);
  EXPECT_DOUBLE_EQ(m.peak.comm_buffers, 2048);
  EXPECT_DOUBLE_EQ(listed_sum(m), m.peak_bytes);
  // Keeping a, r's position holds no copy.
  EXPECT_DOUBLE_EQ(kept.positions[static_cast<size_t>(r)].comm_buffers, 0);
  EXPECT_LT(kept.positions[static_cast<size_t>(r)].total(), m.peak_bytes);
  // The re-run's gather is counted twice in the step's communication.
  EXPECT_EQ(plan.summary.recomputed_layers, 1);
  EXPECT_GT(plan.summary.recompute_comm_s, 0);
}

TEST(StepMemory, PlanWithoutAChoiceGivesAnEmptyTimeline) {
  TinyStep t;
  t.plan.choice.clear();
  MemoryTimeline m = plan_memory(t.g, t.plan);
  EXPECT_TRUE(m.positions.empty());
  EXPECT_EQ(m.peak_position, -1);
}

}  // namespace
}  // namespace autopar
