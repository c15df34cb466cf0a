// Runs under mpirun -np 4 (a 2x2 mesh): every redistribution between a set of
// shardings of a small tensor gives each rank exactly the shard of the target
// sharding that local_shard cuts from the full tensor, and the tallied bytes
// are the plan's B bytes on the device at coordinate 0 (at most that
// elsewhere: uneven shards are costed at their padded pieces).
#include <gtest/gtest.h>
#include <algorithm>
#include <mpi.h>

#include <ATen/ATen.h>

#include "cost/hardware.h"
#include "runtime/redistribute_exec.h"
#include "runtime/shard_tensor.h"
#include "runtime/spmd_mesh.h"

namespace autopar {
namespace {

const SpmdMesh& mesh_2x2() {
  static SpmdMesh* mesh = [] {
    HardwareProfile hw = *load_hardware("cpu");
    DeviceMesh m = *make_mesh({2, 2}, hw);
    return new SpmdMesh(*SpmdMesh::create(m, Communicator::world()));
  }();
  return *mesh;
}

// Checks one transition on a full tensor; the target's shard must match.
void expect_redistributes(const at::Tensor& full, const std::string& from_text,
                          const std::string& to_text) {
  const SpmdMesh& mesh = mesh_2x2();
  Sharding from = *parse_sharding(from_text, 2);
  Sharding to = *parse_sharding(to_text, 2);
  TensorMeta meta{Shape(full.sizes().begin(), full.sizes().end()),
                  full.is_complex() ? DType::c64 : DType::f32};
  at::Tensor local = *local_shard(full, from, mesh.mesh(), mesh.coordinate());
  RedistPlan plan = plan_redistribution(meta, from, to, mesh.mesh());
  Tracer tracer;
  Expected<at::Tensor> got = execute_redistribution(local, plan, mesh, &tracer, "x");
  ASSERT_TRUE(got) << got.error().message;
  SCOPED_TRACE(from_text + " -> " + to_text + ": " + to_string(plan, mesh.mesh()));
  if (to.has_partial()) {
    // Partial terms differ by rank; their sum must be the tensor.
    Expected<at::Tensor> whole = gather_full(*got, meta, to, mesh);
    ASSERT_TRUE(whole) << whole.error().message;
    EXPECT_TRUE(at::allclose(*whole, full));
  } else {
    at::Tensor want = *local_shard(full, to, mesh.mesh(), mesh.coordinate());
    ASSERT_EQ(got->sizes(), want.sizes());
    EXPECT_TRUE(at::equal(*got, want));
  }
  double planned = 0, measured = 0;
  for (const RedistStep& s : plan.steps) planned += s.buffer_bytes;
  for (const auto& [key, t] : tracer.tallies()) measured += t.bytes;
  // The plan counts padded pieces, the largest any device holds: the device
  // at coordinate 0 holds them; a smaller uneven piece elsewhere moves less.
  const MeshCoord& me = mesh.coordinate();
  if (std::all_of(me.begin(), me.end(), [](int64_t c) { return c == 0; })) {
    EXPECT_EQ(measured, planned);
  } else {
    EXPECT_LE(measured, planned);
  }
}

const std::vector<std::string> kShardings = {"RR",      "S(0)R",    "RS(0)",   "RS(1)",
                                             "S(0)S(1)", "S(1)S(0)", "S(0)S(0)", "S(1)S(1)",
                                             "PR",      "RP",       "PP",      "S(0)P",
                                             "P(avg)R", "RP(avg)",  "S(1)P(avg)"};

TEST(SpmdRedistribute, EveryTransitionOnA2x2MeshGivesTheTargetShard) {
  // 4 x 8 so every dim splits over both mesh dims (2 * 2 divides 4 and 8).
  at::Tensor full = at::arange(32, at::kFloat).reshape({4, 8});
  for (const std::string& from : kShardings) {
    for (const std::string& to : kShardings) expect_redistributes(full, from, to);
  }
}

TEST(SpmdRedistribute, UnevenShardsMoveAsPaddedPiecesAndArriveAsTheTargetsTruePieces) {
  // 3 x 5 on 2x2: dim 0 splits 2 + 1, dim 1 splits 3 + 2 (torch.chunk's
  // pieces); neither splits over both mesh dims, which uneven dims may not.
  at::Tensor full = at::arange(15, at::kFloat).reshape({3, 5});
  const Shape shape{3, 5};
  int pairs = 0;
  for (const std::string& from : kShardings) {
    if (!is_valid_sharding(shape, *parse_sharding(from, 2), mesh_2x2().mesh())) continue;
    for (const std::string& to : kShardings) {
      if (!is_valid_sharding(shape, *parse_sharding(to, 2), mesh_2x2().mesh())) continue;
      expect_redistributes(full, from, to);
      ++pairs;
    }
  }
  EXPECT_EQ(pairs, 13 * 13);  // all but S(0)S(0) (3 into 4) and S(1)S(1) (uneven over two)
  at::Tensor complex = at::view_as_complex(at::arange(30, at::kFloat).reshape({3, 5, 2}));
  expect_redistributes(complex, "S(0)S(1)", "S(1)S(0)");
}

TEST(SpmdRedistribute, ComplexTensorsMoveAsTheirRealView) {
  at::Tensor full = at::view_as_complex(at::arange(64, at::kFloat).reshape({4, 8, 2}));
  expect_redistributes(full, "S(0)R", "RR");
  expect_redistributes(full, "S(0)S(1)", "S(1)S(0)");
  expect_redistributes(full, "RR", "RS(1)");
}

}  // namespace
}  // namespace autopar

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // Only rank 0 prints; every rank reports failure through its exit code.
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int rc = RUN_ALL_TESTS();
  MPI_Finalize();
  return rc;
}
