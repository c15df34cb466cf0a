// After a fractional LP relaxation: an incumbent rounded from it, reduced-cost
// fixing against that incumbent (reduced_cost_fixing.h), and CBC on the
// columns left. With SolverOptions::root_first, CBC's root alone (cuts and
// heuristics, no branching) runs first: when it finds a better incumbent,
// fixing against that one drops more columns before the search. CBC runs on
// the whole model when there is no incumbent or reduced-cost fixing is off.
#pragma once

#include <chrono>
#include <vector>

#include "planner/cbc_run.h"
#include "planner/presolve.h"

namespace autopar::planner {

// `start`: the caller's incumbent as columns set to 1 (or empty). Fills
// stats.relaxation_incumbents and stats.restricted_variables. The run's
// bound is valid for the whole model.
CbcRun solve_after_relaxation(const ReducedProblem& r, const IlpModel& m, const LpSolution& lp,
                              const SolverOptions& o, std::chrono::steady_clock::time_point progress_start,
                              ObjectiveMap map, const std::vector<int>& start, SolveStats& stats);

// A choice's cost as choice_cost (local_search.h) gives it, in the model's
// units: without the groups of one strategy, which the ILP leaves out (their
// cost is ReducedProblem::constant_cost), times the objective scale.
double model_objective(const ReducedProblem& r, const IlpModel& m, const std::vector<int32_t>& choice,
                       double cost);

// The same for the min-peak model (IlpObjective::kPeakMemory): the LP
// rounded (as above, without the single moves, which lower cost, not peak) is
// the incumbent at its highest memory row; reduced-cost fixing against it;
// CBC on the rest. The run's bound is valid for the whole model.
CbcRun solve_peak_after_relaxation(const ReducedProblem& r, const IlpModel& m, const LpSolution& lp,
                                   const SolverOptions& o);

}  // namespace autopar::planner
