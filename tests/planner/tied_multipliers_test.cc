// The untied problem's dual ascent started from the tied problem's
// multipliers (tied_multipliers.h), as the layer-sharing proof runs it: the
// start must give a valid bound, lose nothing where copies see the same
// edges, and never hide an untied plan cheaper than the tied one.
#include <random>

#include <gtest/gtest.h>

#include "planner/brute_force.h"
#include "planner/cbc_solver.h"
#include "planner/dual_bound.h"
#include "planner/presolve.h"
#include "planner/tied_multipliers.h"

namespace autopar::planner {
namespace {

constexpr int kStrategies = 3;

std::vector<double> random_costs(std::mt19937& rng, size_t n) {
  std::uniform_int_distribution<int> d(0, 9);
  std::vector<double> out(n);
  for (double& c : out) c = d(rng);
  return out;
}

// `copies` copies of a block x -> y, the same costs in every copy. Chained,
// an input node feeds x of the first copy, y of each copy feeds x of the
// next, and y of the last feeds an output node; unchained, the input feeds
// every x and every y feeds the output. tie: every copy follows the first,
// as shared layers do.
Problem blocks(uint32_t seed, int copies, bool chained, bool tie) {
  std::mt19937 rng(seed);
  const auto square = static_cast<size_t>(kStrategies * kStrategies);
  const std::vector<double> x_cost = random_costs(rng, kStrategies), y_cost = random_costs(rng, kStrategies);
  const std::vector<double> inside = random_costs(rng, square), between = random_costs(rng, square);
  const std::vector<double> into = random_costs(rng, square), out_of = random_costs(rng, square);
  Problem p;
  const NodeIdx in = p.add_node("in", random_costs(rng, kStrategies));
  std::vector<NodeIdx> x, y;
  for (int c = 0; c < copies; ++c) {
    x.push_back(p.add_node("x", x_cost));
    y.push_back(p.add_node("y", y_cost));
    p.add_edge(x.back(), y.back(), inside);
    if (!chained || c == 0) p.add_edge(in, x.back(), into);
    if (chained && c > 0) p.add_edge(y[static_cast<size_t>(c - 1)], x.back(), between);
    if (tie && c > 0) p.add_equal(x.front(), x.back()), p.add_equal(y.front(), y.back());
  }
  const NodeIdx out = p.add_node("out", random_costs(rng, kStrategies));
  for (int c = chained ? copies - 1 : 0; c < copies; ++c) p.add_edge(y[static_cast<size_t>(c)], out, out_of);
  return p;
}

EdgeMultipliers spread(const Problem& tied, const ReducedProblem& untied) {
  const ReducedProblem t = presolve(tied);
  return spread_tied_multipliers(t, pairwise_dual_bound(t).multipliers, untied);
}

TEST(TiedMultipliers, StartedBoundNeverExceedsTheUntiedOptimum) {
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    const Problem untied = blocks(seed, 3, true, false);
    const ReducedProblem r = presolve(untied);
    const EdgeMultipliers start = spread(blocks(seed, 3, true, true), r);
    Expected<Solution> exact = solve_brute_force(untied);
    ASSERT_TRUE(exact) << exact.error().message;
    for (int32_t sweeps : {0, 1, 5}) {
      EXPECT_LE(pairwise_dual_bound(r, sweeps, 1e-9, &start).bound, exact->objective + 1e-9)
          << "seed " << seed << ", " << sweeps << " sweeps";
    }
  }
}

TEST(TiedMultipliers, CopiesThatSeeTheSameEdgesLoseNothing) {
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    const Problem tied = blocks(seed, 4, false, true);
    const ReducedProblem t = presolve(tied);
    const DualBound tied_bound = pairwise_dual_bound(t);
    const ReducedProblem r = presolve(blocks(seed, 4, false, false));
    const EdgeMultipliers start = spread_tied_multipliers(t, tied_bound.multipliers, r);
    // No sweep: the spread multipliers alone give the tied bound back.
    EXPECT_NEAR(pairwise_dual_bound(r, 0, 1e-9, &start).bound, tied_bound.bound, 1e-9) << "seed " << seed;
  }
}

TEST(TiedMultipliers, WarmStartedSolveFindsTheCheaperUntiedPlan) {
  int cheaper_untied = 0;
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    const Problem tied = blocks(seed, 3, true, true);
    const Problem untied = blocks(seed, 3, true, false);
    Expected<Solution> tied_answer = solve_with_cbc(tied);
    Expected<Solution> exact = solve_brute_force(untied);
    ASSERT_TRUE(tied_answer && exact);
    SolverOptions o;
    o.target_pruning_min_pairs = 0;  // prune even these small problems, as the proof does big ones
    o.dual_start = [&tied](const ReducedProblem& r) { return spread(tied, r); };
    Expected<Solution> warm = solve_with_cbc(untied, o, tied_answer->assignment);
    ASSERT_TRUE(warm) << warm.error().message;
    EXPECT_EQ(warm->status, SolveStatus::kOptimal);
    EXPECT_NEAR(warm->objective, exact->objective, 1e-9) << "seed " << seed;
    if (tied_answer->objective > exact->objective + 1e-9) ++cheaper_untied;
  }
  EXPECT_GT(cheaper_untied, 0) << "no seed where tying costs something: the test proves nothing";
}

}  // namespace
}  // namespace autopar::planner
