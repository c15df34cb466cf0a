// The page's graph data: compact arrays rather than objects, since a
// Llama3-70B graph has ~17k nodes and every byte is in the HTML file.
//   nodes:  [name, op, group, row, column, bytes, placement, meta, comm_in_s]
//   edges:  [from, to, label index or -1, comm_s]
//   groups: {name, rows, cols, bytes, max, comm, coll, nodes: [node ids]}
#include <map>

#include <fmt/format.h>

#include "report/html_report.h"
#include "report/html_text.h"

namespace autopar::report {
namespace {

// Doubles as JSON numbers, short but exact enough for sizes and times.
std::string number(double value) { return fmt::format("{:.6g}", value); }

std::string nodes_json(const Graph& graph, const GraphView& view) {
  std::string out = "[";
  for (NodeId v = 0; v < graph.size(); ++v) {
    const Node& node = graph.node(v);
    size_t i = static_cast<size_t>(v);
    std::string meta = node.outputs.empty() ? "" : to_string(node.meta());
    out += fmt::format("{}[{},{},{},{},{},{},{},{},{}]", v == 0 ? "" : ",\n",
                       json_string(node.name), json_string(node_op_name(node)), view.group_of[i],
                       view.row[i], view.column[i], number(view.bytes[i]),
                       json_string(view.placement[i]), json_string(meta),
                       number(view.comm_in_s[i]));
  }
  return out + "]";
}

std::string edges_json(const GraphView& view, std::vector<std::string>& labels) {
  std::map<std::string, int> label_index;
  std::string out = "[";
  bool first = true;
  for (const ViewEdge& e : view.edges) {
    int label = -1;
    if (!e.label.empty()) {
      auto [it, inserted] = label_index.emplace(e.label, static_cast<int>(labels.size()));
      if (inserted) labels.push_back(e.label);
      label = it->second;
    }
    out += fmt::format("{}[{},{},{},{}]", first ? "" : ",", e.from, e.to, label, number(e.comm_s));
    first = false;
  }
  return out + "]";
}

std::string groups_json(const GraphView& view) {
  std::string out = "[";
  for (size_t g = 0; g < view.groups.size(); ++g) {
    const ViewGroup& group = view.groups[g];
    std::string ids;
    for (NodeId v : group.nodes) ids += (ids.empty() ? "" : ",") + std::to_string(v);
    out += fmt::format(
        "{}{{\"name\":{},\"rows\":{},\"cols\":{},\"bytes\":{},\"max\":{},\"comm\":{},\"coll\":{},"
        "\"nodes\":[{}]}}",
        g == 0 ? "" : ",\n", json_string(group.name), group.rows, group.columns,
        number(group.activation_bytes), number(group.max_node_bytes), number(group.comm_s),
        group.collectives, ids);
  }
  return out + "]";
}

}  // namespace

std::string graph_view_json(const Graph& graph, const GraphView& view) {
  double max_bytes = 0;
  for (double b : view.bytes) max_bytes = std::max(max_bytes, b);
  std::vector<std::string> labels;
  std::string edges = edges_json(view, labels);
  std::string label_list;
  for (const std::string& l : labels) label_list += (label_list.empty() ? "" : ",") + json_string(l);
  return fmt::format("{{\"max_bytes\":{},\n\"groups\":{},\n\"labels\":[{}],\n\"nodes\":{},\n"
                     "\"edges\":{}}}",
                     number(max_bytes), groups_json(view), label_list, nodes_json(graph, view),
                     edges);
}

}  // namespace autopar::report
