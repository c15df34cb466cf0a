// SPMD run report: after the training steps, every rank's measurements are
// combined (slowest rank's step time, largest peak memory) and rank 0 prints
// them next to the plan's predictions — step time, peak memory, and per
// collective and mesh dim the calls and bytes per step, which must equal the
// plan's exactly (the run executes the plan's redistribution steps). With a
// trace path, every rank's events go to rank 0, which writes one Chrome trace.
#pragma once

#include "ir/expected.h"
#include "ir/graph.h"
#include "planner/auto_plan.h"
#include "runtime/spmd_mesh.h"
#include "runtime/spmd_run.h"
#include "runtime/trace.h"

namespace autopar {

// Collective participation: every rank must call it. Sets
// result.comm_matches_plan.
Status finish_report(const Graph& graph, const Plan& plan, const SpmdMesh& mesh,
                     const Tracer& tracer, const SpmdRunOptions& options, SpmdRunResult& result);

}  // namespace autopar
