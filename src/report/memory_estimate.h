// Memory estimator for explaining plans: the step's memory timeline of a
// plan, by the one memory model (memory/step_memory.h says what it counts).
// `autopar explain --memory` and the HTML report show it; the plan summary's
// peak and `fits` come from the same function (planner/auto_plan.h's
// plan_memory), so the three always agree.
#pragma once

#include "ir/graph.h"
#include "memory/step_memory.h"
#include "planner/auto_plan.h"

namespace autopar::report {

using autopar::LiveTensor;
using autopar::MemoryKind;
using autopar::MemoryParts;
using autopar::MemoryTimeline;

// The plan must have a choice; a plan without one (nothing fits) gives an
// empty timeline.
inline MemoryTimeline estimate_memory(const Graph& graph, const Plan& plan) {
  return plan_memory(graph, plan);
}

}  // namespace autopar::report
