#include <gtest/gtest.h>

#include "cost/compute_cost.h"
#include "ir/graph.h"

namespace autopar {
namespace {

// A round-number device: f32 1 TFLOP/s, bf16 4 TFLOP/s, 100 GB/s, efficiencies
// 0.5, floor 1 us. Achieved: f32 0.5e12 FLOP/s, bf16 2e12 FLOP/s, 50e9 B/s.
HardwareProfile round_device() {
  HardwareProfile hw;
  hw.name = "round";
  hw.peak_flops[static_cast<size_t>(DType::f32)] = 1e12;
  hw.peak_flops[static_cast<size_t>(DType::bf16)] = 4e12;
  hw.memory_bandwidth_bytes_per_s = 100e9;
  hw.compute_efficiency = 0.5;
  hw.memory_efficiency = 0.5;
  hw.min_op_time_s = 1e-6;
  return hw;
}

TEST(ComputeCost, LargeMatmulIsComputeBound) {
  Graph g;
  NodeId a = g.add_placeholder("a", PlaceholderKind::kInput, {{1024, 1024}, DType::f32});
  NodeId b = g.add_placeholder("b", PlaceholderKind::kParam, {{1024, 1024}, DType::f32});
  Expected<NodeId> mm = g.add(OpId::kMm, {a, b});
  ASSERT_TRUE(mm.ok()) << mm.error().message;
  // FLOPs = 2 * 1024^3 = 2,147,483,648 -> / 0.5e12 = 4.295 ms
  // bytes = 3 * 1024^2 * 4 = 12,582,912 -> / 50e9 = 0.252 ms
  double flop_time = 2.0 * 1024 * 1024 * 1024 / 0.5e12;
  EXPECT_DOUBLE_EQ(node_compute_time(g, *mm, round_device()), flop_time);
}

TEST(ComputeCost, MatmulUsesThePeakOfItsDtype) {
  Graph g;
  NodeId a = g.add_placeholder("a", PlaceholderKind::kInput, {{1024, 1024}, DType::bf16});
  NodeId b = g.add_placeholder("b", PlaceholderKind::kParam, {{1024, 1024}, DType::bf16});
  Expected<NodeId> mm = g.add(OpId::kMm, {a, b});
  ASSERT_TRUE(mm.ok()) << mm.error().message;
  // 2 * 1024^3 / (4e12 * 0.5) = 1.074 ms (bytes 6.3 MB / 50e9 = 0.126 ms)
  EXPECT_DOUBLE_EQ(node_compute_time(g, *mm, round_device()), 2.0 * 1024 * 1024 * 1024 / 2e12);
}

TEST(ComputeCost, DtypeWithoutPeakFallsBackToF32Peak) {
  Graph g;
  NodeId a = g.add_placeholder("a", PlaceholderKind::kInput, {{1024, 1024}, DType::f16});
  NodeId b = g.add_placeholder("b", PlaceholderKind::kParam, {{1024, 1024}, DType::f16});
  Expected<NodeId> mm = g.add(OpId::kMm, {a, b});
  ASSERT_TRUE(mm.ok()) << mm.error().message;
  // f16 peak is 0 -> f32 peak: 2 * 1024^3 / 0.5e12
  EXPECT_DOUBLE_EQ(node_compute_time(g, *mm, round_device()), 2.0 * 1024 * 1024 * 1024 / 0.5e12);
}

TEST(ComputeCost, PointwiseAddIsMemoryBound) {
  Graph g;
  NodeId x = g.add_placeholder("x", PlaceholderKind::kInput, {{1024, 1024}, DType::f32});
  NodeId y = g.add_placeholder("y", PlaceholderKind::kInput, {{1024, 1024}, DType::f32});
  Expected<NodeId> add = g.add(OpId::kAddTensor, {x, y});
  ASSERT_TRUE(add.ok()) << add.error().message;
  // FLOPs = 1024^2 -> / 0.5e12 = 2.1 us
  // bytes = 3 * 1024^2 * 4 = 12,582,912 (two reads, one write) -> / 50e9 = 251.7 us
  EXPECT_DOUBLE_EQ(node_compute_time(g, *add, round_device()), 3.0 * 1024 * 1024 * 4 / 50e9);
}

TEST(ComputeCost, EmbeddingIsNotFree) {
  Graph g;
  NodeId table = g.add_placeholder("table", PlaceholderKind::kParam, {{32000, 512}, DType::f32});
  NodeId ids = g.add_placeholder("ids", PlaceholderKind::kInput, {{8, 128}, DType::i64});
  Expected<NodeId> emb = g.add(OpId::kEmbedding, {table, ids});
  ASSERT_TRUE(emb.ok()) << emb.error().message;
  // out = f32[8, 128, 512] = 524,288 elements = 2,097,152 B
  // bytes = ids 8*128*8 = 8,192 + 2 * 2,097,152 (gathered rows read, output written) = 4,202,496
  // -> / 50e9 = 84.05 us; FLOPs 524,288 / 0.5e12 = 1.05 us
  double expected = (8192.0 + 2.0 * 2097152.0) / 50e9;
  double t = node_compute_time(g, *emb, round_device());
  EXPECT_DOUBLE_EQ(t, expected);
  EXPECT_GT(t, round_device().min_op_time_s);
}

TEST(ComputeCost, TinyOpsPayTheFloor) {
  Graph g;
  NodeId x = g.add_placeholder("x", PlaceholderKind::kInput, {{4}, DType::f32});
  Expected<NodeId> relu = g.add(OpId::kRelu, {x});
  ASSERT_TRUE(relu.ok()) << relu.error().message;
  // bytes = 32 -> 0.64 ns, below the 1 us floor
  EXPECT_DOUBLE_EQ(node_compute_time(g, *relu, round_device()), 1e-6);
}

TEST(ComputeCost, PlaceholdersAndViewsCostNothing) {
  Graph g;
  NodeId x = g.add_placeholder("x", PlaceholderKind::kInput, {{64, 32}, DType::f32});
  Expected<NodeId> t = g.add(OpId::kT, {x});
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(node_compute_time(g, x, round_device()), 0);
  EXPECT_EQ(node_compute_time(g, *t, round_device()), 0);
}

}  // namespace
}  // namespace autopar
