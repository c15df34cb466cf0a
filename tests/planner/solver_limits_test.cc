// The work limits stop CBC at the same point on any machine, and the solution
// says which limit stopped it.
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "planner/cbc_solver.h"

namespace autopar::planner {
namespace {

// A strongly correlated knapsack as a memory budget: each of 20 nodes either
// holds w bytes for free or drops them for w + 100 cost; the budget is half
// the bytes. Its LP bound is loose, and CBC proves the optimum only after
// ~100 branch-and-bound nodes.
Problem knapsack() {
  constexpr int kNodes = 20;
  Problem p;
  std::mt19937 rng(7);
  std::vector<NodeIdx> all;
  double total = 0;
  for (int i = 0; i < kNodes; ++i) {
    double w = std::uniform_int_distribution<int>(100, 1000)(rng);
    NodeIdx v = p.add_node("n" + std::to_string(i), {0, w + 100});
    p.nodes[static_cast<size_t>(v)].bytes = {w, 0};
    all.push_back(v);
    total += w;
  }
  p.live_points = {all};
  p.memory_budget = total / 2 + 0.5;
  return p;
}

Solution solve(const Problem& p, int32_t max_nodes, int threads = 1) {
  SolverOptions o;
  o.max_nodes = max_nodes;
  o.threads = threads;
  Expected<Solution> s = solve_with_cbc(p, o);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return s.ok() ? *s : Solution{};
}

TEST(CbcWorkLimits, KnapsackNeedsManyNodesToProveItsOptimum) {
  Solution s = solve(knapsack(), kDefaultMaxNodes);
  EXPECT_EQ(s.status, SolveStatus::kOptimal);
  EXPECT_EQ(s.stopped_by, StopReason::kCompleted);
  EXPECT_GT(s.stats.search_nodes, 20);
}

TEST(CbcWorkLimits, NodeLimitStopsCbcAndIsReportedAsTheNodeLimit) {
  Solution s = solve(knapsack(), 10);
  EXPECT_EQ(s.status, SolveStatus::kFeasible);
  EXPECT_EQ(s.stopped_by, StopReason::kNodeLimit);
  EXPECT_EQ(s.stats.search_nodes, 10);
  EXPECT_EQ(status_text(s.status, s.stopped_by), "feasible (node limit)");
  EXPECT_FALSE(s.assignment.empty());
}

TEST(CbcWorkLimits, TheSameNodeLimitedSolveGivesTheSameAnswer) {
  Solution a = solve(knapsack(), 10);
  Solution b = solve(knapsack(), 10);
  EXPECT_EQ(a.assignment, b.assignment);
  EXPECT_EQ(a.objective, b.objective);  // bit for bit
  EXPECT_EQ(a.best_bound, b.best_bound);
}

// CBC's deterministic parallel mode: the threads' timing does not change the search.
TEST(CbcWorkLimits, TwoThreadsRepeatTheSameNodeLimitedSearch) {
  Solution a = solve(knapsack(), 10, /*threads=*/2);
  Solution b = solve(knapsack(), 10, /*threads=*/2);
  EXPECT_EQ(a.stopped_by, StopReason::kNodeLimit);
  EXPECT_EQ(a.assignment, b.assignment);
  EXPECT_EQ(a.objective, b.objective);
  EXPECT_EQ(a.best_bound, b.best_bound);
}

TEST(CbcWorkLimits, StatusTextNamesTheLimitThatStoppedTheSearch) {
  EXPECT_EQ(status_text(SolveStatus::kOptimal, StopReason::kCompleted), "optimal");
  EXPECT_EQ(status_text(SolveStatus::kFeasible, StopReason::kTimeLimit), "feasible (time limit)");
  EXPECT_EQ(status_text(SolveStatus::kNoSolution, StopReason::kIterationLimit),
            "no solution (iteration limit)");
  EXPECT_STREQ(stop_reason_name(StopReason::kNodeLimit), "node_limit");
}

TEST(CbcWorkLimits, OnlyTheClockWarnsThatThePlanMayDiffer) {
  EXPECT_EQ(time_limit_warning(StopReason::kNodeLimit, 600), "");
  EXPECT_NE(time_limit_warning(StopReason::kTimeLimit, 600).find("may differ between runs"),
            std::string::npos);
}

}  // namespace
}  // namespace autopar::planner
