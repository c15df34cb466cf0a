// The solver's limits decide where a hard solve stops, and the plan says which
// one did: the work limits (nodes, LP iterations), which repeat on any machine,
// or the wall clock, which does not.
#include <gtest/gtest.h>

#include <string>

#include "planner/plan_output.h"
#include "plan_fixtures.h"

namespace autopar {
namespace {

using planner::StopReason;
using testing::model;
using testing::options;
using testing::plan_or_die;

// mlp on 2x4 with 0.25 MB per device: the memory rows make the LP fractional.
// Branching on the whole model, CBC proves the optimum after a few nodes (4
// here); reduced-cost fixing (the default) proves it without branching, so the
// limit tests turn it off to have a search to stop.
PlanOptions tight_mlp_options() {
  PlanOptions o = options({2, 4});
  o.memory_budget_bytes = 0.00025e9;
  o.solver.reduced_cost_fixing = false;
  return o;
}

TEST(PlanStopReason, DefaultLimitsLetTheTightMlpCaseFinishOptimal) {
  Graph g = model("mlp", 0, 0, 0);
  Plan p = plan_or_die(g, tight_mlp_options());
  EXPECT_EQ(p.solver.status, "optimal");
  EXPECT_EQ(p.solver.stopped_by, StopReason::kCompleted);
  EXPECT_GT(p.solver.stats.search_nodes, 1);
}

TEST(PlanStopReason, ReducedCostFixingProvesTheTightMlpOptimumWithoutBranching) {
  Graph g = model("mlp", 0, 0, 0);
  PlanOptions o = tight_mlp_options();
  Plan whole = plan_or_die(g, o);
  o.solver.reduced_cost_fixing = true;
  Plan fixed = plan_or_die(g, o);
  EXPECT_EQ(fixed.solver.status, "optimal");
  EXPECT_EQ(fixed.solver.stats.search_nodes, 0);
  EXPECT_GT(fixed.solver.stats.relaxation_incumbents, 0);
  EXPECT_NEAR(fixed.solver.objective, whole.solver.objective, 1e-9 * whole.solver.objective);
}

TEST(PlanStopReason, NodeLimitStopsTheSearchAndThePlanSaysSo) {
  Graph g = model("mlp", 0, 0, 0);
  PlanOptions o = tight_mlp_options();
  o.solver.max_nodes = 1;
  Plan p = plan_or_die(g, o);
  EXPECT_EQ(p.solver.status, "feasible (node limit)");
  EXPECT_EQ(p.solver.stopped_by, StopReason::kNodeLimit);
  EXPECT_EQ(p.solver.stats.search_nodes, 1);
  EXPECT_GT(p.solver.gap, 0);
  std::string json = plan_to_json(g, p, /*timings=*/false);
  EXPECT_NE(json.find("\"stopped_by\": \"node_limit\""), std::string::npos);
  EXPECT_NE(json.find("\"search_nodes\": 1,"), std::string::npos);
  std::string summary = plan_to_summary(g, p);
  EXPECT_NE(summary.find("search         stopped by the node limit after 1 branch-and-bound nodes"),
            std::string::npos) << summary;
  EXPECT_EQ(summary.find("WARNING"), std::string::npos) << summary;
}

TEST(PlanStopReason, LpIterationLimitStopsBeforeCbcAndNamesTheOption) {
  Graph g = model("mlp", 0, 0, 0);
  PlanOptions o = tight_mlp_options();
  o.solver.max_lp_iterations = 1;
  Expected<Plan> p = make_plan(g, o);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("no solution (iteration limit)"), std::string::npos)
      << p.error().message;
  EXPECT_NE(p.error().message.find("raise --max-lp-iterations"), std::string::npos)
      << p.error().message;
}

// The clock cannot be made to fire repeatably here, so the report of a plan
// it stopped is checked on a plan marked so.
TEST(PlanStopReason, TimeLimitedPlanWarnsThatItMayDifferBetweenRuns) {
  Graph g = model("mlp", 0, 0, 0);
  Plan p = plan_or_die(g, options({2}));
  p.solver.stopped_by = StopReason::kTimeLimit;
  p.solver.time_limit_s = 600;
  std::string summary = plan_to_summary(g, p);
  EXPECT_NE(summary.find("WARNING        the 600 s wall-clock limit stopped the solver, so this "
                         "plan depends on the machine's load and may differ between runs"),
            std::string::npos) << summary;
  EXPECT_NE(plan_to_json(g, p, /*timings=*/false).find("\"stopped_by\": \"time_limit\""),
            std::string::npos);
}

// Sweeps share the node budget: with none, the seed (root node only) is all
// they do, and the result says the node limit, not a local optimum.
TEST(PlanStopReason, SweepsStopWhenTheNodeBudgetIsSpent) {
  Graph g = model("mlp", 0, 0, 0);
  PlanOptions o = options({2, 2, 2});
  o.solver.max_nodes = 0;
  o.solver.bound_sweeps = false;  // the bound would prove the seed optimal here
  Plan p = plan_or_die(g, o);
  EXPECT_EQ(p.solver.method, "sweeps");
  EXPECT_EQ(p.solver.stopped_by, StopReason::kNodeLimit);
  EXPECT_EQ(p.solver.status, "feasible (node limit)");
  ASSERT_EQ(p.solver.sweep_steps.size(), 1u);
  EXPECT_EQ(p.solver.sweep_steps[0].neighbourhood.rfind("seed", 0), 0u);
}

}  // namespace
}  // namespace autopar
