// The single-process executor (see local_executor.h).
#include "runtime/local_executor.h"

#include "runtime/live_storages.h"

namespace autopar {
namespace {

// Position after which each node's value is no longer read; graph outputs
// are kept to the end (position = graph size).
std::vector<int32_t> last_uses(const Graph& graph) {
  std::vector<int32_t> last(static_cast<size_t>(graph.size()), -1);
  for (NodeId id = 0; id < graph.size(); ++id) {
    last[static_cast<size_t>(id)] = id;
    for (NodeId in : graph.node(id).inputs) last[static_cast<size_t>(in)] = id;
  }
  for (const GraphOutput& out : graph.outputs()) last[static_cast<size_t>(out.node)] = graph.size();
  return last;
}

Expected<std::vector<at::Tensor>> run_node(const Graph& graph, NodeId id, NodeValues& values,
                                           const ExecuteHooks& hooks) {
  const Node& node = graph.node(id);
  if (node.op == OpId::kGetItem) {
    const std::vector<at::Tensor>& tuple = values[static_cast<size_t>(node.inputs[0])];
    int64_t index = node.attrs.get_int("index");
    if (index < 0 || index >= static_cast<int64_t>(tuple.size())) {
      return make_error("node {} (getitem {}): producer has {} values", node.name, index,
                        tuple.size());
    }
    return std::vector<at::Tensor>{tuple[static_cast<size_t>(index)]};
  }
  std::vector<at::Tensor> inputs;
  inputs.reserve(node.inputs.size());
  for (NodeId in : node.inputs) {
    const std::vector<at::Tensor>& v = values[static_cast<size_t>(in)];
    if (v.size() != 1 || !v[0].defined()) {
      return make_error("node {} reads {}, which has no single value", node.name,
                        graph.node(in).name);
    }
    inputs.push_back(v[0]);
  }
  if (hooks.prepare_inputs) {
    if (Status s = hooks.prepare_inputs(id, inputs); !s) return s.error();
  }
  // Without hooks the node's own metadata and an empty context are used as
  // they are: copying them per node was a measurable part of the overhead.
  KernelContext context = hooks.context ? hooks.context(id) : KernelContext{};
  context.random_key = hooks.random_key;
  if (!hooks.local_outputs) return run_kernel(node, inputs, node.outputs, context);
  std::vector<TensorMeta> outputs = hooks.local_outputs(id);
  return run_kernel(node, inputs, outputs, context);
}

}  // namespace

Expected<ExecuteStats> execute_nodes(const Graph& graph, NodeValues& values,
                                     const ExecuteHooks& hooks) {
  values.resize(static_cast<size_t>(graph.size()));
  std::vector<int32_t> last = last_uses(graph);
  ExecuteStats stats;
  LiveStorages live;
  auto drop = [&](NodeId v) {
    live.remove(values[static_cast<size_t>(v)]);
    values[static_cast<size_t>(v)].clear();
  };
  for (const std::vector<at::Tensor>& v : values) live.add(v);  // the placeholders
  for (NodeId id = 0; id < graph.size(); ++id) {
    const Node& node = graph.node(id);
    if (node.is_placeholder()) {
      const std::vector<at::Tensor>& v = values[static_cast<size_t>(id)];
      if (v.size() != 1 || !v[0].defined()) {
        return make_error("placeholder {} has no value", node.name);
      }
      continue;
    }
    Expected<std::vector<at::Tensor>> out = run_node(graph, id, values, hooks);
    if (!out) return out.error();
    values[static_cast<size_t>(id)] = std::move(*out);
    if (hooks.after_node) hooks.after_node(id, values[static_cast<size_t>(id)]);
    live.add(values[static_cast<size_t>(id)]);
    if (live.bytes() > stats.peak_live_bytes) stats = {live.bytes(), id};
    for (NodeId in : node.inputs) {
      // An input read twice by this node is dropped once.
      if (last[static_cast<size_t>(in)] == id && !values[static_cast<size_t>(in)].empty()) drop(in);
    }
    if (last[static_cast<size_t>(id)] == id) drop(id);
  }
  return stats;
}

at::Tensor LocalRunResult::grad(std::string_view param) const {
  for (const auto& [name, value] : grads) {
    if (name == param) return value;
  }
  return {};
}

Expected<LocalRunResult> run_local(const Graph& graph, const InitOptions& options) {
  Expected<std::vector<at::Tensor>> init = init_placeholders(graph, options);
  if (!init) return init.error();
  NodeValues values(static_cast<size_t>(graph.size()));
  for (NodeId id = 0; id < graph.size(); ++id) {
    if (graph.node(id).is_placeholder())
      values[static_cast<size_t>(id)] = {(*init)[static_cast<size_t>(id)]};
  }
  init->clear();
  Expected<ExecuteStats> stats = execute_nodes(graph, values);
  if (!stats) return stats.error();
  LocalRunResult result;
  result.stats = *stats;
  for (const GraphOutput& out : graph.outputs()) {
    const at::Tensor& value = values[static_cast<size_t>(out.node)].at(0);
    if (out.kind == OutputKind::kLoss) {
      result.loss = value;
    } else if (out.kind == OutputKind::kGradient) {
      const Node& param = graph.node(out.param);
      result.grads.emplace_back(param.target.empty() ? param.name : param.target, value);
    }
  }
  return result;
}

}  // namespace autopar
