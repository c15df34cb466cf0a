#include "report/memory_estimate.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "cost/hardware.h"
#include "sharding/mesh.h"

namespace autopar::report {
namespace {

// position: 0 w (param f32[8,8] = 256 B), 1 x (input f32[4,8] = 128 B),
// 2 mm(x, w) f32[4,8], 3 relu(mm) (the loss output), 4 g = mm(w, w) f32[8,8],
// registered as w's gradient. AdamW state: 8 B per parameter element.
struct TinyStep {
  Graph g;
  NodeId w, x, mm, relu, grad;
  Plan plan;

  TinyStep() {
    w = g.add_placeholder("w", PlaceholderKind::kParam, {{8, 8}, DType::f32});
    x = g.add_placeholder("x", PlaceholderKind::kInput, {{4, 8}, DType::f32});
    mm = *g.add(OpId::kMm, {x, w});
    relu = *g.add(OpId::kRelu, {mm});
    grad = *g.add(OpId::kMm, {w, w});
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
    return estimate_memory(g, plan);
  }
};

TEST(MemoryEstimate, ReplicatedStepHoldsFullTensorsOverTheirLiveness) {
  TinyStep t;
  MemoryTimeline m = t.estimate();
  ASSERT_EQ(m.positions.size(), 5u);
  // Resident: w 256 + x 128 = 384, optimizer 64 elements x 8 = 512.
  EXPECT_DOUBLE_EQ(m.positions[0].params, 384);
  EXPECT_DOUBLE_EQ(m.positions[0].optimizer, 512);
  EXPECT_DOUBLE_EQ(m.positions[0].total(), 896);
  EXPECT_DOUBLE_EQ(m.positions[2].activations, 128);  // mm
  EXPECT_DOUBLE_EQ(m.positions[3].activations, 256);  // mm (read by relu) + relu
  // At 4: relu (an output, kept) 128 + the gradient 256.
  EXPECT_DOUBLE_EQ(m.positions[4].activations, 128);
  EXPECT_DOUBLE_EQ(m.positions[4].grads, 256);
  EXPECT_EQ(m.peak_position, 4);
  EXPECT_EQ(m.peak_node, t.grad);
  EXPECT_DOUBLE_EQ(m.peak_bytes, 384 + 512 + 128 + 256);  // = 1280
  EXPECT_DOUBLE_EQ(m.peak.comm_buffers, 0);
}

TEST(MemoryEstimate, ShardedParamIsGatheredIntoCommBuffersWhileItsReadersRun) {
  TinyStep t;
  t.choose_output(t.w, "S(0)");  // w: 128 B per device, optimizer 32 x 8 = 256
  MemoryTimeline m = t.estimate();
  // mm at 2 reads w replicated: one 256 B gathered copy.
  EXPECT_DOUBLE_EQ(m.positions[2].comm_buffers, 256);
  EXPECT_DOUBLE_EQ(m.positions[3].comm_buffers, 0);
  // g at 4 gathers w twice (256 + 256), and the gradient goes into w's S(0)
  // after the last node (128): 640.
  EXPECT_DOUBLE_EQ(m.positions[4].comm_buffers, 640);
  EXPECT_DOUBLE_EQ(m.peak_bytes, 256 + 256 + 128 + 256 + 640);  // params, optimizer, relu, grad, comm = 1536
  EXPECT_EQ(m.peak_position, 4);
}

TEST(MemoryEstimate, TensorsAtThePeakAreListedLargestFirstWithTheirPlacement) {
  TinyStep t;
  t.choose_output(t.w, "S(0)");
  MemoryTimeline m = t.estimate();
  // At 4: comm 256, 256, 128; grad 256; optimizer 256; w 128; x 128; relu 128.
  ASSERT_EQ(m.live_at_peak.size(), 8u);
  double sum = 0;
  for (size_t i = 0; i < m.live_at_peak.size(); ++i) {
    sum += m.live_at_peak[i].bytes;
    if (i > 0) {
      EXPECT_GE(m.live_at_peak[i - 1].bytes, m.live_at_peak[i].bytes);
    }
  }
  EXPECT_DOUBLE_EQ(sum, m.peak_bytes);
  const LiveTensor& w = *std::find_if(m.live_at_peak.begin(), m.live_at_peak.end(),
                                      [](const LiveTensor& l) { return l.kind == MemoryKind::kParam && l.name == "w"; });
  EXPECT_EQ(w.placement, "S(0)");
  EXPECT_EQ(w.shape, "[8, 8]");
  EXPECT_DOUBLE_EQ(w.bytes, 128);
  EXPECT_EQ(memory_kind_name(MemoryKind::kCommBuffer), "comm_buffer");
}

TEST(MemoryEstimate, PlanWithoutAChoiceGivesAnEmptyTimeline) {
  TinyStep t;
  t.plan.choice.clear();
  MemoryTimeline m = estimate_memory(t.g, t.plan);
  EXPECT_TRUE(m.positions.empty());
  EXPECT_EQ(m.peak_position, -1);
}

}  // namespace
}  // namespace autopar::report
