// One node of a plan on this rank: its inputs brought into the sharding the
// node's chosen strategy reads (the plan's redistribution steps, on the mesh
// dims' communicators), then its kernel on local shards with the local output
// shapes, shard offsets and sync reductions the strategy implies.
//
// Shared by the SPMD executor (a whole step, spmd_executor.h) and the 3-D
// pipeline's stage workers (one stage's nodes per action), so the two run a
// node exactly alike. Every rank of the mesh must run the same nodes in the
// same order: collectives are matched by order.
#pragma once

#include <functional>
#include <vector>

#include <ATen/core/Tensor.h>

#include "ir/expected.h"
#include "ir/graph.h"
#include "planner/auto_plan.h"
#include "runtime/redistribute_exec.h"
#include "runtime/spmd_mesh.h"
#include "runtime/trace.h"

namespace autopar {

struct PlannedNodeContext {
  const Graph* graph = nullptr;
  const Plan* plan = nullptr;
  const RedistributionIndex* redistributions = nullptr;
  const SpmdMesh* mesh = nullptr;
  Tracer* tracer = nullptr;             // tallies collectives and the kernel's time
  const StorageAccount* account = nullptr;  // told of every tensor held and freed
  uint64_t random_key = 0;
  // Called with each redistributed input before the kernel runs (may be null).
  std::function<Status(NodeId, int input, const at::Tensor&)> on_redistributed_input;
};

// Node v's local outputs from its inputs' values as held (in their
// producers' shardings). The redistributed copies are counted held while the
// kernel runs and freed after; the outputs are counted held from the moment
// they exist (the caller owns them from then on). Errors name the input or
// the kernel's failure.
Expected<std::vector<at::Tensor>> run_planned_node(NodeId v, const std::vector<at::Tensor>& held_inputs,
                                                   const PlannedNodeContext& context);

// A value brought from its producer's sharding to the sharding of the
// redistribution planned at (consumer, input), counted as above; unchanged
// when none is planned there.
Expected<at::Tensor> redistribute_planned(const at::Tensor& value, NodeId consumer, int32_t input,
                                          const std::string& name, const PlannedNodeContext& context);

}  // namespace autopar
