#include <gtest/gtest.h>

#include "fixtures.h"
#include "sharding/redistribute.h"

namespace autopar {
namespace {

using testing::mesh_of;

Sharding sh(std::string_view text) { return *parse_sharding(text); }

// 2x4 mesh on the round device (4 devices per node): d1 (4) is intra-node
// (100 GB/s, 1 us per step), d0 (2) is inter-node (10 GB/s, 10 us per step).
DeviceMesh mesh_2x4() { return mesh_of({2, 4}); }
const TensorMeta kT{{8, 16}, DType::f32};  // 512 bytes

RedistPlan plan(const TensorMeta& t, std::string_view from, std::string_view to) {
  return plan_redistribution(t, sh(from), sh(to), mesh_2x4());
}

TEST(Redistribute, ShardToReplicateIsAllGatherOnThatMeshDim) {
  RedistPlan p = plan(kT, "S(0)R", "RR");
  ASSERT_EQ(p.steps.size(), 1u);
  const RedistStep& s = p.steps[0];
  EXPECT_EQ(s.collective, Collective::kAllGather);
  EXPECT_EQ(s.mesh_dim, 0);
  EXPECT_EQ(s.local_shape, (Shape{8, 16}));       // the gathered buffer
  EXPECT_DOUBLE_EQ(s.buffer_bytes, 512);          // 8 * 16 * 4
  EXPECT_DOUBLE_EQ(s.sent_bytes, 256);            // (2-1)/2 * 512
  EXPECT_DOUBLE_EQ(s.time_s, 10e-6 + 256 / 10e9);  // 1 step * 10 us + 256 B / 10 GB/s
  EXPECT_DOUBLE_EQ(p.time_s, s.time_s);
}

TEST(Redistribute, PartialToReplicateIsAllReduce) {
  RedistPlan p = plan(kT, "RP", "RR");
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(p.steps[0].collective, Collective::kAllReduce);
  EXPECT_EQ(p.steps[0].mesh_dim, 1);
  EXPECT_DOUBLE_EQ(p.steps[0].buffer_bytes, 512);
  EXPECT_DOUBLE_EQ(p.steps[0].sent_bytes, 768);                 // 2 * 3/4 * 512
  EXPECT_DOUBLE_EQ(p.time_s, 6 * 1e-6 + 768 / 100e9);           // 2*(4-1) steps
}

TEST(Redistribute, PartialToShardIsReduceScatter) {
  RedistPlan p = plan(kT, "RP", "RS(1)");
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(p.steps[0].collective, Collective::kReduceScatter);
  EXPECT_DOUBLE_EQ(p.steps[0].buffer_bytes, 512);                // the unreduced input
  EXPECT_DOUBLE_EQ(p.steps[0].sent_bytes, 384);                  // 3/4 * 512
  EXPECT_DOUBLE_EQ(p.time_s, 3 * 1e-6 + 384 / 100e9);
}

TEST(Redistribute, ShardToOtherShardIsAllToAll) {
  RedistPlan p = plan(kT, "S(0)R", "S(1)R");
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(p.steps[0].collective, Collective::kAllToAll);
  EXPECT_EQ(p.steps[0].local_shape, (Shape{4, 16}));
  EXPECT_DOUBLE_EQ(p.steps[0].buffer_bytes, 256);                // 4 * 16 * 4
  EXPECT_DOUBLE_EQ(p.time_s, 10e-6 + 128 / 10e9);                // 1/2 * 256 sent
}

TEST(Redistribute, ReplicateToShardIsAFreeLocalSlice) {
  RedistPlan p = plan(kT, "RR", "RS(0)");
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(p.steps[0].collective, Collective::kLocalSlice);
  EXPECT_EQ(p.steps[0].local_shape, (Shape{2, 16}));
  EXPECT_DOUBLE_EQ(p.time_s, 0);
  EXPECT_DOUBLE_EQ(p.sent_bytes, 0);
}

TEST(Redistribute, SameShardingHasNoSteps) {
  EXPECT_TRUE(plan(kT, "S(0)P", "S(0)P").steps.empty());
}

TEST(Redistribute, ShardToPartialGathersThenKeepsLocally) {
  RedistPlan p = plan(kT, "RS(0)", "RP");
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(p.steps[0].collective, Collective::kAllGather);
  EXPECT_EQ(p.steps[1].collective, Collective::kLocalSlice);
  EXPECT_EQ(p.steps[1].to, Placement::partial());
}

TEST(Redistribute, NestedShardIsGatheredInnermostMeshDimFirst) {
  // S(0)S(0): dim 0 (8) is split by d0 (outer, 2) then d1 (inner, 4): local [1, 16].
  RedistPlan p = plan(kT, "S(0)S(0)", "RR");
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(p.steps[0].mesh_dim, 1);
  EXPECT_EQ(p.steps[0].local_shape, (Shape{4, 16}));  // gathered over d1: 4 rows
  EXPECT_DOUBLE_EQ(p.steps[0].buffer_bytes, 256);
  EXPECT_EQ(p.steps[1].mesh_dim, 0);
  EXPECT_DOUBLE_EQ(p.steps[1].buffer_bytes, 512);
  // d1: 3 * 1 us + 3/4 * 256 / 100 GB/s; d0: 10 us + 1/2 * 512 / 10 GB/s
  EXPECT_DOUBLE_EQ(p.time_s, (3e-6 + 192 / 100e9) + (10e-6 + 256 / 10e9));
}

TEST(Redistribute, InnerShardOfTheSameDimIsGatheredBeforeTheOuterMeshDimChanges) {
  // d0 must move S(0) -> S(1) while d1 keeps S(0) inside it: gather d1, all-to-all
  // on d0, then slice d1 again.
  RedistPlan p = plan(kT, "S(0)S(0)", "S(1)S(0)");
  ASSERT_EQ(p.steps.size(), 3u);
  EXPECT_EQ(p.steps[0].collective, Collective::kAllGather);
  EXPECT_EQ(p.steps[0].mesh_dim, 1);
  EXPECT_EQ(p.steps[1].collective, Collective::kAllToAll);
  EXPECT_EQ(p.steps[1].mesh_dim, 0);
  EXPECT_EQ(p.steps[2].collective, Collective::kLocalSlice);
  EXPECT_EQ(p.steps[2].mesh_dim, 1);
  EXPECT_EQ(p.steps[2].local_shape, (Shape{2, 8}));  // 8/4 rows, 16/2 cols
}

TEST(Redistribute, SlicingAnOuterMeshDimUnderAnInnerShardGathersTheInnerFirst) {
  // RS(0) -> S(0)S(0): d1's chunk of 4 is not a sub-chunk of d0's chunk.
  RedistPlan p = plan(kT, "RS(0)", "S(0)S(0)");
  ASSERT_EQ(p.steps.size(), 3u);
  EXPECT_EQ(p.steps[0].collective, Collective::kAllGather);
  EXPECT_EQ(p.steps[1].collective, Collective::kLocalSlice);
  EXPECT_EQ(p.steps[1].mesh_dim, 0);
  EXPECT_EQ(p.steps[2].collective, Collective::kLocalSlice);
  EXPECT_EQ(p.steps[2].local_shape, (Shape{1, 16}));
}

TEST(Redistribute, NeverSplitsADimFinerThanItDividesOnTheWay) {
  // [4, 8] S(0)S(1) -> RS(0): an all-to-all on d1 first would make S(0)S(0),
  // dim 0 (4) split 2 x 4 ways. Gather instead, then slice d1.
  RedistPlan p = plan(TensorMeta{{4, 8}, DType::f32}, "S(0)S(1)", "RS(0)");
  ASSERT_EQ(p.steps.size(), 3u);
  EXPECT_EQ(p.steps[0].collective, Collective::kAllGather);
  EXPECT_EQ(p.steps[0].mesh_dim, 1);
  EXPECT_EQ(p.steps[1].collective, Collective::kAllGather);
  EXPECT_EQ(p.steps[1].mesh_dim, 0);
  EXPECT_EQ(p.steps[2].collective, Collective::kLocalSlice);
  EXPECT_EQ(p.steps[2].local_shape, (Shape{1, 8}));
}

// Every pair of valid shardings of small tensors on 2-D and 3-D meshes: each
// step's state is a valid sharding and the last one is the target.
TEST(Redistribute, EveryIntermediateShardingIsValidAndTheLastIsTheTarget) {
  const std::vector<Placement> options = {Placement::replicate(), Placement::partial(),
                                          Placement::shard(0), Placement::shard(1),
                                          Placement::shard(2)};
  for (const DeviceMesh& mesh : {mesh_of({2, 4}), mesh_of({2, 2, 2})}) {
    const TensorMeta t{{2, 8, 4}, DType::f32};
    std::vector<Sharding> all;
    int64_t count = 1;
    for (int m = 0; m < mesh.ndim(); ++m) count *= static_cast<int64_t>(options.size());
    for (int64_t code = 0; code < count; ++code) {
      Sharding s = Sharding::replicated(mesh.ndim());
      int64_t rest = code;
      for (MeshDim m = 0; m < mesh.ndim(); ++m, rest /= static_cast<int64_t>(options.size())) {
        s[m] = options[static_cast<size_t>(rest % static_cast<int64_t>(options.size()))];
      }
      if (is_valid_sharding(t.shape, s, mesh)) all.push_back(s);
    }
    ASSERT_GT(all.size(), 15u);
    for (const Sharding& from : all) {
      for (const Sharding& to : all) {
        RedistPlan p = plan_redistribution(t, from, to, mesh);
        Sharding state = from;
        for (const RedistStep& step : p.steps) {
          state[step.mesh_dim] = step.to;
          ASSERT_TRUE(is_valid_sharding(t.shape, state, mesh))
              << to_string(from) << " -> " << to_string(to) << ": " << to_string(p, mesh);
        }
        ASSERT_EQ(state, to) << to_string(from) << " -> " << to_string(to) << ": " << to_string(p, mesh);
      }
    }
  }
}

// The seed: llama3-8b RoPE, batch 2, seq 8192, on DP=2 x TP=4. view_as_complex of
// k gives c64[2, 8192, 8, 64] (8 kv heads), of q c64[2, 8192, 32, 64]; both S(0)S(2).
TEST(Redistribute, ComplexTensorIsSentAsItsRealView) {
  DeviceMesh mesh = mesh_of({2, 4}, {"dp", "tp"});
  TensorMeta k{{2, 8192, 8, 64}, DType::c64};
  RedistPlan p = plan_redistribution(k, sh("S(0)S(2)"), sh("S(0)R"), mesh);
  EXPECT_EQ(p.sent_meta, (TensorMeta{{2, 8192, 8, 64, 2}, DType::f32}));
  ASSERT_EQ(p.steps.size(), 1u);
  const RedistStep& s = p.steps[0];
  EXPECT_EQ(s.collective, Collective::kAllGather);
  EXPECT_EQ(s.dtype, DType::f32);
  EXPECT_EQ(s.local_shape, (Shape{1, 8192, 8, 64, 2}));
  // 1 * 8192 * 8 * 64 * 2 = 8,388,608 f32 = 33,554,432 bytes gathered per device
  EXPECT_DOUBLE_EQ(s.buffer_bytes, 33554432);
  EXPECT_DOUBLE_EQ(s.sent_bytes, 25165824);  // 3/4 of it over tp (4)
  EXPECT_DOUBLE_EQ(s.time_s, 3e-6 + 25165824 / 100e9);
}

TEST(Redistribute, ComplexQueryToHeadShardedIsAnAllToAllOfF32) {
  DeviceMesh mesh = mesh_of({2, 4}, {"dp", "tp"});
  TensorMeta q{{2, 8192, 32, 64}, DType::c64};
  // S(0)S(2) -> RS(2): gather dp. Local after: [2, 8192, 8, 64, 2] = 16,777,216 f32
  // = 67,108,864 bytes; sent 1/2 of it over the inter-node dp link.
  RedistPlan gather = plan_redistribution(q, sh("S(0)S(2)"), sh("RS(2)"), mesh);
  ASSERT_EQ(gather.steps.size(), 1u);
  EXPECT_EQ(gather.steps[0].dtype, DType::f32);
  EXPECT_DOUBLE_EQ(gather.steps[0].buffer_bytes, 67108864);
  EXPECT_DOUBLE_EQ(gather.time_s, 10e-6 + 33554432 / 10e9);
  // S(0)S(2) -> S(0)S(1): all-to-all on tp of the local [1, 8192, 8, 64, 2]
  // = 8,388,608 f32 = 33,554,432 bytes.
  RedistPlan a2a = plan_redistribution(q, sh("S(0)S(2)"), sh("S(0)S(1)"), mesh);
  ASSERT_EQ(a2a.steps.size(), 1u);
  EXPECT_EQ(a2a.steps[0].collective, Collective::kAllToAll);
  EXPECT_EQ(a2a.steps[0].dtype, DType::f32);
  EXPECT_DOUBLE_EQ(a2a.steps[0].buffer_bytes, 33554432);
  EXPECT_DOUBLE_EQ(a2a.steps[0].sent_bytes, 25165824);  // 3/4
}

TEST(RedistributionCache, ReturnsThePlansTimeAndReusesIt) {
  DeviceMesh mesh = mesh_2x4();
  RedistributionCache cache(mesh);
  double t = cache.time(kT, sh("S(0)S(0)"), sh("RR"));
  EXPECT_DOUBLE_EQ(t, plan(kT, "S(0)S(0)", "RR").time_s);
  EXPECT_EQ(cache.cached_pairs(), 1u);
  EXPECT_DOUBLE_EQ(cache.time(kT, sh("S(0)S(0)"), sh("RR")), t);
  EXPECT_EQ(cache.cached_pairs(), 1u);
  EXPECT_DOUBLE_EQ(cache.time(kT, sh("RR"), sh("RR")), 0);
}

TEST(Redistribute, StepsPrintWithMeshDimNamesAndDtype) {
  std::string text = to_string(plan(kT, "S(0)R", "RR"), mesh_2x4());
  EXPECT_EQ(text, "all_gather d0 S(0)->R f32[8, 16] B=512 sent=256 t=10us");
}

}  // namespace
}  // namespace autopar
