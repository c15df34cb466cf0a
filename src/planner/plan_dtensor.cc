#include "planner/plan_dtensor.h"

#include <map>

#include <nlohmann/json.hpp>

namespace autopar {
namespace {

using Json = nlohmann::ordered_json;

const Sharding& out_sharding(const Plan& plan, NodeId v) {
  return plan.strategies.nodes[static_cast<size_t>(v)].output(plan.choice[static_cast<size_t>(v)], 0);
}

const Sharding& in_sharding(const Plan& plan, NodeId v, int i) {
  return plan.strategies.nodes[static_cast<size_t>(v)].input(plan.choice[static_cast<size_t>(v)], i);
}

// Nodes the loss depends on: the forward pass (backward nodes feed only gradients).
std::vector<bool> forward_nodes(const Graph& graph) {
  std::vector<bool> fwd(static_cast<size_t>(graph.size()), false);
  std::vector<NodeId> stack;
  for (const GraphOutput& o : graph.outputs()) {
    if (o.kind == OutputKind::kLoss) stack.push_back(o.node);
  }
  while (!stack.empty()) {
    NodeId v = stack.back();
    stack.pop_back();
    if (fwd[static_cast<size_t>(v)]) continue;
    fwd[static_cast<size_t>(v)] = true;
    for (NodeId u : graph.node(v).inputs) stack.push_back(u);
  }
  return fwd;
}

bool within(const std::string& scope, const std::string& module) {
  return scope == module || (scope.size() > module.size() && scope.compare(0, module.size(), module) == 0 &&
                             scope[module.size()] == '.');
}

// "layers.0.attn" -> "layers", "layers.0", "layers.0.attn".
std::vector<std::string> enclosing_modules(const std::string& scope) {
  std::vector<std::string> out;
  for (size_t i = 0; i <= scope.size(); ++i) {
    if (i == scope.size() || scope[i] == '.') out.push_back(scope.substr(0, i));
  }
  if (scope.empty()) out.clear();
  return out;
}

struct Boundary {
  Json inputs = Json::array();
  Json outputs = Json::array();
  std::vector<NodeId> seen_in, seen_out;
};

Json tensor_entry(const Graph& graph, NodeId v, const Sharding& s) {
  return {{"node", graph.node(v).name}, {"shape", graph.node(v).meta().shape},
          {"placements", dtensor_placements(s)}};
}

bool add_once(std::vector<NodeId>& seen, NodeId v) {
  if (std::find(seen.begin(), seen.end(), v) != seen.end()) return false;
  seen.push_back(v);
  return true;
}

// For each forward edge u -> v that crosses a module's border: an input of
// every module holding v but not u (placement v expects), an output of every
// module holding u but not v (placement u produces).
Json modules_json(const Graph& graph, const Plan& plan) {
  std::vector<bool> fwd = forward_nodes(graph);
  std::vector<std::string> order;
  std::map<std::string, Boundary> modules;
  auto module = [&](const std::string& name) -> Boundary& {
    if (!modules.count(name)) order.push_back(name);
    return modules[name];
  };
  for (NodeId v = 0; v < graph.size(); ++v) {
    const Node& node = graph.node(v);
    if (!fwd[static_cast<size_t>(v)] || node.is_placeholder()) continue;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      NodeId u = node.inputs[i];
      const Node& producer = graph.node(u);
      if (producer.is_placeholder() && producer.kind == PlaceholderKind::kParam) continue;
      for (const std::string& m : enclosing_modules(node.scope)) {
        if (!within(producer.scope, m) && add_once(module(m).seen_in, u)) {
          module(m).inputs.push_back(tensor_entry(graph, u, in_sharding(plan, v, static_cast<int>(i))));
        }
      }
      for (const std::string& m : enclosing_modules(producer.scope)) {
        if (!within(node.scope, m) && add_once(module(m).seen_out, u)) {
          module(m).outputs.push_back(tensor_entry(graph, u, out_sharding(plan, u)));
        }
      }
    }
  }
  Json out = Json::object();
  for (const std::string& m : order) {
    out[m] = {{"inputs", modules[m].inputs}, {"outputs", modules[m].outputs}};
  }
  return out;
}

Json placeholders_json(const Graph& graph, const Plan& plan, PlaceholderKind kind) {
  Json out = Json::object();
  for (NodeId v = 0; v < graph.size(); ++v) {
    const Node& node = graph.node(v);
    if (!node.is_placeholder() || node.kind != kind) continue;
    const std::string& name = node.target.empty() ? node.name : node.target;
    out[name] = {{"node", node.name}, {"shape", node.meta().shape},
                 {"placements", dtensor_placements(out_sharding(plan, v))}};
  }
  return out;
}

}  // namespace

std::vector<std::string> dtensor_placements(const Sharding& sharding) {
  std::vector<std::string> out;
  for (MeshDim m = 0; m < sharding.ndim; ++m) {
    Placement p = sharding[m];
    if (p.is_shard()) {
      out.push_back("Shard(" + std::to_string(p.dim()) + ")");
    } else if (p.is_partial()) {
      out.push_back(p.reduce_op() == ReduceOp::kSum
                        ? "Partial()"
                        : "Partial(" + std::string(reduce_op_name(p.reduce_op())) + ")");
    } else {
      out.push_back("Replicate()");
    }
  }
  return out;
}

std::string plan_to_dtensor_json(const Graph& graph, const Plan& plan) {
  Json names = Json::array();
  for (const MeshDimSpec& d : plan.mesh.dims) names.push_back(d.name);
  Json doc = {{"format", "autopar.dtensor_plan"},
              {"version", 1},
              {"graph", graph.name},
              {"plan", plan.label},
              {"mesh", {{"shape", plan.mesh.shape()}, {"dim_names", names}}},
              {"params", placeholders_json(graph, plan, PlaceholderKind::kParam)},
              {"inputs", placeholders_json(graph, plan, PlaceholderKind::kInput)},
              {"modules", modules_json(graph, plan)}};
  return doc.dump(1) + "\n";
}

}  // namespace autopar
