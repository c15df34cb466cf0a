// SPMD training run: N steps of a plan on this job's ranks, with an optional
// check against the unsplit model and measurements of what actually ran.
//
// Every rank builds the full placeholder values from the seed (init.h) and
// keeps its shards. Per step: the SPMD executor's forward+backward, the loss
// assembled on every rank (a Partial loss is all-reduced), the optimizer on
// local parameter shards. Rank 0 prints `step k loss X`.
//
// --check: rank 0 runs the single-process executor (local_executor.h) on its
// own full copy of the parameters and applies the same optimizer; then the
// loss, every gradient and buffer update, and every parameter after the
// optimizer step are compared block by block: every rank's local block (every
// replica, every shard) against the same block of the reference
// (shard_compare.h). Tolerance (fp32; shards reduce in a different order than
// the whole tensor): a block passes when max |spmd - ref| <= atol + rtol *
// max |ref block| with rtol 1e-3 and atol 1e-5; parameters also allow the
// optimizer's largest move from a gradient within rounding of zero (AdamW:
// 2 lr per step). The verdict is broadcast so every rank exits alike. The
// check also holds the plan to its memory promise: each rank's measured peak
// (the tensors it held, counted as memory/step_memory.h counts them) within
// memory_tolerance of the predicted peak.
#pragma once

#include <cstdint>
#include <string>

#include "ir/expected.h"
#include "ir/graph.h"
#include "memory/peak_check.h"
#include "planner/auto_plan.h"
#include "runtime/optimizer.h"
#include "runtime/shard_compare.h"
#include "runtime/spmd_executor.h"
#include "runtime/spmd_mesh.h"

namespace autopar {

struct SpmdRunOptions {
  int64_t steps = 1;
  OptimizerConfig optimizer;
  uint64_t seed = 0;
  bool check = false;
  CheckTolerance tolerance;
  std::string trace_path;  // "" = no Chrome trace
  FaultInjection faults;
  // Exporter values (torch_values.h): start from them instead of the seed and
  // compare step 1's loss and gradients with PyTorch's (rank 0 prints
  // "torch check: ..."). "" = off.
  std::string torch_values_dir;
  // Step 1 also compares every node's output with the unsplit model and names
  // the first that differs (node_check.h; slow: it gathers every tensor).
  bool check_nodes = false;
  // With check: every rank's measured peak must be within this fraction of
  // the plan's predicted peak (memory/step_memory.h), or the check fails.
  double memory_tolerance = kPeakMemoryTolerance;
  // Rank 0 writes, for the last step, each position's predicted and measured
  // bytes (CSV) there; "" = off.
  std::string memory_by_node_path;
};

struct SpmdRunResult {
  bool check_ok = true;  // also false when --check-against-torch differs
  double max_error = 0;    // largest |spmd - ref| over the loss and gradients, all steps
  bool comm_matches_plan = true;
  // Largest |measured - predicted| / predicted peak memory over the ranks.
  double memory_error = 0;
};

// The tolerance of a parameter after `steps` optimizer steps. AdamW moves an
// element by about lr per step whatever its gradient's size (m / sqrt(v)), so
// a gradient within rounding of zero that has the other sign on one side moves
// the parameter 2 lr the other way: that much per step is allowed besides the
// gradient's tolerance. SGD moves it by lr times the gradient's difference.
CheckTolerance parameter_tolerance(const CheckTolerance& tol, const OptimizerConfig& optimizer,
                                   int64_t steps);

// Errors are this rank's (the caller aborts the job with them).
Expected<SpmdRunResult> run_spmd_training(const Graph& graph, const Plan& plan,
                                          const SpmdMesh& mesh, const SpmdRunOptions& options);

}  // namespace autopar
