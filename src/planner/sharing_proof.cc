#include "planner/sharing_proof.h"

#include <cmath>
#include <memory>
#include <numeric>

#include "planner/cbc_solver.h"
#include "planner/dual_bound.h"
#include "planner/presolve.h"
#include "planner/recompute_choices.h"
#include "planner/stopwatch.h"
#include "planner/tied_multipliers.h"

namespace autopar {
namespace {

using planner::seconds_since;

// Every node its own representative: no layer shares variables.
std::vector<NodeId> untied_representatives(const Graph& graph) {
  std::vector<NodeId> rep(static_cast<size_t>(graph.size()));
  std::iota(rep.begin(), rep.end(), NodeId{0});
  return rep;
}

// The dual ascent of the tied problem, memory rows aside, as a warm start
// for the untied problem's (planner::SolverOptions::dual_start).
std::function<planner::EdgeMultipliers(const planner::ReducedProblem&)> tied_start(const planner::Problem& tied) {
  planner::PresolveOptions no_rows;
  no_rows.memory_rows = false;
  auto reduced = std::make_shared<const planner::ReducedProblem>(planner::presolve(tied, no_rows));
  auto dual = std::make_shared<const planner::DualBound>(planner::pairwise_dual_bound(*reduced));
  return [reduced, dual](const planner::ReducedProblem& untied) {
    return planner::spread_tied_multipliers(*reduced, dual->multipliers, untied);
  };
}

}  // namespace

void prove_sharing(const Graph& graph, const planner::Problem& tied,
                   const std::vector<std::vector<StrategyIdx>>& allowed, RedistributionCache& cache,
                   const ProblemBuildOptions& build_options, const planner::SolverOptions& solver,
                   const planner::Solution& shared, Plan& plan) {
  const auto start = std::chrono::steady_clock::now();
  SharingProof proof;
  proof.shared_objective = shared.objective;
  const std::vector<NodeId> untie = untied_representatives(graph);
  const RecomputeChoices none(graph, plan.strategies, untie, RecomputeMode::kNone);
  ProblemBuildOptions untied_options = build_options;
  untied_options.memory_budget = planner::kNoBudget;  // the relaxation: rows aside
  untied_options.recompute = &none;
  const BuiltProblem untied = build_problem(graph, plan.strategies, untie, allowed, cache, untied_options);
  planner::SolverOptions options = solver;
  options.dual_start = tied_start(tied);
  options.whole_size_stats = false;
  options.whole_after_pruning = false;  // the unshared problem whole is what sharing avoids
  Expected<planner::Solution> answer = planner::solve_with_cbc(untied.problem, options, shared.assignment);
  proof.seconds = seconds_since(start);
  if (!answer || answer->assignment.empty() || answer->status != planner::SolveStatus::kOptimal) {
    proof.verdict = "not proven";
    if (answer) {
      proof.bound = answer->best_bound;
      proof.unshared_objective = answer->assignment.empty() ? shared.objective : answer->objective;
      proof.variables = answer->stats.variables;
      proof.variables_left = answer->stats.pruned_variables;
    }
    plan.solver.sharing_proof = proof;
    return;
  }
  proof.bound = answer->best_bound;
  proof.unshared_objective = answer->objective;
  proof.variables = answer->stats.variables;
  proof.variables_left = answer->stats.pruned_variables;
  const double tolerance = 1e-9 * std::abs(shared.objective) + 1e-15;
  if (answer->objective >= shared.objective - tolerance) {
    proof.verdict = "exact";
    plan.solver.sharing_proof = proof;
    return;
  }
  // A cheaper untied plan: the untied optimum when it fits.
  Plan trial = plan;
  trial.choice.assign(answer->assignment.begin(), answer->assignment.begin() + graph.size());
  evaluate_plan(graph, trial);
  if (!trial.summary.fits) {
    proof.verdict = "cheaper plan over budget";
    plan.solver.sharing_proof = proof;
    return;
  }
  proof.verdict = "improved";
  plan = std::move(trial);
  plan.solver.objective = answer->objective;
  plan.solver.best_bound = answer->objective;
  plan.solver.gap = 0;
  plan.solver.sharing_proof = proof;
}

}  // namespace autopar
