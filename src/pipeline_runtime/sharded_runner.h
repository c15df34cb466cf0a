// ShardedRunner: a stage group's way of running nodes in a 3-D run. Every
// value is this rank's block under the group's plan (one SPMD plan of the
// microbatch graph on the stage group's sub-mesh, pipeline_plan/); each node
// runs as the SPMD executor runs it (runtime/planned_node.h), its inputs
// redistributed into the strategy's shardings on the sub-mesh's
// communicators. Every rank of a group runs the same actions in the same
// order, so their collectives match. Nothing is traced: a 3-D run writes no
// trace yet, and recording an event per node and collective would cost the
// step a few microseconds per node (the tracer is kept for when it does).
#pragma once

#include "pipeline/stage_meta.h"
#include "pipeline_runtime/node_runner.h"
#include "planner/auto_plan.h"
#include "runtime/planned_node.h"
#include "runtime/spmd_mesh.h"
#include "runtime/trace.h"

namespace autopar::pipeline {

class ShardedRunner final : public NodeRunner {
 public:
  ShardedRunner(const Graph& graph, const Plan& plan, const SpmdMesh& mesh, Tracer& tracer);
  Expected<std::vector<at::Tensor>> run(NodeId v, const std::vector<at::Tensor>& inputs, LiveStorages& held) override;
  Shape held_shape(NodeId v, int32_t o, const Shape& full) const override;
  Expected<at::Tensor> local_value(NodeId v, const at::Tensor& full) const override;
  Expected<at::Tensor> to_param_placement(NodeId param, NodeId grad, const at::Tensor& sum, LiveStorages& held) override;
  Expected<double> loss_value(NodeId loss, const at::Tensor& held) override;

  // The placement and local shape of output `o` of node v, as boundary
  // metadata carries it (pipeline/stage_meta.h).
  BoundaryLayout layout(NodeId v, int32_t o) const;
  const SpmdMesh& mesh() const { return mesh_; }

  ShardedRunner(const ShardedRunner&) = delete;  // context_ points into it
  ShardedRunner& operator=(const ShardedRunner&) = delete;

 private:
  const Graph& graph_;
  const Plan& plan_;
  const SpmdMesh& mesh_;
  Tracer& tracer_;
  RedistributionIndex redistributions_;
  LiveStorages* held_ = nullptr;  // the caller's, for the call in progress
  StorageAccount account_;
  PlannedNodeContext context_;    // built once: a node costs no context of its own
};

}  // namespace autopar::pipeline
