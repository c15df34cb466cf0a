// What every solver returns: the assignment, how good it is, what stopped the
// search, and, when memory cannot fit, by how much. The ILP itself is written
// out in problem.h.
//
// Determinism: a solve is stopped by work limits (branch-and-bound nodes, LP
// iterations), which stop at the same point however busy the machine is, so
// the same problem gives the same plan byte for byte. The wall-clock limit is
// a safety valve set well above them; where it fires, the answer depends on
// the machine's load, and the solution says so (StopReason::kTimeLimit).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "planner/problem.h"

namespace autopar::planner {

struct EdgeMultipliers;  // dual_bound.h
struct ReducedProblem;   // presolve.h

enum class SolveStatus {
  kOptimal,        // proven optimal (within the relative gap asked for)
  kFeasible,       // a limit hit with an incumbent (StopReason says which)
  kInfeasible,     // no assignment satisfies the constraints
  kNoSolution,     // a limit hit before any incumbent
  kLocalOptimum,   // no neighbourhood improves it (dim_sweep.h); no global bound
};

// What ended the search. Every reason but kTimeLimit is deterministic.
enum class StopReason : uint8_t {
  kCompleted,       // it ran to its end: optimal (or within the gap), infeasible, local optimum
  kNodeLimit,       // SolverOptions::max_nodes
  kIterationLimit,  // SolverOptions::max_lp_iterations (the LP relaxation)
  kTimeLimit,       // SolverOptions::time_limit_s: the answer depends on the machine's load
};

const char* to_string(SolveStatus status);           // "optimal", "feasible", ...
const char* stop_reason_name(StopReason reason);     // "completed", "node_limit", ...
const char* stop_reason_words(StopReason reason);    // "end", "node limit", ...
// The status with the limit that ended it: "optimal", "feasible (node limit)",
// "no solution (time limit)".
std::string status_text(SolveStatus status, StopReason stopped_by);
// For people, when the time limit fired: the plan may differ between runs,
// and how to get a repeatable one. Empty for any other reason.
std::string time_limit_warning(StopReason stopped_by, double time_limit_s);
// (objective - bound) / |objective|, never below 0.
double relative_gap(double objective, double bound);

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

// Default work limits, from measurements (bench/RESULTS.md). The plans of the
// model zoo and the default llama3-8b ones are integral at the LP relaxation: 0
// nodes, at most 43 k LP iterations (llama3-8b 8x8 without layer sharing, 4.2 M
// columns: 234 k). Memory-bound plans branch: llama3-8b 4 layers on 2x4, 2
// nodes; mlp on 2x2x2 at 0.3 MB (82 k columns, --mesh-solve whole) proves its
// optimum after 706 nodes (344 s at load 4 on 2 cores) and stops at 500 in 376 s
// at load 6, inside the wall-clock valve, with the same plan. The valve
// catches only what the work limits do not bound: CBC's root cuts and
// heuristics, and problems far larger than these.
inline constexpr int32_t kDefaultMaxNodes = 500;
inline constexpr int32_t kDefaultMaxLpIterations = 1'000'000;
inline constexpr double kDefaultTimeLimitS = 600;

struct SolverOptions {
  // Branch-and-bound nodes of a CBC run (the mesh-dim sweeps share one
  // budget among their steps, dim_sweep.h); 0: the root node only.
  int32_t max_nodes = kDefaultMaxNodes;
  // Simplex iterations of the LP relaxation solved before CBC (lp_first).
  int32_t max_lp_iterations = kDefaultMaxLpIterations;
  double time_limit_s = kDefaultTimeLimitS;  // wall clock, the safety valve
  // CBC threads. Above 1, CBC's deterministic parallel mode ("threads 100+N"):
  // the same search whatever the timing of the threads, a little slower.
  int threads = 1;
  double relative_gap = 0;  // stop when (objective - bound) / objective is below
  bool verbose = false;     // let the solver print its log
  // On memory infeasibility, solve the min-peak problem for an exact bound.
  bool exact_memory_bound = true;
  // Try the LP relaxation first; CBC only if it is fractional (cbc_solver.h).
  bool lp_first = true;
  // Memory rows enter the ILP lazily: solve with none (but the static-budget
  // row), then add the rows the answer breaks (the memory_rows_per_round most
  // broken; all of them after max_memory_row_rounds rounds) and solve again,
  // until none is broken. Each round's ILP relaxes the full one, so its bound
  // is valid, and an answer breaking no row is as optimal as the round's
  // status says. Deterministic.
  bool lazy_memory_rows = true;
  int32_t memory_rows_per_round = 16;
  // Let Clp perturb the costs of a cold LP relaxation (cbc_run.cc). The
  // solver turns it on where no memory row can bind: the relaxation is
  // degenerate and usually the whole solve. Where one can, the unperturbed
  // vertex is kept, as the branch-and-bound after it depends on it.
  bool perturb_relaxation = false;
  // After a fractional LP relaxation, an incumbent from rounding it and
  // reduced-cost fixing against it, so CBC searches only the columns that
  // could still improve (reduced_cost_fixing.h). Exact; off for comparison.
  bool reduced_cost_fixing = true;
  // Before the LP: the pairwise dual bound (memory rows priced in), and the
  // problem pruned to the strategies and pairs that could cost at most a
  // target a little above it (target_pruning.h); solved whole only when the
  // pruned problems show the optimum is above every target. Exact; skipped
  // below target_pruning_min_pairs pair columns, where the LP is quick.
  bool target_pruning = true;
  int64_t target_pruning_min_pairs = 20000;
  int32_t max_memory_row_rounds = 8;
  // After mesh-dim sweeps (dim_sweep.h): bound the answer by the whole
  // problem's LP relaxation (relaxation_bound.h), so the plan states its gap.
  bool bound_sweeps = true;
  // And then solve the whole problem restricted to the strategies that bound
  // leaves (dim_sweep.h), proving the answer optimal when that completes.
  bool prove_sweeps = false;
  // After a fractional relaxation, CBC's root alone first (relaxation_search.h).
  // Off in the mesh-dim sweeps' steps, which start from the incumbent.
  bool root_first = true;
  // Extra CBC command-line parameters, e.g. {"cuts", "off"} (as "-cuts off").
  std::vector<std::pair<std::string, std::string>> cbc_parameters;
  ProgressCallback progress;  // empty: no progress reports
  // After an answer from a pruned problem, build the whole ILP once for its
  // size in SolveStats (variables, constraints, nonzeros). Off: only the
  // variables are counted, without building it (the layer-sharing proof,
  // whose unshared ILP has 2.2 M columns on llama3-8b 8x8, answers from a
  // pruned problem of 53 k).
  bool whole_size_stats = true;
  // When pruning to a target answers nothing (target_pruning.h), solve the
  // whole problem. Off: stop there with no solution and the dual bound (the
  // layer-sharing proof, whose whole problem is the unshared one).
  bool whole_after_pruning = true;
  // Where the pairwise dual ascent of target pruning starts, given the
  // presolved problem (empty: from zero multipliers). Layer sharing's proof
  // (auto_plan.cc) starts the untied problem's ascent from the tied one's.
  std::function<EdgeMultipliers(const ReducedProblem&)> dual_start;
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
  int32_t memory_rows_entered = 0;  // of memory_rows, in the last round's ILP
  int32_t memory_row_rounds = 0;    // solves until no row was broken
  int32_t variables = 0;
  int32_t integer_variables = 0;
  int32_t constraints = 0;
  int64_t nonzeros = 0;
  int32_t relaxation_incumbents = 0;  // fractional LPs rounded to an incumbent (all rounds)
  int32_t restricted_variables = 0;   // CBC's columns after reduced-cost fixing (0: unused)
  int32_t pruning_targets = 0;        // pruned problems solved before the LP (all rounds)
  int32_t pruned_variables = 0;       // columns of the pruned problem that answered (0: the whole did)
  int32_t search_nodes = 0;      // CBC branch-and-bound nodes (sweeps: all steps)
  int64_t lp_iterations = 0;     // simplex iterations of the LP relaxation (lp_first)
  double presolve_s = 0;
  double build_s = 0;
  double solve_s = 0;
};

struct Solution {
  SolveStatus status = SolveStatus::kNoSolution;
  StopReason stopped_by = StopReason::kCompleted;
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
