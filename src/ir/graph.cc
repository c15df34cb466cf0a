#include "ir/graph.h"

#include <array>

#include "ir/aten_schema.h"

namespace autopar {
namespace {

constexpr std::array<std::string_view, 6> kPlaceholderKindNames = {
    "none", "param", "buffer", "input", "tangent", "constant"};
constexpr std::array<std::string_view, 3> kOutputKindNames = {"loss", "grad", "buffer"};

}  // namespace

std::string_view placeholder_kind_name(PlaceholderKind kind) {
  return kPlaceholderKindNames[static_cast<size_t>(kind)];
}

std::optional<PlaceholderKind> parse_placeholder_kind(std::string_view name) {
  for (size_t i = 1; i < kPlaceholderKindNames.size(); ++i) {
    if (kPlaceholderKindNames[i] == name) return static_cast<PlaceholderKind>(i);
  }
  return std::nullopt;
}

std::string_view output_kind_name(OutputKind kind) {
  return kOutputKindNames[static_cast<size_t>(kind)];
}

std::optional<OutputKind> parse_output_kind(std::string_view name) {
  for (size_t i = 0; i < kOutputKindNames.size(); ++i) {
    if (kOutputKindNames[i] == name) return static_cast<OutputKind>(i);
  }
  return std::nullopt;
}

std::string default_node_base_name(OpId op) {
  std::string_view name = op_name(op);
  if (name.starts_with("aten.")) name.remove_prefix(5);
  if (size_t dot = name.find('.'); dot != std::string_view::npos) name = name.substr(0, dot);
  return std::string(name);
}

std::string_view node_op_name(const Node& node) {
  return node.op == OpId::kGeneric ? std::string_view(node.aten) : op_name(node.op);
}

std::optional<NodeId> Graph::find(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

std::string Graph::fresh_name(std::string_view base) {
  std::string key(base);
  for (;;) {
    int& count = name_counts_[key];
    std::string candidate = count == 0 ? key : key + "_" + std::to_string(count);
    ++count;
    if (!by_name_.contains(candidate)) return candidate;
  }
}

Expected<NodeId> Graph::append(Node node) {
  if (node.name.empty()) return make_error("node #{} has an empty name", nodes_.size());
  auto id = static_cast<NodeId>(nodes_.size());
  auto [it, inserted] = by_name_.emplace(node.name, id);
  if (!inserted) {
    return make_error("node '{}' is defined twice (first as node #{}, again as node #{})",
                      node.name, it->second, id);
  }
  nodes_.push_back(std::move(node));
  return id;
}

Expected<NodeId> Graph::add_generic(std::string_view aten, std::vector<NodeId> inputs, Attrs attrs,
                                    std::vector<TensorMeta> outputs, std::string_view scope) {
  const AtenSchema* schema = find_aten_schema(aten);
  if (schema == nullptr) return make_error("libtorch has no op {}", aten);
  if (schema->num_tensor_args() != static_cast<int>(inputs.size())) {
    return make_error("{} takes {} tensor arguments, got {} inputs", aten,
                      schema->num_tensor_args(), inputs.size());
  }
  for (NodeId input : inputs) {
    if (input < 0 || input >= size()) {
      return make_error("{}: input id {} is not a node of the graph", aten, input);
    }
  }
  Node node;
  node.op = OpId::kGeneric;
  node.aten = std::string(aten);
  std::string_view base = aten.starts_with("aten.") ? aten.substr(5) : aten;
  node.name = fresh_name(base.substr(0, base.find('.')));
  node.inputs = std::move(inputs);
  node.attrs = std::move(attrs);
  node.outputs = std::move(outputs);
  node.scope = std::string(scope);
  return append(std::move(node));
}

Expected<NodeId> Graph::add(OpId op, std::vector<NodeId> inputs, Attrs attrs,
                            std::string_view scope, std::string_view name_hint) {
  std::vector<const std::vector<TensorMeta>*> input_outputs;
  input_outputs.reserve(inputs.size());
  for (NodeId input : inputs) {
    if (input < 0 || input >= size()) {
      return make_error("{}: input id {} is not a node of the graph", op_name(op), input);
    }
    input_outputs.push_back(&nodes_[static_cast<size_t>(input)].outputs);
  }
  OpCall call{input_outputs, attrs};
  Expected<std::vector<TensorMeta>> outputs = infer_outputs(op, call);
  if (!outputs) return outputs.error();
  Node node;
  node.name = fresh_name(name_hint.empty() ? default_node_base_name(op) : name_hint);
  node.op = op;
  node.inputs = std::move(inputs);
  node.attrs = std::move(attrs);
  node.outputs = std::move(*outputs);
  node.scope = std::string(scope);
  return append(std::move(node));
}

NodeId Graph::add_placeholder(std::string_view name, PlaceholderKind kind, TensorMeta meta,
                              std::string_view target, std::string_view scope) {
  Node node;
  node.name = fresh_name(name);
  node.op = OpId::kPlaceholder;
  node.kind = kind;
  node.outputs = {std::move(meta)};
  node.target = std::string(target);
  node.scope = std::string(scope);
  return *append(std::move(node));
}

std::vector<std::vector<NodeId>> Graph::users() const {
  std::vector<std::vector<NodeId>> users(nodes_.size());
  for (NodeId id = 0; id < size(); ++id) {
    for (NodeId input : node(id).inputs) {
      auto& list = users[static_cast<size_t>(input)];
      if (list.empty() || list.back() != id) list.push_back(id);
    }
  }
  return users;
}

int64_t param_count(const Graph& graph) {
  int64_t count = 0;
  for (const Node& node : graph.nodes()) {
    if (node.is_placeholder() && node.kind == PlaceholderKind::kParam) count += node.meta().numel();
  }
  return count;
}

}  // namespace autopar
