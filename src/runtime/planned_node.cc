#include "runtime/planned_node.h"

#include "runtime/kernels.h"
#include "sharding/strategy.h"

namespace autopar {

Expected<at::Tensor> redistribute_planned(const at::Tensor& value, NodeId consumer, int32_t input,
                                          const std::string& name, const PlannedNodeContext& c) {
  const PlannedRedistribution* r = c.redistributions->find(consumer, input);
  if (r == nullptr) return value;
  return execute_redistribution(value, r->plan, *c.mesh, c.tracer, name, c.account);
}

namespace {

void account(const PlannedNodeContext& c, const std::vector<at::Tensor>& values, bool held) {
  if (c.account == nullptr) return;
  for (const at::Tensor& t : values) (*c.account)(t, held);
}

// The sync strategy's reduction over the mesh dims in its mask.
void add_sync(const PlannedNodeContext& c, const Node& node, uint32_t mask, KernelContext& kernel) {
  const SpmdMesh& mesh = *c.mesh;
  for (MeshDim m = 0; m < mesh.mesh().ndim(); ++m) {
    if (mask & (1u << m)) kernel.sync_devices *= mesh.mesh().size(m);
  }
  kernel.sync_sum = [&c, &node, mask](at::Tensor& t) -> Status {
    for (MeshDim m = 0; m < c.mesh->mesh().ndim(); ++m) {
      if (!(mask & (1u << m))) continue;
      if (Status st = all_reduce_in_place(t, *c.mesh, m, c.tracer, node.name); !st) return st;
    }
    return ok_status();
  };
}

}  // namespace

Expected<std::vector<at::Tensor>> run_planned_node(NodeId v, const std::vector<at::Tensor>& held_inputs,
                                                   const PlannedNodeContext& c) {
  const Graph& graph = *c.graph;
  const Node& node = graph.node(v);
  const SpmdMesh& mesh = *c.mesh;
  const NodeStrategies& ns = c.plan->strategies.nodes[static_cast<size_t>(v)];
  StrategyIdx s = c.plan->choice[static_cast<size_t>(v)];
  KernelContext kernel;
  kernel.random_key = c.random_key;
  if (uint32_t mask = ns.sync_mask(s); mask != 0) add_sync(c, node, mask, kernel);
  std::vector<at::Tensor> inputs;
  for (int i = 0; i < static_cast<int>(node.inputs.size()); ++i) {
    const NodeId u = node.inputs[static_cast<size_t>(i)];
    Expected<at::Tensor> t = redistribute_planned(held_inputs[static_cast<size_t>(i)], v, i, graph.node(u).name, c);
    if (!t) return t.error();
    if (c.on_redistributed_input && c.redistributions->find(v, i) != nullptr) {
      if (Status st = c.on_redistributed_input(v, i, *t); !st) return st.error();
    }
    // Held from now on: an operand copy counts while the next ones are made.
    account(c, {*t}, true);
    inputs.push_back(std::move(*t));
    const TensorMeta& full = input_meta(graph, v, i);
    kernel.input_offsets.push_back(shard_offsets(full.shape, ns.input(s, i), mesh.mesh(), mesh.coordinate()));
    kernel.input_full_shapes.push_back(full.shape);
  }
  std::vector<at::Tensor> outputs;
  const double start = c.tracer != nullptr ? c.tracer->now_us() : 0;
  if (node.op == OpId::kGetItem) {
    outputs = {inputs[0]};
  } else {
    std::vector<TensorMeta> local;
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      const Sharding& sh = ns.output(s, static_cast<int>(o));
      local.push_back({local_shape_at(node.outputs[o].shape, sh, mesh.mesh(), mesh.coordinate()), node.outputs[o].dtype});
      kernel.output_offsets.push_back(shard_offsets(node.outputs[o].shape, sh, mesh.mesh(), mesh.coordinate()));
    }
    Expected<std::vector<at::Tensor>> out = run_kernel(node, inputs, local, kernel);
    if (!out) return out.error();
    outputs = std::move(*out);
  }
  if (c.tracer != nullptr) c.tracer->compute(node.name, node_op_name(node), start, c.tracer->now_us());
  account(c, outputs, true);  // the kernel's outputs and its operands are held together
  account(c, inputs, false);  // the operand copies go; inputs read as they are stay
  return outputs;
}

}  // namespace autopar
