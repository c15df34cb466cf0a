// JSON graph writer, and the suggestion helper the reader uses for unknown op
// names. The reader is in json_reader.cc. Format: docs/graph-format.md.
//
// The writer lays the file out by hand (one node per line) and lets nlohmann
// serialise each node compactly: files stay diff-friendly, and the bytes depend
// only on the graph, which is what makes the writer canonical.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ir/base64.h"
#include "ir/json_io.h"
#include "ir/json_io_internal.h"
#include "ir/printer.h"

namespace autopar {
namespace {

using graph_json::Json;

Json attr_to_json(const AttrValue& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return *i;
  if (const auto* d = std::get_if<double>(&value)) {
    // JSON has no inf/nan; the format spells them as strings.
    if (!std::isfinite(*d)) return format_double(*d);
    return *d;
  }
  if (const auto* b = std::get_if<bool>(&value)) return *b;
  if (const auto* l = std::get_if<std::vector<int64_t>>(&value)) return *l;
  if (const auto* t = std::get_if<std::string>(&value)) return *t;
  if (const auto* f = std::get_if<std::vector<double>>(&value)) {
    Json list = Json::array();
    for (double d : *f) list.push_back(std::isfinite(d) ? Json(d) : Json(format_double(d)));
    return list;
  }
  return std::string(dtype_name(std::get<DType>(value)));
}

Json meta_to_json(const TensorMeta& meta) {
  Json j = Json::object();
  j["shape"] = meta.shape;
  j["dtype"] = std::string(dtype_name(meta.dtype));
  return j;
}

std::string ref_name(const Graph& graph, NodeId id) {
  return id >= 0 && id < graph.size() ? graph.node(id).name : std::string();
}

Json node_to_json(const Graph& graph, const Node& node) {
  Json j = Json::object();
  j["name"] = node.name;
  j["op"] = std::string(node_op_name(node));
  if (node.is_placeholder()) j["kind"] = std::string(placeholder_kind_name(node.kind));
  if (!node.target.empty()) j["target"] = node.target;
  if (!node.scope.empty()) j["scope"] = node.scope;
  if (node.value) j["value"] = base64_encode(*node.value);
  if (!node.inputs.empty()) {
    Json inputs = Json::array();
    for (NodeId input : node.inputs) inputs.push_back(ref_name(graph, input));
    j["inputs"] = std::move(inputs);
  }
  if (!node.arg_inputs.empty()) {
    Json args = Json::array();
    for (const TensorArg& arg : node.arg_inputs) {
      args.push_back(arg.present.empty() ? Json(arg.count) : Json(arg.present));
    }
    j["arg_inputs"] = std::move(args);
  }
  if (!node.attrs.items().empty()) {
    Json attrs = Json::object();
    for (const Attr* attr : attrs_in_schema_order(node)) attrs[attr->name] = attr_to_json(attr->value);
    j["attrs"] = std::move(attrs);
  }
  Json outputs = Json::array();
  for (const TensorMeta& meta : node.outputs) outputs.push_back(meta_to_json(meta));
  j["outputs"] = std::move(outputs);
  return j;
}

Json output_to_json(const Graph& graph, const GraphOutput& output) {
  Json j = Json::object();
  j["node"] = ref_name(graph, output.node);
  j["kind"] = std::string(output_kind_name(output.kind));
  if (output.kind == OutputKind::kGradient) j["param"] = ref_name(graph, output.param);
  if (output.kind == OutputKind::kBuffer) j["buffer"] = ref_name(graph, output.buffer);
  return j;
}

// Compact, and never throwing: invalid UTF-8 in a name is replaced, not fatal.
std::string dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

// "[\n    a,\n    b\n  ]" with one element per line.
template <typename Items, typename ToJson>
void write_list(std::string& out, const Items& items, ToJson to_json) {
  if (items.empty()) {
    out += "[]";
    return;
  }
  out += "[\n";
  for (size_t i = 0; i < items.size(); ++i) {
    out += "    ";
    out += dump(to_json(items[i]));
    out += i + 1 < items.size() ? ",\n" : "\n";
  }
  out += "  ]";
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// "aten.mm.default" -> "mm"; "mm" -> "mm".
std::string_view base_name(std::string_view name) {
  if (name.starts_with("aten.")) name.remove_prefix(5);
  return name.substr(0, name.find('.'));
}

}  // namespace

}  // namespace autopar

namespace autopar::graph_json {

std::vector<std::string_view> similar_op_names(std::string_view name, size_t max_count) {
  std::vector<std::pair<size_t, std::string_view>> scored;
  for (const OpDef& def : all_ops()) {
    size_t score = std::min(edit_distance(name, def.name),
                            edit_distance(base_name(name), base_name(def.name)));
    if (score <= std::max<size_t>(1, base_name(name).size() / 3)) scored.emplace_back(score, def.name);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string_view> names;
  for (size_t i = 0; i < scored.size() && i < max_count; ++i) names.push_back(scored[i].second);
  return names;
}

}  // namespace autopar::graph_json

namespace autopar {

std::string write_graph_json(const Graph& graph) {
  std::string out;
  out.reserve(static_cast<size_t>(graph.size()) * 160 + 256);
  out += fmt::format("{{\n  \"format\": \"{}\",\n  \"version\": {},\n  \"name\": ",
                     graph_json::kGraphFormatName, graph_json::kGraphFormatVersion);
  out += dump(Json(graph.name));
  out += ",\n  \"nodes\": ";
  write_list(out, graph.nodes(), [&](const Node& node) { return node_to_json(graph, node); });
  out += ",\n  \"outputs\": ";
  write_list(out, graph.outputs(),
             [&](const GraphOutput& output) { return output_to_json(graph, output); });
  if (!graph.gradient_links().empty()) {
    out += ",\n  \"gradient_links\": ";
    write_list(out, graph.gradient_links(), [&](const GradientLink& link) {
      return Json{{"value", ref_name(graph, link.value)}, {"grad", ref_name(graph, link.grad)}};
    });
  }
  out += "\n}\n";
  return out;
}

}  // namespace autopar
