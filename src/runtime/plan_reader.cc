#include "runtime/plan_reader.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "planner/plan_output.h"

namespace autopar {
namespace {

using Json = nlohmann::json;

Expected<Json> parse(const std::string& text) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return make_error("the plan is not a JSON object");
  if (j.value("format", "") != "autopar.plan") {
    return make_error("not an autopar plan (format is not \"autopar.plan\")");
  }
  return j;
}

std::string joined(const Json& list) {
  std::string out;
  for (const Json& p : list) out += p.get<std::string>();
  return out;
}

std::string shape_text(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

// The node's op, shape and dtype must be as planned.
Status check_node(const Json& j, const Node& node) {
  std::string op(node_op_name(node));
  if (j.value("op", "") != op) {
    return make_error("node {} is {} in the graph but {} in the plan: the graph changed since "
                      "planning",
                      node.name, op, j.value("op", "?"));
  }
  Shape shape = j.value("shape", Shape{});
  if (shape != node.meta().shape || j.value("dtype", "") != dtype_name(node.meta().dtype)) {
    return make_error("node {} is {} {} in the graph but {} {} in the plan: the graph changed "
                      "since planning",
                      node.name, dtype_name(node.meta().dtype), shape_text(node.meta().shape),
                      j.value("dtype", "?"), shape_text(shape));
  }
  if (!j.contains("inputs") || j["inputs"].size() != node.inputs.size()) {
    return make_error("node {} has {} inputs in the graph but not in the plan", node.name,
                      node.inputs.size());
  }
  return ok_status();
}

// The placements the plan gives the node's outputs: every output's from
// "output_placements" when present, else output 0's from "placement" (plans
// written before multi-output nodes recorded all of theirs).
Expected<std::vector<std::string>> wanted_outputs(const Json& j, const Node& node) {
  if (!j.contains("output_placements")) return std::vector<std::string>{joined(j["placement"])};
  const Json& outs = j["output_placements"];
  if (!outs.is_array() || outs.size() != node.outputs.size()) {
    return make_error("node {} has {} outputs in the graph but {} output_placements in the plan: "
                      "the graph changed since planning",
                      node.name, node.outputs.size(), outs.is_array() ? outs.size() : 0);
  }
  std::vector<std::string> want;
  for (const Json& o : outs) want.push_back(joined(o));
  return want;
}

// The first strategy whose outputs and inputs print as the plan's placements.
Expected<StrategyIdx> match_strategy(const Json& j, const Node& node, const NodeStrategies& ns) {
  Expected<std::vector<std::string>> want_out = wanted_outputs(j, node);
  if (!want_out) return want_out.error();
  std::vector<std::string> want_in;
  for (const Json& in : j["inputs"]) want_in.push_back(joined(in["placement"]));
  for (StrategyIdx s = 0; s < ns.size(); ++s) {
    bool same = true;
    for (size_t o = 0; o < want_out->size() && same; ++o) {
      same = to_string(ns.output(s, static_cast<int>(o))) == (*want_out)[o];
    }
    for (size_t i = 0; i < want_in.size() && same; ++i) {
      same = to_string(ns.input(s, static_cast<int>(i))) == want_in[i];
    }
    if (same) return s;
  }
  return make_error("node {}: no strategy has the plan's placements ({}) -> {}", node.name,
                    fmt::join(want_in, ", "), fmt::join(*want_out, ", "));
}

}  // namespace

Expected<PlanFile> read_plan_header(const std::string& json_text) {
  Expected<Json> j = parse(json_text);
  if (!j) return j.error();
  PlanFile f;
  f.graph = j->value("graph", "");
  f.label = j->value("label", "");
  f.hardware = j->value("hardware", "");
  f.optimizer = j->value("optimizer", "");
  if (!j->contains("mesh") || !(*j)["mesh"].contains("shape")) {
    return make_error("the plan has no mesh shape");
  }
  f.mesh_shape = (*j)["mesh"]["shape"].get<std::vector<int64_t>>();
  for (const Json& d : (*j)["mesh"].value("dims", Json::array())) {
    f.mesh_names.push_back(d.value("name", ""));
  }
  return f;
}

Expected<Plan> read_plan(const std::string& json_text, const Graph& graph, const DeviceMesh& mesh,
                         const HardwareProfile& hw, int64_t ranks) {
  Expected<Json> j = parse(json_text);
  if (!j) return j.error();
  if (mesh.num_devices() != ranks) {
    return make_error("the plan's mesh {} has {} devices but the job has {} ranks",
                      mesh_shape_string(mesh), mesh.num_devices(), ranks);
  }
  if (!j->contains("nodes")) return make_error("the plan has no placements (no plan fitted)");
  const Json& nodes = (*j)["nodes"];
  Expected<StrategyGraph> sg = build_strategy_graph(graph, mesh, hw);
  if (!sg) return sg.error();
  Plan plan;
  plan.graph_name = graph.name;
  plan.label = j->value("label", "file");
  plan.mesh = mesh;
  plan.hardware = hw.name;
  plan.optimizer = parse_optimizer(j->value("optimizer", "adamw")).value_or(Optimizer::kAdamW);
  plan.strategies = std::move(*sg);
  add_update_times(graph, plan.strategies, hw, plan.optimizer);
  plan.choice.assign(static_cast<size_t>(graph.size()), -1);
  for (const Json& n : nodes) {
    std::string name = n.value("name", "");
    std::optional<NodeId> v = graph.find(name);
    if (!v) return make_error("the plan names node {} which the graph does not have", name);
    if (Status s = check_node(n, graph.node(*v)); !s) return s.error();
    Expected<StrategyIdx> s = match_strategy(n, graph.node(*v), plan.strategies.nodes[static_cast<size_t>(*v)]);
    if (!s) return s.error();
    plan.choice[static_cast<size_t>(*v)] = *s;
  }
  for (NodeId v = 0; v < graph.size(); ++v) {
    if (plan.choice[static_cast<size_t>(v)] < 0) {
      return make_error("graph node {} is not in the plan: the graph changed since planning",
                        graph.node(v).name);
    }
  }
  plan.summary.memory_budget = hw.memory_bytes;
  evaluate_plan(graph, plan);
  return plan;
}

}  // namespace autopar
