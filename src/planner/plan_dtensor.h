// A plan in PyTorch DTensor's terms (`autopar plan --format dtensor`): the
// mesh, each parameter's placements by its module parameter name (as
// model.named_parameters() spells it), the inputs', and the activation
// placements where tensors cross module boundaries (module = node scope).
// A PyTorch user applies it with distribute_tensor / DTensor.redistribute;
// docs/pytorch.md has the format and a reader.
#pragma once

#include <string>

#include "ir/graph.h"
#include "planner/auto_plan.h"

namespace autopar {

// "Shard(0)", "Replicate()", "Partial()" (sum) or "Partial(avg)" per mesh dim.
std::vector<std::string> dtensor_placements(const Sharding& sharding);

// The JSON document (format "autopar.dtensor_plan", version 1).
std::string plan_to_dtensor_json(const Graph& graph, const Plan& plan);

}  // namespace autopar
