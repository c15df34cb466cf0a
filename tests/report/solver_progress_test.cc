// The solver reports progress through SolverOptions::progress (the CLI draws
// it on a terminal; here a recording callback stands in).
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "planner/cbc_solver.h"

namespace autopar::planner {
namespace {

// Five nodes, three strategies, switching costs 2 per edge (as in
// tests/planner): optimum 13 + 21 + 2 + 32 + 41 + 50 = 159.
Problem five_node_chain() {
  Problem p;
  p.add_node("n1", {13, 15, 20});
  p.add_node("n2", {21, 22, 30});
  p.add_node("n3", {35, 32, 33});
  p.add_node("n4", {42, 41, 40});
  p.add_node("n5", {51, 50, 52});
  std::vector<double> two = {0, 2, 2, 2, 0, 2, 2, 2, 0};
  for (NodeIdx v = 0; v < 4; ++v) p.add_edge(v, v + 1, two);
  return p;
}

struct Recorded {
  std::string stage;
  SolveProgress progress;
};

std::vector<Recorded> solve_recording(bool lp_first, Solution& solution) {
  std::vector<Recorded> calls;
  SolverOptions o;
  o.lp_first = lp_first;
  o.progress = [&calls](const SolveProgress& p) { calls.push_back({p.stage, p}); };
  Expected<Solution> s = solve_with_cbc(five_node_chain(), o);
  EXPECT_TRUE(s.ok());
  if (s.ok()) solution = *s;
  return calls;
}

TEST(SolverProgress, BranchAndBoundEndsWithADoneReportOfTheOptimum) {
  Solution s;
  std::vector<Recorded> calls = solve_recording(/*lp_first=*/false, s);
  ASSERT_EQ(s.status, SolveStatus::kOptimal);
  ASSERT_FALSE(calls.empty());
  const Recorded& last = calls.back();
  EXPECT_EQ(last.stage, "done");
  ASSERT_TRUE(last.progress.objective.has_value());
  EXPECT_DOUBLE_EQ(*last.progress.objective, 159);
  ASSERT_TRUE(last.progress.gap.has_value());
  EXPECT_NEAR(*last.progress.gap, 0, 1e-9);
  for (size_t i = 1; i < calls.size(); ++i) {
    EXPECT_GE(calls[i].progress.elapsed_s, calls[i - 1].progress.elapsed_s);
  }
}

TEST(SolverProgress, LpFirstReportsTheRelaxationStageThenDone) {
  Solution s;
  std::vector<Recorded> calls = solve_recording(/*lp_first=*/true, s);
  ASSERT_GE(calls.size(), 2u);
  EXPECT_EQ(calls.front().stage, "lp relaxation");
  EXPECT_FALSE(calls.front().progress.objective.has_value());
  EXPECT_EQ(calls.back().stage, "done");
  EXPECT_DOUBLE_EQ(*calls.back().progress.objective, s.objective);
}

TEST(SolverProgress, NoCallbackMeansTheSameSolution) {
  Expected<Solution> quiet = solve_with_cbc(five_node_chain(), SolverOptions{});
  Solution reported;
  solve_recording(/*lp_first=*/false, reported);
  ASSERT_TRUE(quiet.ok());
  EXPECT_EQ(quiet->assignment, reported.assignment);
  EXPECT_DOUBLE_EQ(quiet->objective, reported.objective);
}

}  // namespace
}  // namespace autopar::planner
