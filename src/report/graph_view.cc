#include "report/graph_view.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "planner/problem_builder.h"

namespace autopar::report {
namespace {

// Groups in order of their first computing node, so the page reads like the
// step: embedding, layers.0, ..., loss. Groups holding only placeholders
// ("inputs") come first, in order of appearance.
void order_groups(const Graph& graph, GraphView& view) {
  std::map<std::string, GroupIdx> index;
  std::vector<ViewGroup> groups;
  std::vector<NodeId> first_compute;
  for (NodeId v = 0; v < graph.size(); ++v) {
    const Node& node = graph.node(v);
    auto [it, inserted] = index.emplace(node_group_name(node), static_cast<GroupIdx>(groups.size()));
    if (inserted) {
      ViewGroup group;
      group.name = it->first;
      groups.push_back(std::move(group));
      first_compute.push_back(-1);
    }
    size_t g = static_cast<size_t>(it->second);
    groups[g].nodes.push_back(v);
    if (!node.is_placeholder() && first_compute[g] < 0) first_compute[g] = v;
    view.group_of[static_cast<size_t>(v)] = it->second;
  }
  std::vector<GroupIdx> order(groups.size());
  for (size_t g = 0; g < order.size(); ++g) order[g] = static_cast<GroupIdx>(g);
  std::stable_sort(order.begin(), order.end(), [&](GroupIdx a, GroupIdx b) {
    return first_compute[static_cast<size_t>(a)] < first_compute[static_cast<size_t>(b)];
  });
  std::vector<GroupIdx> new_index(groups.size());
  for (size_t i = 0; i < order.size(); ++i) {
    new_index[static_cast<size_t>(order[i])] = static_cast<GroupIdx>(i);
    view.groups.push_back(std::move(groups[static_cast<size_t>(order[i])]));
  }
  for (GroupIdx& g : view.group_of) g = new_index[static_cast<size_t>(g)];
}

// Row: longest path over edges inside the group; column: order within the row.
void layout_groups(const Graph& graph, GraphView& view) {
  for (ViewGroup& group : view.groups) {
    std::vector<int32_t> row_fill;
    for (NodeId v : group.nodes) {
      int32_t row = 0;
      for (NodeId u : graph.node(v).inputs) {
        if (view.group_of[static_cast<size_t>(u)] == view.group_of[static_cast<size_t>(v)]) {
          row = std::max(row, view.row[static_cast<size_t>(u)] + 1);
        }
      }
      if (static_cast<size_t>(row) >= row_fill.size()) row_fill.resize(static_cast<size_t>(row) + 1, 0);
      view.row[static_cast<size_t>(v)] = row;
      view.column[static_cast<size_t>(v)] = row_fill[static_cast<size_t>(row)]++;
    }
    group.rows = static_cast<int32_t>(row_fill.size());
    group.columns = row_fill.empty() ? 0 : *std::max_element(row_fill.begin(), row_fill.end());
  }
}

void add_edges(const Graph& graph, const Plan& plan, GraphView& view) {
  // Redistributions by (consumer, operand); pairings keyed by operand -1.
  std::map<std::pair<NodeId, int32_t>, const PlannedRedistribution*> redist;
  for (const PlannedRedistribution& r : plan.redistributions) redist[{r.consumer, r.input}] = &r;
  auto add = [&](NodeId from, NodeId to, int32_t input) {
    ViewEdge edge;
    edge.from = from;
    edge.to = to;
    edge.input = input;
    if (auto it = redist.find({to, input}); it != redist.end() && it->second->producer == from) {
      edge.comm_s = it->second->plan.time_s;
      edge.label = collective_label(it->second->plan, plan.mesh);
      size_t steps = it->second->plan.steps.size();
      view.comm_in_s[static_cast<size_t>(to)] += edge.comm_s;
      ViewGroup& group = view.groups[static_cast<size_t>(view.group_of[static_cast<size_t>(to)])];
      group.comm_s += edge.comm_s;
      group.collectives += static_cast<int32_t>(steps);
    }
    view.edges.push_back(std::move(edge));
  };
  for (NodeId v = 0; v < graph.size(); ++v) {
    const Node& node = graph.node(v);
    for (size_t i = 0; i < node.inputs.size(); ++i) add(node.inputs[i], v, static_cast<int32_t>(i));
  }
  for (const GraphOutput& out : graph.outputs()) {
    if (out.kind == OutputKind::kGradient) add(out.node, out.param, -1);
  }
}

}  // namespace

std::string layer_group_name(std::string_view scope) {
  size_t dot = scope.find('.');
  std::string_view head = scope.substr(0, dot);
  if (head == "layers" && dot != std::string_view::npos) {
    return std::string(scope.substr(0, scope.find('.', dot + 1)));
  }
  return std::string(head);
}

std::string node_group_name(const Node& node) {
  if (!node.scope.empty()) return layer_group_name(node.scope);
  return node.is_placeholder() ? "inputs" : "top";
}

std::string collective_label(const RedistPlan& plan, const DeviceMesh& mesh) {
  std::string label;
  for (const RedistStep& step : plan.steps) {
    if (!label.empty()) label += " + ";
    label += fmt::format("{}({})", collective_name(step.collective),
                         mesh.dims[static_cast<size_t>(step.mesh_dim)].name);
  }
  return label;
}

GraphView build_graph_view(const Graph& graph, const Plan& plan) {
  size_t n = static_cast<size_t>(graph.size());
  GraphView view;
  view.group_of.assign(n, 0);
  view.row.assign(n, 0);
  view.column.assign(n, 0);
  view.bytes.assign(n, 0);
  view.placement.assign(n, "");
  view.comm_in_s.assign(n, 0);
  order_groups(graph, view);
  layout_groups(graph, view);
  for (NodeId v = 0; v < graph.size(); ++v) {
    const NodeStrategies& ns = plan.strategies.nodes[static_cast<size_t>(v)];
    StrategyIdx s = plan.choice[static_cast<size_t>(v)];
    double bytes = local_output_bytes(graph, v, ns, s, plan.mesh);
    view.bytes[static_cast<size_t>(v)] = bytes;
    view.placement[static_cast<size_t>(v)] = ns.num_outputs > 0 ? to_string(ns.output(s, 0)) : "";
    ViewGroup& group = view.groups[static_cast<size_t>(view.group_of[static_cast<size_t>(v)])];
    group.activation_bytes += bytes;
    group.max_node_bytes = std::max(group.max_node_bytes, bytes);
  }
  add_edges(graph, plan, view);
  return view;
}

}  // namespace autopar::report
