#include "pipeline/stages.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

#include "cost/compute_cost.h"

namespace autopar::pipeline {
namespace {

// The value a node reads through input i: getitem picks one output.
Value read_value(const Node& node, size_t i) {
  int32_t output =
      node.op == OpId::kGetItem ? static_cast<int32_t>(node.attrs.get_int("index")) : 0;
  return Value{node.inputs[i], output};
}

bool is_layer(std::string_view unit) { return unit.starts_with("layers."); }

// Unit index per stage boundary: stage k holds units [cuts[k], cuts[k+1]).
Expected<std::vector<size_t>> cut_by_count(const std::vector<std::string>& units, int32_t stages) {
  std::vector<size_t> layer_pos;
  for (size_t u = 0; u < units.size(); ++u) {
    if (is_layer(units[u])) layer_pos.push_back(u);
  }
  size_t layers = layer_pos.size(), s = static_cast<size_t>(stages);
  if (layers < s) {
    return make_error(
        "cannot cut {} layers (units named layers.<i>) into {} stages by count; "
        "use fewer stages or --balance cost",
        layers, stages);
  }
  std::vector<size_t> cuts{0};
  size_t taken = 0;
  for (size_t k = 0; k + 1 < s; ++k) {
    taken += layers / s + (k < layers % s ? 1 : 0);
    cuts.push_back(layer_pos[taken]);  // next stage starts at this layer
  }
  cuts.push_back(units.size());
  return cuts;
}

// Contiguous split minimising the largest stage cost (linear partition DP).
Expected<std::vector<size_t>> cut_by_cost(const std::vector<double>& cost, int32_t stages) {
  size_t u = cost.size(), s = static_cast<size_t>(stages);
  if (u < s) return make_error("cannot cut {} layer units into {} stages", u, stages);
  std::vector<double> prefix(u + 1, 0);
  for (size_t i = 0; i < u; ++i) prefix[i + 1] = prefix[i] + cost[i];
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // best[k][j]: least max cost of the first j units in k stages; from[k][j] the cut.
  std::vector<std::vector<double>> best(s + 1, std::vector<double>(u + 1, kInf));
  std::vector<std::vector<size_t>> from(s + 1, std::vector<size_t>(u + 1, 0));
  best[0][0] = 0;
  for (size_t k = 1; k <= s; ++k) {
    for (size_t j = k; j <= u; ++j) {
      for (size_t i = k - 1; i < j; ++i) {
        double c = std::max(best[k - 1][i], prefix[j] - prefix[i]);
        if (c < best[k][j]) best[k][j] = c, from[k][j] = i;
      }
    }
  }
  std::vector<size_t> cuts(s + 1, u);
  for (size_t k = s; k > 0; --k) cuts[k - 1] = from[k][cuts[k]];
  return cuts;
}

template <typename T>
void add_unique(std::vector<T>& list, const T& item) {
  if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
}

// Fills params, inputs and outputs from the node sets.
Status connect(const Graph& graph, std::vector<Stage>& stages,
               const std::vector<int32_t>& stage_of) {
  for (Stage& st : stages) {
    for (NodeId id : st.nodes) {
      const Node& node = graph.node(id);
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        Value v = read_value(node, i);
        const Node& producer = graph.node(v.node);
        if (producer.is_placeholder()) {
          if (producer.kind == PlaceholderKind::kInput)
            add_unique(st.inputs, v);
          else
            add_unique(st.params, v.node);
          continue;
        }
        int32_t from = stage_of[static_cast<size_t>(v.node)];
        if (from == st.index) continue;
        if (from < 0 || from > st.index) {
          return make_error("node {} in stage {} reads {}, which is {}", node.name, st.index,
                            producer.name, from < 0 ? "not a forward node" : "in a later stage");
        }
        add_unique(st.inputs, v);
        add_unique(stages[static_cast<size_t>(from)].outputs, v);
      }
    }
  }
  for (const GraphOutput& out : graph.outputs()) {
    int32_t s = stage_of[static_cast<size_t>(out.node)];
    if (out.kind == OutputKind::kLoss && s >= 0)
      add_unique(stages[static_cast<size_t>(s)].outputs, {out.node, 0});
  }
  for (Stage& st : stages) {
    std::sort(st.inputs.begin(), st.inputs.end());
    std::sort(st.outputs.begin(), st.outputs.end());
    std::sort(st.params.begin(), st.params.end());
  }
  return ok_status();
}

// The cut of a given stage list: the stages' units, concatenated, must be the
// graph's units in order.
Expected<std::vector<size_t>> cut_as_given(const std::vector<std::string>& units,
                                           const std::vector<std::vector<std::string>>& given,
                                           int32_t num_stages) {
  if (static_cast<int32_t>(given.size()) != num_stages) {
    return make_error("the given cut has {} stages, not {}", given.size(), num_stages);
  }
  std::vector<size_t> cuts{0};
  size_t next = 0;
  for (size_t k = 0; k < given.size(); ++k) {
    if (given[k].empty()) return make_error("stage {} of the given cut has no units", k);
    for (const std::string& unit : given[k]) {
      if (next >= units.size() || units[next] != unit) {
        return make_error("stage {} of the given cut names unit {} where this graph has {}", k, unit,
                          next < units.size() ? units[next] : std::string("no more units"));
      }
      ++next;
    }
    cuts.push_back(next);
  }
  if (next != units.size()) {
    return make_error("the given cut ends at unit {} of {}: {} is in no stage", next, units.size(), units[next]);
  }
  return cuts;
}

}  // namespace

