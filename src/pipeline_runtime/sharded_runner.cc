#include "pipeline_runtime/sharded_runner.h"

#include "runtime/redistribute_exec.h"
#include "runtime/spmd_executor.h"

namespace autopar::pipeline {

ShardedRunner::ShardedRunner(const Graph& graph, const Plan& plan, const SpmdMesh& mesh, Tracer& tracer)
    : graph_(graph), plan_(plan), mesh_(mesh), tracer_(tracer), redistributions_(plan) {}

PlannedNodeContext ShardedRunner::context(LiveStorages& held, StorageAccount& account) const {
  account = [&held](const at::Tensor& t, bool hold) {
    if (hold) held.add({t});
    else held.remove({t});
  };
  PlannedNodeContext c;
  c.graph = &graph_;
  c.plan = &plan_;
  c.redistributions = &redistributions_;
  c.mesh = &mesh_;
  c.tracer = &tracer_;
  c.account = &account;
  return c;
}

Expected<std::vector<at::Tensor>> ShardedRunner::run(NodeId v, const std::vector<at::Tensor>& inputs,
                                                     LiveStorages& held) {
  StorageAccount account;
  Expected<std::vector<at::Tensor>> outputs = run_planned_node(v, inputs, context(held, account));
  if (!outputs) return outputs.error();
  held.remove(*outputs);  // the worker's store counts them from here
  return outputs;
}

Shape ShardedRunner::held_shape(NodeId v, int32_t o, const Shape& full) const {
  return local_shape(full, planned_output_sharding(plan_, v, o), mesh_.mesh());
}

Expected<at::Tensor> ShardedRunner::local_value(NodeId v, const at::Tensor& full) const {
  return local_slice(full, planned_output_sharding(plan_, v), mesh_);
}

Expected<at::Tensor> ShardedRunner::to_param_placement(NodeId param, NodeId grad, const at::Tensor& sum,
                                                       LiveStorages& held) {
  StorageAccount account;
  return redistribute_planned(sum, param, -1, graph_.node(grad).name, context(held, account));
}

Expected<double> ShardedRunner::loss_value(NodeId loss, const at::Tensor& held) {
  Expected<at::Tensor> whole = gather_full(held, graph_.node(loss).meta(), planned_output_sharding(plan_, loss), mesh_);
  if (!whole) return whole.error();
  return whole->item<double>();
}

BoundaryLayout ShardedRunner::layout(NodeId v, int32_t o) const {
  const Sharding& sharding = planned_output_sharding(plan_, v, o);
  return {to_string(sharding), local_shape(graph_.node(v).outputs.at(static_cast<size_t>(o)).shape, sharding,
                                           mesh_.mesh())};
}

}  // namespace autopar::pipeline
