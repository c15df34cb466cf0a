#include "runtime/plan_reader.h"

#include <cstdint>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "memory/recompute.h"
#include "planner/plan_output.h"

namespace autopar {
namespace {

using Json = nlohmann::json;

// Every field is checked for its type before it is read: nlohmann throws on a
// wrong type, and a plan file is user input (fuzz/plan_fuzz.cc).
Expected<Json> parse(const std::string& text) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return make_error("the plan is not a JSON object");
  auto format = j.find("format");
  if (format == j.end() || *format != "autopar.plan") {
    return make_error("not an autopar plan (format is not \"autopar.plan\")");
  }
  return j;
}

std::string preview(const Json& value) {
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  return text.size() > 40 ? text.substr(0, 37) + "..." : text;
}

// j[key] as a string (j an object); `fallback` when absent.
Expected<std::string> text_field(const Json& j, const char* key, const std::string& fallback,
                                 std::string_view where) {
  auto it = j.find(key);
  if (it == j.end()) return fallback;
  if (!it->is_string()) {
    return make_error("the plan's {}\"{}\" must be a string, got {}", where, key, preview(*it));
  }
  return it->get<std::string>();
}

// j[key] when it is an array (j an object); absent: an empty one.
Expected<const Json*> list_field(const Json& j, const char* key, std::string_view where) {
  static const Json kEmpty = Json::array();
  auto it = j.find(key);
  if (it == j.end()) return &kEmpty;
  if (!it->is_array()) {
    return make_error("the plan's {}\"{}\" must be a list, got {}", where, key, preview(*it));
  }
  return &*it;
}

// A placement list (["S(0)", "R"]) as one string ("S(0)R").
Expected<std::string> joined(const Json& list, std::string_view where) {
  if (!list.is_array()) return make_error("the plan's {} must be a list of placements, got {}", where, preview(list));
  std::string out;
  for (const Json& p : list) {
    if (!p.is_string()) return make_error("the plan's {} must be a list of placements, got {}", where, preview(list));
    out += p.get<std::string>();
  }
  return out;
}

// A list of int64 (a shape); where names it.
Expected<Shape> int_list(const Json& list, std::string_view where) {
  if (!list.is_array()) return make_error("the plan's {} must be a list of integers, got {}", where, preview(list));
  Shape out;
  for (const Json& d : list) {
    if (!d.is_number_integer() || (d.is_number_unsigned() && d.get<uint64_t>() > INT64_MAX)) {
      return make_error("the plan's {} must be a list of integers, got {}", where, preview(list));
    }
    out.push_back(d.get<int64_t>());
  }
  return out;
}

std::string shape_text(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

// The node's op, shape and dtype must be as planned.
Status check_node(const Json& j, const Node& node) {
  std::string where = fmt::format("node {}: ", node.name);
  std::string op(node_op_name(node));
  Expected<std::string> plan_op = text_field(j, "op", "?", where);
  if (!plan_op) return plan_op.error();
  if (*plan_op != op) {
    return make_error("node {} is {} in the graph but {} in the plan: the graph changed since "
                      "planning",
                      node.name, op, *plan_op);
  }
  Expected<Shape> shape = j.contains("shape") ? int_list(j["shape"], where + "\"shape\"") : Shape{};
  if (!shape) return shape.error();
  Expected<std::string> dtype = text_field(j, "dtype", "?", where);
  if (!dtype) return dtype.error();
  if (*shape != node.meta().shape || *dtype != dtype_name(node.meta().dtype)) {
    return make_error("node {} is {} {} in the graph but {} {} in the plan: the graph changed "
                      "since planning",
                      node.name, dtype_name(node.meta().dtype), shape_text(node.meta().shape),
                      *dtype, shape_text(*shape));
  }
  if (!j.contains("inputs") || !j["inputs"].is_array() || j["inputs"].size() != node.inputs.size()) {
    return make_error("node {} has {} inputs in the graph but not in the plan", node.name,
                      node.inputs.size());
  }
  return ok_status();
}

// The placements the plan gives the node's outputs: every output's from
// "output_placements" when present, else output 0's from "placement" (plans
// written before multi-output nodes recorded all of theirs).
Expected<std::vector<std::string>> wanted_outputs(const Json& j, const Node& node) {
  if (!j.contains("output_placements")) {
    if (!j.contains("placement")) return make_error("the plan's node {} has no \"placement\"", node.name);
    Expected<std::string> placement = joined(j["placement"], fmt::format("node {} \"placement\"", node.name));
    if (!placement) return placement.error();
    return std::vector<std::string>{*placement};
  }
  const Json& outs = j["output_placements"];
  if (!outs.is_array() || outs.size() != node.outputs.size()) {
    return make_error("node {} has {} outputs in the graph but {} output_placements in the plan: "
                      "the graph changed since planning",
                      node.name, node.outputs.size(), outs.is_array() ? outs.size() : 0);
  }
  std::vector<std::string> want;
  for (const Json& o : outs) {
    Expected<std::string> placement = joined(o, fmt::format("node {} \"output_placements\"", node.name));
    if (!placement) return placement.error();
    want.push_back(std::move(*placement));
  }
  return want;
}

// The first strategy whose outputs and inputs print as the plan's placements.
Expected<StrategyIdx> match_strategy(const Json& j, const Node& node, const NodeStrategies& ns) {
  Expected<std::vector<std::string>> want_out = wanted_outputs(j, node);
  if (!want_out) return want_out.error();
  std::vector<std::string> want_in;
  for (const Json& in : j["inputs"]) {  // an array: check_node saw it
    std::string where = fmt::format("node {} input placement", node.name);
    if (!in.is_object() || !in.contains("placement")) {
      return make_error("the plan's {} is missing in {}", where, preview(in));
    }
    Expected<std::string> placement = joined(in["placement"], where);
    if (!placement) return placement.error();
    want_in.push_back(std::move(*placement));
  }
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
  for (auto [key, out] : {std::pair{"graph", &f.graph}, std::pair{"label", &f.label},
                          std::pair{"hardware", &f.hardware}, std::pair{"optimizer", &f.optimizer}}) {
    Expected<std::string> value = text_field(*j, key, "", "");
    if (!value) return value.error();
    *out = std::move(*value);
  }
  if (!j->contains("mesh") || !(*j)["mesh"].is_object() || !(*j)["mesh"].contains("shape")) {
    return make_error("the plan has no mesh shape");
  }
  const Json& mesh = (*j)["mesh"];
  Expected<Shape> shape = int_list(mesh["shape"], "mesh \"shape\"");
  if (!shape) return shape.error();
  f.mesh_shape = std::move(*shape);
  Expected<const Json*> dims = list_field(mesh, "dims", "mesh ");
  if (!dims) return dims.error();
  for (const Json& d : **dims) {
    if (!d.is_object()) return make_error("the plan's mesh dims must be objects, got {}", preview(d));
    Expected<std::string> name = text_field(d, "name", "", "mesh dim ");
    if (!name) return name.error();
    f.mesh_names.push_back(std::move(*name));
  }
  return f;
}

namespace {

// The plan's recompute marks (memory/recompute.h), checked against the
// graph's candidates: one kind only; a one-level mark on a candidate and never
// on both ends of an exclusive pair; layer marks on every re-run node of a
// layer or on none of it.
Status read_recompute_marks(const Graph& graph, const std::vector<std::pair<NodeId, char>>& marks, Plan& plan) {
  if (marks.empty()) return ok_status();
  plan.recompute.assign(static_cast<size_t>(graph.size()), 0);
  for (auto [v, mark] : marks) {
    if (mark != marks.front().second) {
      return make_error("the plan mixes \"recompute\": true (node {}) and \"layer\" (node {}): re-plan with "
                        "--recompute auto or --recompute full",
                        graph.node(marks.front().first).name, graph.node(v).name);
    }
    plan.recompute[static_cast<size_t>(v)] = mark;
  }
  const RecomputeCandidates candidates = recompute_candidates_for(graph, plan.recompute);
  for (auto [v, mark] : marks) {
    if (!candidates.is_candidate(v)) {
      return make_error("the plan recomputes node {}, which cannot be recomputed in this graph (not an "
                        "activation the forward makes and the backward reads, or a re-run would read a "
                        "value already freed): re-plan with --recompute {}",
                        graph.node(v).name, mark == kLayerMark ? "full" : "auto");
    }
  }
  for (auto [u, v] : candidates.exclusive) {
    if (plan.recompute[static_cast<size_t>(u)] && plan.recompute[static_cast<size_t>(v)]) {
      return make_error("the plan recomputes both {} and {}, but {} reads {} after it is dropped: re-plan "
                        "with --recompute auto",
                        graph.node(u).name, graph.node(v).name, graph.node(v).name, graph.node(u).name);
    }
  }
  if (candidates.layer.empty()) return ok_status();
  std::vector<NodeId> marked(candidates.layers.size(), kNoNode), missing(candidates.layers.size(), kNoNode);
  for (NodeId v = 0; v < graph.size(); ++v) {
    if (!candidates.is_candidate(v)) continue;
    auto l = static_cast<size_t>(candidates.layer[static_cast<size_t>(v)]);
    (plan.recompute[static_cast<size_t>(v)] ? marked[l] : missing[l]) = v;
  }
  for (size_t l = 0; l < marked.size(); ++l) {
    if (marked[l] == kNoNode || missing[l] == kNoNode) continue;
    return make_error("the plan re-runs part of layer {} ({}) but not {}: a layer is recomputed whole; re-plan "
                      "with --recompute full",
                      candidates.layers[l], graph.node(marked[l]).name, graph.node(missing[l]).name);
  }
  return ok_status();
}

}  // namespace

Expected<Plan> read_plan(const std::string& json_text, const Graph& graph, const DeviceMesh& mesh,
                         const HardwareProfile& hw, int64_t ranks) {
  Expected<Json> j = parse(json_text);
  if (!j) return j.error();
  if (mesh.num_devices() != ranks) {
    return make_error("the plan's mesh {} has {} devices but the job has {} ranks",
                      mesh_shape_string(mesh), mesh.num_devices(), ranks);
  }
  if (!j->contains("nodes")) return make_error("the plan has no placements (no plan fitted)");
  Expected<const Json*> nodes = list_field(*j, "nodes", "");
  if (!nodes) return nodes.error();
  Expected<std::string> label = text_field(*j, "label", "file", "");
  if (!label) return label.error();
  Expected<std::string> optimizer = text_field(*j, "optimizer", "adamw", "");
  if (!optimizer) return optimizer.error();
  Expected<StrategyGraph> sg = build_strategy_graph(graph, mesh, hw);
  if (!sg) return sg.error();
  Plan plan;
  plan.graph_name = graph.name;
  plan.label = std::move(*label);
  plan.mesh = mesh;
  plan.hardware = hw.name;
  plan.optimizer = parse_optimizer(*optimizer).value_or(Optimizer::kAdamW);
  plan.strategies = std::move(*sg);
  add_update_times(graph, plan.strategies, hw, plan.optimizer);
  plan.choice.assign(static_cast<size_t>(graph.size()), -1);
  std::vector<std::pair<NodeId, char>> recompute;
  for (const Json& n : **nodes) {
    if (!n.is_object()) return make_error("the plan's nodes must be objects, got {}", preview(n));
    Expected<std::string> name_field = text_field(n, "name", "", "node ");
    if (!name_field) return name_field.error();
    const std::string& name = *name_field;
    std::optional<NodeId> v = graph.find(name);
    if (!v) return make_error("the plan names node {} which the graph does not have", name);
    if (Status s = check_node(n, graph.node(*v)); !s) return s.error();
    Expected<StrategyIdx> s = match_strategy(n, graph.node(*v), plan.strategies.nodes[static_cast<size_t>(*v)]);
    if (!s) return s.error();
    plan.choice[static_cast<size_t>(*v)] = *s;
    if (n.contains("recompute")) {
      const Json& mark = n["recompute"];
      if (!mark.is_boolean() && mark != "layer") {
        return make_error("the plan's node {} \"recompute\" must be true, false or \"layer\", got {}", name,
                          preview(mark));
      }
      if (mark == "layer") recompute.emplace_back(*v, kLayerMark);
      else if (mark.get<bool>()) recompute.emplace_back(*v, 1);
    }
  }
  if (Status s = read_recompute_marks(graph, recompute, plan); !s) return s.error();
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
