// Memory rows: budgets that change the choice, infeasible budgets with a
// bound, static bytes, and the time-point reduction.
#include <gtest/gtest.h>

#include "fixtures.h"
#include "planner/brute_force.h"
#include "planner/cbc_solver.h"
#include "planner/memory_bound.h"

namespace autopar::planner {
namespace {

using testing::chain3_with_memory;

Solution solve(const Problem& p, SolverOptions o = {}) {
  Expected<Solution> s = solve_with_cbc(p, o);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return s.ok() ? *s : Solution{};
}

TEST(Memory, NoBudgetTakesTheCheapestChoice) {
  Solution s = solve(chain3_with_memory(kNoBudget));
  EXPECT_DOUBLE_EQ(s.objective, 1 + 1 + 1);
  EXPECT_DOUBLE_EQ(s.peak_bytes, 100 + 100);
}

TEST(Memory, BudgetMakesTheSolverPickACostlierChoice) {
  // 160 bytes: all-0 (cost 3) needs 200 at both points. Mixed choices pay
  // 10 per switch, so all-1 wins: 3+3+3, peak 50+50.
  Solution s = solve(chain3_with_memory(160));
  ASSERT_EQ(s.status, SolveStatus::kOptimal);
  EXPECT_DOUBLE_EQ(s.objective, 3 + 3 + 3);
  EXPECT_DOUBLE_EQ(s.peak_bytes, 50 + 50);
  EXPECT_EQ(s.stats.memory_rows, 2);
}

TEST(Memory, LooseBudgetRowsAreDroppedAsTheyCannotBind) {
  Solution s = solve(chain3_with_memory(200));  // the worst case is 100 + 100
  EXPECT_EQ(s.stats.memory_rows, 0);
  EXPECT_DOUBLE_EQ(s.objective, 3);
}

TEST(Memory, InfeasibleBudgetReportsTheLeastPeakAndItsNodes) {
  Solution s = solve(chain3_with_memory(90));  // least peak: 50 + 50 = 100
  ASSERT_EQ(s.status, SolveStatus::kInfeasible);
  ASSERT_TRUE(s.shortfall.has_value()) << s.message;
  EXPECT_DOUBLE_EQ(s.shortfall->lower_bound_bytes, 100);
  EXPECT_DOUBLE_EQ(s.shortfall->budget, 90);
  EXPECT_GE(s.shortfall->point, 0);
  ASSERT_EQ(s.shortfall->top_nodes.size(), 2u);
  EXPECT_DOUBLE_EQ(s.shortfall->top_nodes[0].min_bytes, 50);
  EXPECT_NE(s.message.find("100 B"), std::string::npos) << s.message;
}

TEST(Memory, ExactBoundSeesCouplingThatPerPointMinimaMiss) {
  // Neighbours must take different strategies, so every point holds one
  // 100-byte and one 50-byte value: least peak 150, though the per-point
  // minima only add to 50 + 50.
  Problem p = chain3_with_memory(120);
  p.edges[0].costs = {kInfiniteCost, 0, 0, kInfiniteCost};
  p.edges[1].costs = {kInfiniteCost, 0, 0, kInfiniteCost};
  Solution s = solve(p);
  ASSERT_TRUE(s.shortfall.has_value()) << s.message;
  EXPECT_DOUBLE_EQ(s.shortfall->lower_bound_bytes, 100 + 50);
  EXPECT_TRUE(s.shortfall->exact);
  SolverOptions cheap;
  cheap.exact_memory_bound = false;
  s = solve(p, cheap);  // 50 + 50 fits the budget: memory cannot be blamed
  EXPECT_EQ(s.status, SolveStatus::kInfeasible);
  EXPECT_FALSE(s.shortfall.has_value()) << s.message;
}

TEST(Memory, CheapBoundIsTheLargestSumOfMinimaWhenExactIsOff) {
  SolverOptions o;
  o.exact_memory_bound = false;
  Solution s = solve(chain3_with_memory(90), o);
  ASSERT_TRUE(s.shortfall.has_value()) << s.message;
  EXPECT_DOUBLE_EQ(s.shortfall->lower_bound_bytes, 50 + 50);
  EXPECT_FALSE(s.shortfall->exact);
}

TEST(Memory, StaticBytesCountAtEveryPoint) {
  // A parameter w: replicated 1000 bytes (cost 0) or sharded 125 (cost 4).
  // Budget 1100: w replicated leaves 100 for activations: a,b,c all at 1
  // (50+50): 0 + 3+3+3 = 9; w sharded leaves 975: all 0: 4 + 1+1+1 = 7.
  Problem p = chain3_with_memory(1100);
  NodeIdx w = p.add_node("w", {0, 4});
  p.nodes[static_cast<size_t>(w)].static_bytes = {1000, 125};
  Solution s = solve(p);
  EXPECT_DOUBLE_EQ(s.objective, 4 + 1 + 1 + 1);
  EXPECT_DOUBLE_EQ(s.peak_bytes, 125 + 100 + 100);
}

TEST(Memory, StaticBudgetAloneLimitsResidentBytes) {
  Problem p;
  NodeIdx w = p.add_node("w", {0, 4});
  p.nodes[static_cast<size_t>(w)].static_bytes = {1000, 125};
  p.static_budget = 500;
  Solution s = solve(p);
  EXPECT_DOUBLE_EQ(s.objective, 4);  // replicated would need 1000 > 500
  p.static_budget = 100;
  s = solve(p);
  ASSERT_TRUE(s.shortfall.has_value()) << s.message;
  EXPECT_TRUE(s.shortfall->static_row);
  EXPECT_DOUBLE_EQ(s.shortfall->lower_bound_bytes, 125);
}

TEST(Memory, TimePointReductionKeepsOnlyMaximalLiveSets) {
  Problem p = chain3_with_memory(160);
  p.live_points = {{0}, {0, 1}, {1}, {1, 2}, {2}, {2}};
  std::vector<TimeIdx> kept = reduce_time_points(p);
  EXPECT_EQ(kept, (std::vector<TimeIdx>{1, 3}));
  EXPECT_EQ(p.live_points, (std::vector<std::vector<NodeIdx>>{{0, 1}, {1, 2}}));
}

TEST(Memory, TimePointReductionKeepsTheOptimum) {
  Problem full = chain3_with_memory(160);
  full.live_points = {{0}, {1, 0}, {1}, {2, 1}, {2}};
  Problem reduced = full;
  reduce_time_points(reduced);
  ASSERT_EQ(reduced.live_points.size(), 2u);
  EXPECT_DOUBLE_EQ(solve(reduced).objective, solve(full).objective);
  EXPECT_DOUBLE_EQ(solve(full).objective, 3 + 3 + 3);
}

TEST(Memory, FormatsBytesWithBinaryUnits) {
  EXPECT_EQ(format_bytes(100), "100 B");
  EXPECT_EQ(format_bytes(1.5 * 1024 * 1024 * 1024), "1.50 GiB");
}

}  // namespace
}  // namespace autopar::planner
