// The printed forms of SolveStatus and StopReason (solver.h).
#include "planner/solver.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace autopar::planner {

const char* to_string(SolveStatus status) {
  switch (status) {
    case SolveStatus::kOptimal: return "optimal";
    case SolveStatus::kFeasible: return "feasible";
    case SolveStatus::kInfeasible: return "infeasible";
    case SolveStatus::kNoSolution: return "no solution";
    case SolveStatus::kLocalOptimum: return "local optimum";
  }
  return "?";
}

const char* stop_reason_name(StopReason reason) {
  switch (reason) {
    case StopReason::kCompleted: return "completed";
    case StopReason::kNodeLimit: return "node_limit";
    case StopReason::kIterationLimit: return "iteration_limit";
    case StopReason::kTimeLimit: return "time_limit";
  }
  return "?";
}

const char* stop_reason_words(StopReason reason) {
  switch (reason) {
    case StopReason::kCompleted: return "end";
    case StopReason::kNodeLimit: return "node limit";
    case StopReason::kIterationLimit: return "iteration limit";
    case StopReason::kTimeLimit: return "time limit";
  }
  return "?";
}

std::string status_text(SolveStatus status, StopReason stopped_by) {
  if (stopped_by == StopReason::kCompleted) return to_string(status);
  return fmt::format("{} ({})", to_string(status), stop_reason_words(stopped_by));
}

double relative_gap(double objective, double bound) {
  return std::max(0.0, (objective - bound) / std::max(std::abs(objective), 1e-300));
}

std::string time_limit_warning(StopReason stopped_by, double time_limit_s) {
  if (stopped_by != StopReason::kTimeLimit) return "";
  return fmt::format("the {} s wall-clock limit stopped the solver, so this plan depends on the "
                     "machine's load and may differ between runs; for a repeatable plan raise "
                     "--time-limit, or lower --max-nodes so that the work limit stops it first",
                     time_limit_s);
}

}  // namespace autopar::planner
