#include "pipeline_runtime/sharded_runner.h"

#include "runtime/redistribute_exec.h"
#include "runtime/spmd_executor.h"

namespace autopar::pipeline {

ShardedRunner::ShardedRunner(const Graph& graph, const Plan& plan, const SpmdMesh& mesh, Tracer& tracer)
    : graph_(graph), plan_(plan), mesh_(mesh), tracer_(tracer), redistributions_(plan) {
  account_ = [this](const at::Tensor& t, bool hold) {
    if (hold) held_->add({t});
    else held_->remove({t});
  };
  context_.graph = &graph_;
  context_.plan = &plan_;
  context_.redistributions = &redistributions_;
  context_.mesh = &mesh_;
  context_.tracer = nullptr;  // no trace of 3-D runs yet: an event per node costs a few us (see the header)
  context_.account = &account_;
}

Expected<std::vector<at::Tensor>> ShardedRunner::run(NodeId v, const std::vector<at::Tensor>& inputs,
                                                     LiveStorages& held) {
  held_ = &held;
  Expected<std::vector<at::Tensor>> outputs = run_planned_node(v, inputs, context_);
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
  held_ = &held;
  return redistribute_planned(sum, param, -1, graph_.node(grad).name, context_);
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
