// What a profile measured by `autopar calibrate --model --mesh` changes in the
// cost model: measured op calls, per-collective rings, optimizer updates and
// the runtime's per-op overhead; and that they survive a write and a read.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cost/comm_cost.h"
#include "cost/compute_cost.h"
#include "cost/hardware.h"

namespace autopar {
namespace {

constexpr const char* kProfile = R"json({
  "name": "measured",
  "peak_flops": {"f32": 1e12},
  "memory_bandwidth_bytes_per_s": 1e11,
  "memory_bytes": 1e9,
  "devices_per_node": 2,
  "node_overhead_s": 2e-6,
  "intra_node": {"bandwidth_bytes_per_s": 1e10, "latency_s": 1e-6,
                 "collectives": {"all_gather": {"latency_s": 5e-6, "bandwidth_bytes_per_s": 1e9}}},
  "inter_node": {"bandwidth_bytes_per_s": 1e9, "latency_s": 1e-5},
  "optimizer_update": {"adamw": {"per_tensor_s": 1e-5, "per_element_s": 1e-9}},
  "op_times": {"optimizer.adamw(f32[4, 8])": 0.25,
               "optimizer.adamw(f32[4, 8], grad transposed)": 0.75,
               "aten.mm.default(f32[4, 8], f32[8, 2]) -> f32[4, 2]": 0.5},
  "op_times_warm": {"aten.mm.default(f32[4, 8], f32[8, 2]) -> f32[4, 2]": 0.125},
  "cache_bytes": 1048576
})json";

HardwareProfile profile() {
  Expected<HardwareProfile> hw = parse_hardware_json(kProfile);
  EXPECT_TRUE(hw) << hw.error().message;
  return *hw;
}

TEST(CalibratedCost, AMeasuredOpCallCostsItsTimePlusTheRuntimeOverhead) {
  HardwareProfile hw = profile();
  std::vector<TensorMeta> a{{{4, 8}, DType::f32}}, b{{{8, 2}, DType::f32}};
  std::vector<const std::vector<TensorMeta>*> inputs{&a, &b};
  Attrs none;
  OpCall call{inputs, none};
  std::vector<TensorMeta> out{{{4, 2}, DType::f32}};
  EXPECT_EQ(op_call_key("aten.mm.default", call, out), "aten.mm.default(f32[4, 8], f32[8, 2]) -> f32[4, 2]");
  EXPECT_DOUBLE_EQ(compute_time(OpId::kMm, call, out, hw), 0.5 + 2e-6);
  // Another shape is not in the table: the roofline, floored, plus the overhead.
  std::vector<TensorMeta> c{{{4, 16}, DType::f32}}, d{{{16, 2}, DType::f32}};
  std::vector<const std::vector<TensorMeta>*> other{&c, &d};
  OpCall unmeasured{other, none};
  EXPECT_LT(compute_time(OpId::kMm, unmeasured, out, hw), 1e-3);
  EXPECT_GE(compute_time(OpId::kMm, unmeasured, out, hw), 2e-6);
}

TEST(CalibratedCost, AnUpdateIsMeasuredByShapeThenByTheFittedLine) {
  HardwareProfile hw = profile();
  const GradLayout plain = GradLayout::kContiguous, transposed = GradLayout::kTransposed;
  EXPECT_DOUBLE_EQ(update_time(Optimizer::kAdamW, TensorMeta{{4, 8}, DType::f32}, plain, hw), 0.25);
  // The same shape with its gradient arriving transposed is its own measurement.
  EXPECT_DOUBLE_EQ(update_time(Optimizer::kAdamW, TensorMeta{{4, 8}, DType::f32}, transposed, hw), 0.75);
  EXPECT_DOUBLE_EQ(update_time(Optimizer::kAdamW, TensorMeta{{1000}, DType::f32}, plain, hw), 1e-5 + 1000 * 1e-9);
  // SGD was not measured: a memory-bound pass (3 x 4 bytes per element at 1e11 B/s).
  EXPECT_DOUBLE_EQ(update_time(Optimizer::kSgd, TensorMeta{{1000}, DType::f32}, plain, hw), 1000 * 12 / 1e11);
}

