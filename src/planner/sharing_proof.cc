#include "planner/sharing_proof.h"

#include <cmath>
#include <memory>
#include <numeric>
#include <string_view>

#include <fmt/format.h>

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

// Why the proof does not apply to this plan, or empty.
std::string_view why_not_proven(const Plan& plan) {
  if (plan.solver.shared_layers == 0) return "no layers were shared";
  if (plan.solver.method != "whole") return "mesh-dim sweeps answer a local optimum";
  if (!plan.recompute.empty()) return "not with recomputation";
  if (plan.solver.folded_followers > 0) return "not with folded followers";
  return {};
}

// The untied problem without memory rows, solved from the shared answer.
Expected<planner::Solution> solve_untied(const Graph& graph, const planner::Problem& tied,
                                         const std::vector<std::vector<StrategyIdx>>& allowed,
                                         RedistributionCache& cache, const ProblemBuildOptions& build_options,
                                         const planner::SolverOptions& solver, const planner::Solution& shared,
                                         const StrategyGraph& strategies) {
  const std::vector<NodeId> untie = untied_representatives(graph);
  const RecomputeChoices none(graph, strategies, untie, RecomputeMode::kNone);
  ProblemBuildOptions untied_options = build_options;
  untied_options.memory_budget = planner::kNoBudget;  // the relaxation: rows aside
  untied_options.recompute = &none;
  const BuiltProblem untied = build_problem(graph, strategies, untie, allowed, cache, untied_options);
  planner::SolverOptions options = solver;
  options.dual_start = tied_start(tied);
  options.whole_size_stats = false;
  options.whole_after_pruning = false;  // the unshared problem whole is what sharing avoids
  return planner::solve_with_cbc(untied.problem, options, shared.assignment);
}

}  // namespace

void prove_sharing(const Graph& graph, const planner::Problem& tied,
                   const std::vector<std::vector<StrategyIdx>>& allowed, RedistributionCache& cache,
                   const ProblemBuildOptions& build_options, const planner::SolverOptions& solver,
                   const planner::Solution& shared, Plan& plan) {
  SharingProof& proof = plan.solver.sharing_proof.emplace();
  if (std::string_view why = why_not_proven(plan); !why.empty()) {
    proof.verdict = fmt::format("not run: {}", why);
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  proof.shared_objective = shared.objective;
  proof.unshared_objective = shared.objective;
  Expected<planner::Solution> answer =
      solve_untied(graph, tied, allowed, cache, build_options, solver, shared, plan.strategies);
  proof.seconds = seconds_since(start);
  proof.verdict = "not proven";
  if (!answer) return;
  proof.bound = answer->best_bound;
  proof.variables = answer->stats.variables;
  proof.variables_left = answer->stats.pruned_variables;
  if (answer->assignment.empty()) return;
  proof.unshared_objective = answer->objective;
  if (answer->status != planner::SolveStatus::kOptimal) return;
  if (answer->objective >= shared.objective - (1e-9 * std::abs(shared.objective) + 1e-15)) {
    proof.verdict = "exact";
    return;
  }
  // A cheaper untied plan: the untied optimum when it fits.
  Plan trial = plan;
  trial.choice.assign(answer->assignment.begin(), answer->assignment.begin() + graph.size());
  evaluate_plan(graph, trial);
  if (!trial.summary.fits) {
    proof.verdict = "cheaper plan over budget";
    return;
  }
  proof.verdict = "improved";
  plan = std::move(trial);
  plan.solver.objective = answer->objective;
  plan.solver.best_bound = answer->objective;
  plan.solver.gap = 0;
}

}  // namespace autopar
