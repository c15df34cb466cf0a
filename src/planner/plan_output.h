// Plan outputs: the JSON plan (docs/plan-format.md), the annotated graph, and
// the summary table for people. All are deterministic for the same inputs;
// the JSON's wall-clock fields (solver.time_s, solver.build_s) are written only
// with `timings` so two runs can be diffed byte for byte.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "planner/auto_plan.h"

namespace autopar {

std::string plan_to_json(const Graph& graph, const Plan& plan, bool timings);

// Each node line of the FX printer followed by
//   # placement=(S(0)S(2), RR) -> S(0)S(2), cost=[compute, comm]
std::string plan_to_annotated(const Graph& graph, const Plan& plan);

std::string plan_to_summary(const Graph& graph, const Plan& plan);

// Side-by-side table of several plans (autopar compare).
std::string compare_table(const std::vector<const Plan*>& plans);

// "S(0)S(2)" -> ["S(0)", "S(2)"]
std::vector<std::string> placement_list(const Sharding& sharding);

}  // namespace autopar