TEST(CalibratedCost, ALinearWeightsGradientArrivesTransposedAndABiasesDoesNot) {
  // loss = sum(x @ w.t() + b), the backward as aten writes it: dw = t(mm(t(dy), x)).
  Graph g;
  NodeId x = g.add_placeholder("x", PlaceholderKind::kInput, TensorMeta{{4, 8}, DType::f32});
  NodeId w = g.add_placeholder("w", PlaceholderKind::kParam, TensorMeta{{2, 8}, DType::f32});
  NodeId b = g.add_placeholder("b", PlaceholderKind::kParam, TensorMeta{{2}, DType::f32});
  NodeId dy = g.add_placeholder("dy", PlaceholderKind::kTangent, TensorMeta{{4, 2}, DType::f32});
  NodeId dyt = *g.add(OpId::kT, {dy});
  NodeId dwt = *g.add(OpId::kMm, {dyt, x});
  NodeId dw = *g.add(OpId::kT, {dwt});
  Attrs sum_attrs;
  sum_attrs.set("dim", std::vector<int64_t>{0});
  sum_attrs.set("keepdim", false);
  NodeId db = *g.add(OpId::kSumDimIntList, {dy}, sum_attrs);
  g.add_output(GraphOutput{dw, OutputKind::kGradient, w});
  g.add_output(GraphOutput{db, OutputKind::kGradient, b});
  EXPECT_EQ(gradient_layout(g, w), GradLayout::kTransposed);
  EXPECT_EQ(gradient_layout(g, b), GradLayout::kContiguous);
  EXPECT_EQ(update_key(Optimizer::kAdamW, TensorMeta{{2, 8}, DType::f32}, GradLayout::kTransposed),
            "optimizer.adamw(f32[2, 8], grad transposed)");
}

TEST(CalibratedCost, AMeasuredCollectiveUsesItsOwnRing) {
  HardwareProfile hw = profile();
  double bytes = 1 << 20;
  // all-gather on 2: one step of 5 us, half the buffer over 1 GB/s.
  EXPECT_DOUBLE_EQ(collective_time(Collective::kAllGather, 2, bytes, hw.intra_node), 5e-6 + bytes / 2 / 1e9);
  // all-reduce was not measured: the link's ring (2 steps of 1 us, the buffer over 10 GB/s).
  EXPECT_DOUBLE_EQ(collective_time(Collective::kAllReduce, 2, bytes, hw.intra_node), 2e-6 + bytes / 1e10);
}

// Op calls timed cold also carry their warm times: a run whose devices hold
// no more than the measured cache is priced warm, a larger one cold.
TEST(CalibratedCost, TheFootprintChoosesWarmOrColdOpTimes) {
  HardwareProfile hw = profile();
  const std::string mm = "aten.mm.default(f32[4, 8], f32[8, 2]) -> f32[4, 2]";
  EXPECT_DOUBLE_EQ(operands_for_footprint(hw, 1 << 20).op_times.at(mm), 0.125);
  EXPECT_DOUBLE_EQ(operands_for_footprint(hw, 2 << 20).op_times.at(mm), 0.5);
  // Entries without a warm time keep theirs.
  EXPECT_DOUBLE_EQ(operands_for_footprint(hw, 1 << 20).op_times.at("optimizer.adamw(f32[4, 8])"), 0.25);
  hw.cache_bytes = 0;  // no cache measured: unchanged
  EXPECT_DOUBLE_EQ(operands_for_footprint(hw, 1).op_times.at(mm), 0.5);
}

TEST(CalibratedCost, MeasuredFiguresSurviveAWriteAndARead) {
  HardwareProfile hw = profile();
  Expected<HardwareProfile> back = parse_hardware_json(write_hardware_json(hw));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->op_times, hw.op_times);
  EXPECT_EQ(back->op_times_warm, hw.op_times_warm);
  EXPECT_DOUBLE_EQ(back->cache_bytes, 1048576);
  EXPECT_DOUBLE_EQ(back->node_overhead_s, 2e-6);
  EXPECT_DOUBLE_EQ(back->adamw_update.per_element_s, 1e-9);
  EXPECT_DOUBLE_EQ(back->intra_node.measured[0].bandwidth_bytes_per_s, 1e9);
  EXPECT_DOUBLE_EQ(back->intra_node.measured[2].bandwidth_bytes_per_s, 0);
}

TEST(CalibratedCost, AnUnknownCollectiveNameIsRefusedNamingTheField) {
  std::string text = kProfile;
  text.replace(text.find("\"all_gather\": {\"latency_s\""), 12, "\"all_gathers\"");
  Expected<HardwareProfile> hw = parse_hardware_json(text);
  ASSERT_FALSE(hw);
  EXPECT_NE(hw.error().message.find("intra_node.collectives.all_gathers"), std::string::npos) << hw.error().message;
}

}  // namespace
}  // namespace autopar
