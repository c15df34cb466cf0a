// The CBC adapter: presolve, build the ILP of problem.h, hand it to CBC
// through its C API (which drives CbcMain like the command-line solver, ~10x
// faster than a bare branch-and-bound), and map the answer back to nodes.
#pragma once

#include <string>
#include <vector>

#include "ir/expected.h"
#include "planner/ilp_model.h"
#include "planner/problem.h"
#include "planner/reduced_cost_fixing.h"
#include "planner/solver.h"

namespace autopar::planner {

// Errors only for a malformed problem; infeasibility is a SolveStatus, with
// a MemoryShortfall when the memory budget is what cannot be met. `start`, a
// feasible assignment of the whole problem (or empty), is CBC's first
// incumbent when branch and bound runs.
Expected<Solution> solve_with_cbc(const Problem& problem, const SolverOptions& options = {},
                                  const Assignment& start = {});

// Writes the ILP CBC would solve: LP format when the path ends in ".lp",
// MPS otherwise. Columns and rows are named as in ilp_model.h.
Status dump_ilp(const Problem& problem, const std::string& path);

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

}  // namespace autopar::planner
