// The planner's memory rows against the one memory model (step_memory.h) on
// whole models: under any choice of strategies, the rows' peak is at least
// what a device holds at every position, comm buffers aside (make_plan checks
// those after the solve). A view of a redistributed operand keeps the copy,
// which the rows see through pair holdings on the view's input edge.
#include <random>

#include <gtest/gtest.h>

#include "plan_fixtures.h"
#include "planner/problem_builder.h"

namespace autopar {
namespace {

struct RowsAgainstStep {
  double rows_peak = 0;   // planner::evaluate on the built problem
  double step_held = 0;   // step_memory's largest position, comm buffers aside
  int32_t view_copies = 0;  // redistributions a view keeps
};

RowsAgainstStep compare(const Graph& g, const Plan& base, const planner::Problem& problem,
                        std::vector<StrategyIdx> choice) {
  Plan plan = base;
  plan.choice = std::move(choice);
  evaluate_plan(g, plan);
  MemoryTimeline m = plan_memory(g, plan);
  RowsAgainstStep out;
  for (const MemoryParts& parts : m.positions)
    out.step_held = std::max(out.step_held, parts.total() - parts.comm_buffers);
  out.rows_peak = planner::evaluate(problem, plan.choice).peak_bytes;
  for (const PlannedRedistribution& r : plan.redistributions)
    if (r.input == 0 && aliases_input(g.node(r.consumer)) && g.node(r.consumer).op != OpId::kGetItem)
      ++out.view_copies;
  return out;
}

void expect_rows_cover_the_step(const std::string& name, std::vector<int64_t> mesh_shape) {
  Graph g = testing::model(name, 2, 0, 0);
  HardwareProfile hw = *load_hardware("h100");
  Plan base;
  base.mesh = *make_mesh(mesh_shape, hw, {});
  base.strategies = *build_strategy_graph(g, base.mesh, hw);
  base.summary.memory_budget = 1e18;
  std::vector<NodeId> rep(static_cast<size_t>(g.size()));
  for (NodeId v = 0; v < g.size(); ++v) rep[static_cast<size_t>(v)] = v;
  std::vector<std::vector<StrategyIdx>> allowed(static_cast<size_t>(g.size()));
  RedistributionCache cache(base.mesh);
  ProblemBuildOptions build;
  build.memory_budget = 1e18;  // finite: the time points are built
  BuiltProblem built = build_problem(g, base.strategies, rep, allowed, cache, build);
  std::mt19937 rng(7);
  int32_t copies = 0;
  for (int trial = 0; trial < 12; ++trial) {
    std::vector<StrategyIdx> choice(static_cast<size_t>(g.size()));
    for (NodeId v = 0; v < g.size(); ++v) {
      auto count = base.strategies.nodes[static_cast<size_t>(v)].size();
      // Trial 0 replicates everything (strategy 0), the rest choose at random.
      choice[static_cast<size_t>(v)] =
          trial == 0 ? 0 : std::uniform_int_distribution<StrategyIdx>(0, count - 1)(rng);
    }
    RowsAgainstStep r = compare(g, base, built.problem, choice);
    EXPECT_GE(r.rows_peak * (1 + 1e-9), r.step_held)
        << name << " trial " << trial << ": the rows count " << r.rows_peak << " B, the step holds "
        << r.step_held << " B with " << r.view_copies << " views keeping copies";
    copies += r.view_copies;
  }
  EXPECT_GT(copies, 0) << "random choices should make some views keep a copy";
}

TEST(MemoryRows, NeverCountLessThanTheStepHoldsForAnyChoiceOnLlama) {
  expect_rows_cover_the_step("llama3-debugmodel", {4});
}

TEST(MemoryRows, NeverCountLessThanTheStepHoldsForAnyChoiceOnA2DMesh) {
  expect_rows_cover_the_step("llama3-debugmodel", {2, 2});
}

TEST(MemoryRows, NeverCountLessThanTheStepHoldsForAnyChoiceOnAnMlp) {
  expect_rows_cover_the_step("mlp", {2, 2});
}

}  // namespace
}  // namespace autopar