std::string layer_unit(std::string_view scope) {
  size_t dot = scope.find('.');
  std::string_view head = scope.substr(0, dot);
  if (head == "layers" && dot != std::string_view::npos) {
    size_t next = scope.find('.', dot + 1);
    return std::string(scope.substr(0, next));
  }
  return std::string(head);
}

std::vector<NodeId> forward_nodes(const Graph& graph) {
  std::vector<bool> from_tangent(static_cast<size_t>(graph.size()), false);
  std::vector<NodeId> forward;
  for (NodeId id = 0; id < graph.size(); ++id) {
    const Node& n = graph.node(id);
    bool tangent = n.is_placeholder() && n.kind == PlaceholderKind::kTangent;
    for (NodeId in : n.inputs) tangent = tangent || from_tangent[static_cast<size_t>(in)];
    from_tangent[static_cast<size_t>(id)] = tangent;
    if (n.is_placeholder()) continue;
    if (tangent) break;
    forward.push_back(id);
  }
  return forward;
}

Expected<std::vector<Stage>> split_stages(const Graph& graph, const StageOptions& o) {
  if (o.num_stages < 1 || o.num_ranks < 1 || o.num_stages % o.num_ranks != 0) {
    return make_error("stages must be a positive multiple of ranks: {} stages, {} ranks",
                      o.num_stages, o.num_ranks);
  }
  std::vector<NodeId> fwd = forward_nodes(graph);
  std::vector<std::string> units;
  std::vector<size_t> unit_of;  // per forward node
  std::map<std::string, size_t> unit_index;
  for (NodeId id : fwd) {
    std::string unit = layer_unit(graph.node(id).scope);
    if (unit.empty() && !units.empty()) unit = units[unit_of.empty() ? 0 : unit_of.back()];
    auto [it, inserted] = unit_index.emplace(unit, units.size());
    if (inserted) units.push_back(unit);
    unit_of.push_back(it->second);
  }
  std::vector<double> unit_cost(units.size(), 0);
  if (o.balance == StageBalance::kCost) {
    if (!o.hardware) return make_error("cost-balanced stages need a hardware profile");
    for (size_t i = 0; i < fwd.size(); ++i) {
      unit_cost[unit_of[i]] += node_compute_time(graph, fwd[i], *o.hardware);
    }
  }
  Expected<std::vector<size_t>> cuts = o.balance == StageBalance::kCount  ? cut_by_count(units, o.num_stages)
                                       : o.balance == StageBalance::kGiven ? cut_as_given(units, o.given_units, o.num_stages)
                                                                           : cut_by_cost(unit_cost, o.num_stages);
  if (!cuts) return cuts.error();
  std::vector<Stage> stages(static_cast<size_t>(o.num_stages));
  std::vector<int32_t> stage_of_unit(units.size());
  for (size_t k = 0; k < stages.size(); ++k) {
    stages[k].index = static_cast<StageIdx>(k);
    for (size_t u = (*cuts)[k]; u < (*cuts)[k + 1]; ++u) {
      stages[k].units.push_back(units[u]);
      stages[k].compute_s += unit_cost[u];
      stage_of_unit[u] = static_cast<int32_t>(k);
    }
  }
  std::vector<int32_t> stage_of(static_cast<size_t>(graph.size()), -1);
  for (size_t i = 0; i < fwd.size(); ++i) {
    int32_t s = stage_of_unit[unit_of[i]];
    stage_of[static_cast<size_t>(fwd[i])] = s;
    stages[static_cast<size_t>(s)].nodes.push_back(fwd[i]);
  }
  if (Status ok = connect(graph, stages, stage_of); !ok) return ok.error();
  return stages;
}

std::string describe_stages(const Graph& graph, const std::vector<Stage>& stages) {
  auto names = [&](const std::vector<Value>& values) {
    std::vector<std::string> out;
    for (const Value& v : values) {
      out.push_back(graph.node(v.node).name + (v.output ? fmt::format("[{}]", v.output) : ""));
    }
    return fmt::format("{}", fmt::join(out, ", "));
  };
  std::string text;
  for (const Stage& st : stages) {
    std::string units = st.units.size() > 4
                            ? fmt::format("{} .. {}", st.units.front(), st.units.back())
                            : fmt::format("{}", fmt::join(st.units, ", "));
    text += fmt::format("stage {}: {} ({} nodes, in: {}; out: {})\n", st.index, units,
                        st.nodes.size(), names(st.inputs), names(st.outputs));
  }
  return text;
}

}  // namespace autopar::pipeline
