#include "ir/printer.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace autopar {
namespace {

std::string node_ref(const Graph& graph, NodeId id) {
  if (id < 0 || id >= graph.size()) return fmt::format("%<invalid #{}>", id);
  return "%" + graph.node(id).name;
}

std::string metas_to_string(const std::vector<TensorMeta>& metas) {
  if (metas.size() == 1) return to_string(metas.front());
  std::string out = "(";
  for (size_t i = 0; i < metas.size(); ++i) {
    if (i > 0) out += ", ";
    out += to_string(metas[i]);
  }
  return out + ")";
}

// "(target=layers.0.w)" or "()".
std::string placeholder_args(const Node& node) {
  if (node.target.empty()) return "()";
  return "(target=" + node.target + ")";
}

std::string call_args(const Graph& graph, const Node& node) {
  std::string out = "(";
  bool first = true;
  for (NodeId input : node.inputs) {
    out += first ? "" : ", ";
    out += node_ref(graph, input);
    first = false;
  }
  for (const Attr* attr : attrs_in_schema_order(node)) {
    out += first ? "" : ", ";
    out += attr->name + "=" + format_attr_value(attr->value);
    first = false;
  }
  return out + ")";
}

}  // namespace

std::string format_double(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  // Shortest form that reads back to the same double; keep a float looking
  // like a float so 2.0 and the int 2 print differently.
  std::string out = fmt::format("{}", value);
  if (out.find_first_not_of("-0123456789") == std::string::npos) out += ".0";
  return out;
}

std::string format_attr_value(const AttrValue& value) {
  if (const auto* d = std::get_if<double>(&value)) return format_double(*d);
  if (const auto* f = std::get_if<std::vector<double>>(&value)) {
    std::string out = "[";
    for (size_t i = 0; i < f->size(); ++i) out += (i > 0 ? ", " : "") + format_double((*f)[i]);
    return out + "]";
  }
  return attr_value_to_string(value);
}

std::vector<const Attr*> attrs_in_schema_order(const Node& node) {
  const std::vector<Attr>& items = node.attrs.items();
  std::vector<const Attr*> ordered;
  ordered.reserve(items.size());
  for (const AttrSpec& spec : op_def(node.op).attrs) {
    for (const Attr& attr : items) {
      if (attr.name == spec.name) ordered.push_back(&attr);
    }
  }
  for (const Attr& attr : items) {
    if (std::find(ordered.begin(), ordered.end(), &attr) == ordered.end()) {
      ordered.push_back(&attr);
    }
  }
  return ordered;
}

std::string format_node(const Graph& graph, NodeId id, const PrintOptions& options) {
  const Node& node = graph.node(id);
  std::string line = "%" + node.name + " = ";
  if (node.is_placeholder()) {
    line += fmt::format("placeholder[{}]", placeholder_kind_name(node.kind));
    line += placeholder_args(node);
  } else {
    line += node_op_name(node);
    line += call_args(graph, node);
  }
  line += "  # " + metas_to_string(node.outputs);
  if (options.show_scope && !node.scope.empty()) line += "  @" + node.scope;
  return line;
}

std::string format_outputs(const Graph& graph) {
  std::string line = "return (";
  bool first = true;
  for (const GraphOutput& output : graph.outputs()) {
    line += first ? "" : ", ";
    first = false;
    if (output.kind == OutputKind::kLoss) {
      line += "loss=";
    } else if (output.kind == OutputKind::kGradient) {
      line += "grad(" + node_ref(graph, output.param) + ")=";
    } else {
      line += "buffer(" + node_ref(graph, output.buffer) + ")=";
    }
    line += node_ref(graph, output.node);
  }
  return line + ")";
}

std::string print_graph(const Graph& graph, const PrintOptions& options) {
  std::string out;
  for (NodeId id = 0; id < graph.size(); ++id) {
    out += format_node(graph, id, options);
    out += '\n';
  }
  out += format_outputs(graph);
  out += '\n';
  return out;
}

}  // namespace autopar
