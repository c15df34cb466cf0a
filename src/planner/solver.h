// What every solver returns: the assignment, how good it is, and, when memory
// cannot fit, by how much. The ILP itself is written out in problem.h.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "planner/problem.h"

namespace autopar::planner {

enum class SolveStatus {
  kOptimal,        // proven optimal (within the relative gap asked for)
  kFeasible,       // time limit hit with an incumbent
  kInfeasible,     // no assignment satisfies the constraints
  kNoSolution,     // time limit hit before any incumbent
  kLocalOptimum,   // no neighbourhood improves it (dim_sweep.h); no global bound
};

const char* to_string(SolveStatus status);

// Where a running solve stands, for a live status line. The solver never
// draws it: the CLI does (tools/autopar/progress.h), only on a terminal.
struct SolveProgress {
  const char* stage = "";   // "lp relaxation", "branch and bound", "done"
  double elapsed_s = 0;     // since the solve started
  std::optional<double> objective;   // best incumbent (seconds), when there is one
  std::optional<double> best_bound;  // no assignment costs less, when known
  std::optional<double> gap;         // (objective - bound) / |objective|, with both
};
// Called from the solving thread or, while CBC runs, from one helper thread
// reading its log (never two calls at once), a few times a second at most.
using ProgressCallback = std::function<void(const SolveProgress&)>;

struct SolverOptions {
  double time_limit_s = 60;
  int threads = 1;
  double relative_gap = 0;  // stop when (objective - bound) / objective is below
  bool verbose = false;     // let the solver print its log
  // On memory infeasibility, solve the min-peak problem for an exact bound.
  bool exact_memory_bound = true;
  // Try the LP relaxation first; CBC only if it is fractional (cbc_solver.h).
  bool lp_first = true;
  // Extra CBC command-line parameters, e.g. {"cuts", "off"} (as "-cuts off").
  std::vector<std::pair<std::string, std::string>> cbc_parameters;
  ProgressCallback progress;  // empty: no progress reports
};

struct NodeBytes {
  NodeIdx node = 0;
  std::string name;
  double min_bytes = 0;  // the least this node can hold at that point
};

// The memory budget cannot be met. lower_bound_bytes is a budget below which
// nothing fits (the min-peak optimum when `exact`, else per-point minima).
struct MemoryShortfall {
  double budget = 0;
  double lower_bound_bytes = 0;
  bool exact = false;
  bool static_row = false;  // the static-bytes budget is the one that fails
  TimeIdx point = -1;       // the tightest time point (-1: static bytes only)
  std::vector<NodeBytes> top_nodes;  // largest minimum bytes there, descending
};

struct SolveStats {
  int32_t nodes = 0;              // in the Problem
  int32_t reduced_nodes = 0;      // with two or more strategies after presolve
  int32_t reduced_edges = 0;
  int32_t memory_rows = 0;
  int32_t variables = 0;
  int32_t integer_variables = 0;
  int32_t constraints = 0;
  int64_t nonzeros = 0;
  double presolve_s = 0;
  double build_s = 0;
  double solve_s = 0;
};

struct Solution {
  SolveStatus status = SolveStatus::kNoSolution;
  Assignment assignment;     // per node, empty without a solution
  double objective = 0;      // cost of `assignment` (seconds)
  double best_bound = 0;     // no assignment costs less
  double gap = 0;            // (objective - best_bound) / |objective|
  double peak_bytes = 0;     // of `assignment`
  std::optional<MemoryShortfall> shortfall;
  std::string message;       // why infeasible / stopped, for people
  SolveStats stats;
};

}  // namespace autopar::planner
