// Plan reader: a plan JSON (planner/plan_output.h, docs/plan-format.md) read
// back into a choice of strategy per node, for `autopar run --plan FILE`.
//
// A plan is refused, with the reason, when it does not fit the launch or the
// graph: the mesh's device count is not the number of ranks, the plan has no
// placements (nothing fitted), a node is unknown or missing, a node's op,
// shape or dtype changed since planning, or no strategy of a node has the
// plan's placements (its rules changed). The mesh comes from the plan file.
#pragma once

#include <string>
#include <vector>

#include "ir/expected.h"
#include "ir/graph.h"
#include "planner/auto_plan.h"

namespace autopar {

struct PlanFile {
  std::string graph;   // the graph's name when planned
  std::string label;   // "solved" or a baseline's name
  std::string hardware;
  std::string optimizer;
  std::vector<int64_t> mesh_shape;
  std::vector<std::string> mesh_names;
};

// Header fields only; errors name what is missing.
Expected<PlanFile> read_plan_header(const std::string& json_text);

// The full Plan for `graph`: strategies built on `mesh` with `hw` costs, the
// file's choice per node, redistributions and summary from evaluate_plan.
// `ranks`: the number of processes the plan must run on.
Expected<Plan> read_plan(const std::string& json_text, const Graph& graph, const DeviceMesh& mesh,
                         const HardwareProfile& hw, int64_t ranks);

}  // namespace autopar
