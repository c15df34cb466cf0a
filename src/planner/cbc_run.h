// The CBC and Clp drivers under solve_with_cbc (cbc_solver.h) and its steps:
// one CBC run on a built model with the solver options' limits, fixed seeds
// and deterministic threads, and the LP relaxation through Clp.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "ir/expected.h"
#include "planner/ilp_model.h"
#include "planner/reduced_cost_fixing.h"
#include "planner/solver.h"

namespace autopar::planner {

// One CBC run on a built model (used by solve_with_cbc and the memory bound).
struct CbcRun {
  SolveStatus status = SolveStatus::kNoSolution;
  StopReason stopped_by = StopReason::kCompleted;
  int32_t nodes = 0;            // branch-and-bound nodes searched
  int32_t lp_iterations = 0;    // of solve_integral_relaxation's LP
  std::vector<double> columns;  // the incumbent, empty without one
  double objective = 0;         // in model units
  double best_bound = 0;        // in model units
  double seconds = 0;
};
CbcRun run_cbc(const IlpModel& model, const SolverOptions& options);

// Solves the LP relaxation with Clp (its presolve, then dual simplex). When every integer column
// comes out integral (usual when memory rows do not bind: the one-hot and
// marginal rows are tight on tree-like graphs), that is the ILP optimum: fills
// `run` and returns true, sparing CBC's preprocessing and heuristics (4-10x).
// When fractional (memory rows that bind make it so), solve_with_cbc rounds
// it to an incumbent, fixes the columns whose reduced cost rules them out
// against it (reduced_cost_fixing.h), and gives CBC the rest.
// kStopped: the relaxation was still unsolved at the iteration or time limit
// (run.stopped_by says which). CBC would then solve it again in its root node,
// which watches neither (its crossover ran minutes past a 30 s limit on a 3-D
// mesh), so the caller stops.
// With kFractional and `fractional` given, the LP's solution and reduced
// costs go there (for reduced_cost_fixing.h).
// With `basis` (Clp's status codes for every column and row: 1 basic, 2 at
// upper, 3 at lower bound), the dual simplex starts from that basis, without
// presolve: a basis optimal before rows were added stays dual feasible, so a
// later round of lazy memory rows costs a few hundred iterations instead of a
// fresh solve. `final`, when given, receives the basis it ends with.
struct LpBasis {
  std::vector<int> columns, rows;
  bool empty() const { return columns.empty(); }
};
enum class Relaxation { kIntegral, kFractional, kStopped };
Relaxation solve_integral_relaxation(const IlpModel& model, const SolverOptions& options,
                                     CbcRun& run, LpSolution* fractional = nullptr,
                                     const LpBasis* basis = nullptr, LpBasis* final = nullptr);

// Model units -> seconds for progress reports (ilp_model.h scales the costs).
struct ObjectiveMap {
  double scale = 1;
  double constant = 0;
  double operator()(double v) const { return v / scale + constant; }
};

// Calls cb with the stage, the time since `start`, and what is known.
void report_progress(const ProgressCallback& cb, const char* stage,
                     std::chrono::steady_clock::time_point start, std::optional<double> objective,
                     std::optional<double> bound);

// run_cbc with progress reports (from CBC's log, times from progress_start,
// objectives through map) and a MIP start: the columns set to 1.
CbcRun run_cbc_reporting(const IlpModel& model, const SolverOptions& options,
                         std::chrono::steady_clock::time_point progress_start, ObjectiveMap map,
                         const std::vector<int>& start_columns = {});

// The model in CBC's LP format at `path` (which ends in ".lp").
Status write_lp(const IlpModel& model, const std::string& path);

}  // namespace autopar::planner
