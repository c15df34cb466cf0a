// Whole-layer recomputation in pipeline stages (--recompute full with
// `autopar pipeline`, `run --pipeline`, `plan --pipeline`).
//
// The re-run nodes of each layer (memory/recompute.h, find_layer_recompute)
// that a stage's forward makes are not kept after its F action: the stage
// keeps instead what they read (its received inputs, kept forward values,
// params), and each backward action (B, I or W) runs them again right before
// its first node that needs them, directly or through another re-run node,
// in graph order. A value I re-ran and W reads is kept from I to W (the keep
// rules) and not re-run in W. So the programs' backward lists carry the
// re-runs: the keep rules (keep_rules.h), the memory model
// (pipeline_memory.h), the stage runtime and the pipeline planner's
// durations all read the same lists, and count a re-run where it runs.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "pipeline_runtime/partition.h"

namespace autopar::pipeline {

// Rewrites each program's backward, input_grad and weight_grad lists to
// include its re-runs, and sets its `rerun` (the forward nodes re-run,
// sorted). Returns the number of stages with re-runs.
int32_t add_layer_recomputation(const Graph& graph, std::vector<StageProgram>& programs);

// ", whole layers recomputed (N nodes re-run in S stages)" for a run's
// header line; "" when no stage re-runs anything.
std::string rerun_summary(const std::vector<StageProgram>& programs);

}  // namespace autopar::pipeline
