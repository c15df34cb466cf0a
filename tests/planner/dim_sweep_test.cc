// Mesh-dim sweeps (dim_sweep.h) on synthetic 3-D problems: each node's
// strategies are every combination of two placements per mesh dim, with
// random costs, against brute force.
#include <cmath>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "planner/brute_force.h"
#include "planner/dim_sweep.h"

namespace autopar::planner {
namespace {

constexpr int32_t kDims = 3;
constexpr int32_t kStrategies = 8;  // 2 placements on each of 3 dims

struct Synthetic {
  Problem problem;
  MeshDimClasses classes;
};

Synthetic synthetic(uint32_t seed, int nodes) {
  std::mt19937 rng(seed);
  auto cost = [&](int hi) { return static_cast<double>(std::uniform_int_distribution<int>(0, hi)(rng)); };
  Synthetic s;
  s.classes.mesh_dims = kDims;
  for (int v = 0; v < nodes; ++v) {
    std::vector<double> costs(kStrategies);
    for (double& c : costs) c = cost(30);
    s.problem.add_node("n" + std::to_string(v), costs);
    std::vector<int32_t> ids;
    for (int32_t k = 0; k < kStrategies; ++k)
      for (int32_t d = 0; d < kDims; ++d) ids.push_back((k >> d) & 1);
    s.classes.of_node.push_back(ids);
  }
  auto edge = [&](int a, int b) {
    std::vector<double> costs(kStrategies * kStrategies);
    for (double& c : costs) c = cost(25);
    s.problem.add_edge(a, b, costs);
  };
  for (int v = 1; v < nodes; ++v) edge(std::uniform_int_distribution<int>(0, v - 1)(rng), v);
  edge(0, nodes - 1);  // a cycle
  return s;
}

// Bound only: best_bound <= the optimum <= the answer; with the proof, the
// answer is the optimum and says so. Some seeds must leave the sweeps at a
// local optimum above the optimum, so the proof is what finds it.
TEST(MeshDimSweeps, TheDualBoundHoldsAndTheProofFindsTheOptimum) {
  int improved_by_proof = 0, bounded = 0;
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    Synthetic s = synthetic(seed, 5);
    Expected<Solution> exact = solve_brute_force(s.problem);
    ASSERT_TRUE(exact.ok());
    ASSERT_EQ(exact->status, SolveStatus::kOptimal);
    SolverOptions bound_only;
    Expected<SweepSolution> a = solve_by_mesh_dim_sweeps(s.problem, s.classes, bound_only);
    ASSERT_TRUE(a.ok()) << a.error().message;
    ASSERT_TRUE(a->bound) << "seed " << seed;
    EXPECT_LE(a->solution.best_bound, exact->objective + 1e-9) << "seed " << seed;
    EXPECT_GE(a->solution.objective, exact->objective - 1e-9) << "seed " << seed;
    EXPECT_FALSE(a->proof) << "seed " << seed;
    bounded += a->solution.gap >= 0 ? 1 : 0;
    SolverOptions prove;
    prove.prove_sweeps = true;
    Expected<SweepSolution> b = solve_by_mesh_dim_sweeps(s.problem, s.classes, prove);
    ASSERT_TRUE(b.ok()) << b.error().message;
    EXPECT_NEAR(b->solution.objective, exact->objective, 1e-9) << "seed " << seed;
    EXPECT_EQ(b->solution.status, SolveStatus::kOptimal) << "seed " << seed << ": " << b->solution.message;
    EXPECT_NEAR(evaluate(s.problem, b->solution.assignment).cost, b->solution.objective, 1e-9);
    if (a->solution.objective > exact->objective + 1e-9) ++improved_by_proof;
  }
  EXPECT_EQ(bounded, 40);
  EXPECT_GT(improved_by_proof, 0) << "the sweeps found every optimum: the proof's search is not exercised";
}

// Without the bound, the answer is a local optimum with no bound (NaN).
TEST(MeshDimSweeps, WithoutTheBoundTheGapIsUnknown) {
  Synthetic s = synthetic(7, 5);
  SolverOptions o;
  o.bound_sweeps = false;
  Expected<SweepSolution> a = solve_by_mesh_dim_sweeps(s.problem, s.classes, o);
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(a->bound);
  EXPECT_TRUE(std::isnan(a->solution.gap));
  EXPECT_NE(a->solution.status, SolveStatus::kOptimal);
}

// When no seed fits the budget and even every node at its least bytes
// exceeds it, the sweeps say so from that bound (never exact) without
// solving the whole problem.
TEST(MeshDimSweeps, ABudgetBelowEveryNodesLeastBytesIsInfeasibleWithItsShortfall) {
  Synthetic s = synthetic(3, 5);
  for (ProblemNode& n : s.problem.nodes) n.static_bytes.assign(kStrategies, 100.0);
  s.problem.nodes[2].static_bytes[5] = 40;  // node 2's least
  s.problem.memory_budget = 439;            // the least is 4 * 100 + 40 = 440
  Expected<SweepSolution> a = solve_by_mesh_dim_sweeps(s.problem, s.classes, SolverOptions{});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->solution.status, SolveStatus::kInfeasible);
  ASSERT_TRUE(a->solution.shortfall);
  EXPECT_EQ(a->solution.shortfall->lower_bound_bytes, 440);
  EXPECT_FALSE(a->solution.shortfall->exact);
  EXPECT_NE(a->solution.message.find("needs at least 440 B per device"), std::string::npos)
      << a->solution.message;
  s.problem.memory_budget = 440;  // fits exactly: node 2 must take strategy 5
  Expected<SweepSolution> b = solve_by_mesh_dim_sweeps(s.problem, s.classes, SolverOptions{});
  ASSERT_TRUE(b.ok());
  ASSERT_FALSE(b->solution.assignment.empty()) << b->solution.message;
  EXPECT_EQ(b->solution.assignment[2], 5);
}

}  // namespace
}  // namespace autopar::planner
