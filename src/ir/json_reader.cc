// JSON graph reader. It checks structure and names (with the JSON path in every
// message), builds Nodes and appends them, then runs verify() for everything the
// op table can derive (shapes, dtypes, getitem use, loss and gradient metas).
// No exception leaves this file: nlohmann is used through its non-throwing
// accessors, and parse errors are caught and turned into messages.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ir/json_io.h"
#include "ir/json_io_internal.h"
#include "ir/verifier.h"

namespace autopar {
namespace {

using namespace graph_json;

class Reader {
 public:
  explicit Reader(const Json& nodes) : nodes_json_(nodes) {}
  Status read_node(size_t index);
  Status read_output(const Json& value, size_t index);
  Status read_gradient_link(const Json& value, size_t index);
  Graph take() { return std::move(graph_); }
  Graph& graph() { return graph_; }

 private:
  Status read_identity(const Json& value, Node& node, Where& where);
  Status read_generic_call(const Json& value, Node& node, const Where& where);
  Status read_value(const Json& value, Node& node, const Where& where);
  Status read_inputs(const Json* value, const OpDef& def, Node& node, const Where& where);
  Status read_outputs(const Json& value, Node& node, const Where& where);
  Expected<NodeId> lookup(const Json& value, const Where& where, std::string_view role);
  std::string later_definition(const std::string& name, size_t after) const;

  const Json& nodes_json_;
  Graph graph_;
};

// name, op, kind, target, scope. Sets where.node once the name is known.
Status Reader::read_identity(const Json& value, Node& node, Where& where) {
  Expected<const Json*> name = require(value, "name", where);
  if (!name) return name.error();
  Expected<std::string> name_text = read_string(**name, where.at(".name"));
  if (!name_text) return name_text.error();
  if (name_text->empty()) return where.at(".name").error("a node name must not be empty");
  if (std::optional<NodeId> previous = graph_.find(*name_text)) {
    return where.at(".name").error("'{}' is already the name of nodes[{}]", *name_text, *previous);
  }
  node.name = std::move(*name_text);
  where.node = node.name;
  Expected<const Json*> op = require(value, "op", where);
  if (!op) return op.error();
  Expected<std::string> op_text = read_string(**op, where.at(".op"));
  if (!op_text) return op_text.error();
  std::optional<OpId> id = find_op(*op_text);
  if (!id && find_aten_schema(*op_text) != nullptr) {
    id = OpId::kGeneric;
    node.aten = *op_text;
  }
  if (!id) {
    std::vector<std::string_view> close = similar_op_names(*op_text, /*max_count=*/3);
    return where.at(".op").error("unknown op '{}': neither autopar's op table nor libtorch has "
                                 "it{}", *op_text,
                                 close.empty() ? "" : fmt::format(" (did you mean {}?)",
                                                                  fmt::join(close, ", ")));
  }
  node.op = *id;
  bool placeholder = node.is_placeholder();
  for (const char* key : {"kind", "target", "value"}) {
    if (!placeholder && field(value, key) != nullptr) {
      return where.at(std::string(".") + key).error("only placeholders have a {}", key);
    }
  }
  if (placeholder) {
    Expected<const Json*> kind = require(value, "kind", where);
    if (!kind) return kind.error();
    Expected<std::string> kind_text = read_string(**kind, where.at(".kind"));
    if (!kind_text) return kind_text.error();
    std::optional<PlaceholderKind> parsed = parse_placeholder_kind(*kind_text);
    if (!parsed) {
      return where.at(".kind").error("unknown placeholder kind '{}' (known: param, buffer, "
                                     "input, tangent, constant)", *kind_text);
    }
    node.kind = *parsed;
  }
  for (auto [key, out] : {std::pair{"target", &node.target}, std::pair{"scope", &node.scope}}) {
    if (const Json* v = field(value, key)) {
      Expected<std::string> text = read_string(*v, where.at(std::string(".") + key));
      if (!text) return text.error();
      *out = std::move(*text);
    }
  }
  return ok_status();
}

// If `name` is defined by a node after `after`, " (it is defined later, at nodes[9])".
std::string Reader::later_definition(const std::string& name, size_t after) const {
  for (size_t i = after + 1; i < nodes_json_.size(); ++i) {
    const Json& node = nodes_json_[i];
    const Json* other = node.is_object() ? field(node, "name") : nullptr;
    if (other != nullptr && other->is_string() && other->get_ref<const std::string&>() == name) {
      return fmt::format(" (it is defined later, at nodes[{}])", i);
    }
  }
  return "";
}

Status Reader::read_inputs(const Json* value, const OpDef& def, Node& node, const Where& where) {
  if (value == nullptr) {
    static const Json kEmpty = Json::array();
    value = &kEmpty;
  }
  if (!value->is_array()) return where.error("expected an array of node names, got {}", describe(*value));
  auto count = static_cast<int>(value->size());
  if (node.op != OpId::kGeneric && (count < def.min_inputs || count > def.max_inputs)) {
    std::string expected = def.min_inputs == def.max_inputs
                               ? fmt::format("{}", def.min_inputs)
                               : fmt::format("{} to {}", def.min_inputs, def.max_inputs);
    return where.error("{} takes {} tensor inputs, got {}", def.name, expected, count);
  }
  size_t self = static_cast<size_t>(graph_.size());
  for (size_t i = 0; i < value->size(); ++i) {
    Where at = where.at(fmt::format("[{}]", i));
    Expected<std::string> name = read_string((*value)[i], at);
    if (!name) return name.error();
    std::optional<NodeId> input = graph_.find(*name);
    if (!input) {
      return at.error("'{}' is not defined before this node{}", *name, later_definition(*name, self));
    }
    node.inputs.push_back(*input);
  }
  return ok_status();
}

Status Reader::read_outputs(const Json& value, Node& node, const Where& where) {
  if (!value.is_array() || value.empty()) {
    return where.error("expected a non-empty array of {{\"shape\", \"dtype\"}} objects, got {}",
                       describe(value));
  }
  for (size_t i = 0; i < value.size(); ++i) {
    Expected<TensorMeta> meta = read_meta(value[i], where.at(fmt::format("[{}]", i)));
    if (!meta) return meta.error();
    node.outputs.push_back(std::move(*meta));
  }
  return ok_status();
}

// A generic aten op binds its inputs and attributes to its libtorch schema.
Status Reader::read_generic_call(const Json& value, Node& node, const Where& where) {
  const AtenSchema& schema = *find_aten_schema(node.aten);
  if (Status s = check_generic_schema(schema, where.at(".op")); !s) return s;
  if (Status s = check_generic_inputs(schema, node.arg_inputs, node.inputs.size(),
                                      where.at(".inputs"));
      !s) {
    return s;
  }
  Expected<Attrs> attrs = read_generic_attrs(field(value, "attrs"), schema, where.at(".attrs"));
  if (!attrs) return attrs.error();
  node.attrs = std::move(*attrs);
  return ok_status();
}

// A buffer's or constant's "value" (required on constants).
Status Reader::read_value(const Json& value, Node& node, const Where& where) {
  const Json* data = field(value, "value");
  bool carries = node.kind == PlaceholderKind::kBuffer || node.kind == PlaceholderKind::kConstant;
  if (data != nullptr && !carries) {
    return where.at(".value").error("only buffer and constant placeholders carry a value");
  }
  if (data == nullptr) {
    if (node.kind == PlaceholderKind::kConstant) return where.error("a constant needs a 'value'");
    return ok_status();
  }
  Expected<std::shared_ptr<const TensorBytes>> bytes =
      read_tensor_value(*data, node.meta(), where.at(".value"));
  if (!bytes) return bytes.error();
  node.value = std::move(*bytes);
  return ok_status();
}

Status Reader::read_node(size_t index) {
  static constexpr std::array<std::string_view, 10> kKeys = {
      "name", "op", "kind", "target", "scope", "value", "inputs", "arg_inputs", "attrs", "outputs"};
  const Json& value = nodes_json_[index];
  Where where{fmt::format("nodes[{}]", index), ""};
  if (!value.is_object()) return where.error("expected an object, got {}", describe(value));
  if (Status s = check_keys(value, where, kKeys); !s) return s;
  Node node;
  if (Status s = read_identity(value, node, where); !s) return s;
  const OpDef& def = op_def(node.op);
  if (Status s = read_inputs(field(value, "inputs"), def, node, where.at(".inputs")); !s) return s;
  Expected<std::vector<TensorArg>> arg_inputs =
      read_arg_inputs(field(value, "arg_inputs"), node.inputs.size(), where.at(".arg_inputs"));
  if (!arg_inputs) return arg_inputs.error();
  node.arg_inputs = std::move(*arg_inputs);
  if (node.op == OpId::kGeneric) {
    if (Status s = read_generic_call(value, node, where); !s) return s;
  } else {
    Expected<Attrs> attrs = read_attrs(field(value, "attrs"), def, where.at(".attrs"));
    if (!attrs) return attrs.error();
    node.attrs = std::move(*attrs);
  }
  Expected<const Json*> outputs = require(value, "outputs", where);
  if (!outputs) return outputs.error();
  if (Status s = read_outputs(**outputs, node, where.at(".outputs")); !s) return s;
  if (node.op == OpId::kGeneric) {
    const AtenSchema& schema = *find_aten_schema(node.aten);
    if (Status s = check_generic_outputs(schema, node.outputs.size(), where.at(".outputs")); !s) {
      return s;
    }
  }
  if (node.is_placeholder()) {
    if (Status s = read_value(value, node, where); !s) return s;
  }
  if (Expected<NodeId> id = graph_.append(std::move(node)); !id) return where.error("{}", id.error().message);
  return ok_status();
}

Expected<NodeId> Reader::lookup(const Json& value, const Where& where, std::string_view role) {
  Expected<std::string> name = read_string(value, where);
  if (!name) return name.error();
  std::optional<NodeId> id = graph_.find(*name);
  if (!id) return where.error("{} '{}' is not a node of the graph", role, *name);
  return *id;
}

Status Reader::read_output(const Json& value, size_t index) {
  static constexpr std::array<std::string_view, 4> kKeys = {"node", "kind", "param", "buffer"};
  Where where{fmt::format("outputs[{}]", index), ""};
  if (!value.is_object()) return where.error("expected an object, got {}", describe(value));
  if (Status s = check_keys(value, where, kKeys); !s) return s;
  GraphOutput output;
  Expected<const Json*> node = require(value, "node", where);
  if (!node) return node.error();
  Expected<NodeId> id = lookup(**node, where.at(".node"), "output");
  if (!id) return id.error();
  output.node = *id;
  Expected<const Json*> kind = require(value, "kind", where);
  if (!kind) return kind.error();
  Expected<std::string> kind_text = read_string(**kind, where.at(".kind"));
  if (!kind_text) return kind_text.error();
  std::optional<OutputKind> parsed = parse_output_kind(*kind_text);
  if (!parsed) {
    return where.at(".kind").error("unknown output kind '{}' (known: loss, grad, buffer)", *kind_text);
  }
  output.kind = *parsed;
  const Json* param = field(value, "param");
  if (output.kind != OutputKind::kGradient && param != nullptr) {
    return where.at(".param").error("only a grad output names a param");
  }
  const Json* buffer = field(value, "buffer");
  if (output.kind != OutputKind::kBuffer && buffer != nullptr) {
    return where.at(".buffer").error("only a buffer output names a buffer");
  }
  if (output.kind == OutputKind::kBuffer) {
    if (buffer == nullptr) {
      return where.error("missing field 'buffer' (a buffer output names the buffer it updates)");
    }
    Expected<NodeId> buffer_id = lookup(*buffer, where.at(".buffer"), "buffer");
    if (!buffer_id) return buffer_id.error();
    output.buffer = *buffer_id;
  }
  if (output.kind == OutputKind::kGradient) {
    if (param == nullptr) return where.error("missing field 'param' (a grad output names its param)");
    Expected<NodeId> param_id = lookup(*param, where.at(".param"), "param");
    if (!param_id) return param_id.error();
    const Node& p = graph_.node(*param_id);
    if (!p.is_placeholder() || p.kind != PlaceholderKind::kParam) {
      std::string what = p.is_placeholder() ? fmt::format("its kind is {}", placeholder_kind_name(p.kind))
                                            : fmt::format("its op is {}", node_op_name(p));
      return where.at(".param").error("'{}' is not a param placeholder ({})", p.name, what);
    }
    output.param = *param_id;
  }
  graph_.add_output(output);
  return ok_status();
}

Status Reader::read_gradient_link(const Json& value, size_t index) {
  static constexpr std::array<std::string_view, 2> kKeys = {"value", "grad"};
  Where where{fmt::format("gradient_links[{}]", index), ""};
  if (!value.is_object()) return where.error("expected an object, got {}", describe(value));
  if (Status s = check_keys(value, where, kKeys); !s) return s;
  GradientLink link;
  for (auto [key, id] : {std::pair{"value", &link.value}, std::pair{"grad", &link.grad}}) {
    Expected<const Json*> ref = require(value, key, where);
    if (!ref) return ref.error();
    Expected<NodeId> found = lookup(**ref, where.at(fmt::format(".{}", key)), key);
    if (!found) return found.error();
    *id = *found;
  }
  graph_.add_gradient_link(link);
  return ok_status();
}

Status read_header(const Json& root, std::string& name) {
  static constexpr std::array<std::string_view, 6> kKeys = {"format", "version", "name", "nodes",
                                                           "outputs", "gradient_links"};
  Where where{"(top level)", ""};
  if (!root.is_object()) return where.error("expected an object, got {}", describe(root));
  if (Status s = check_keys(root, where, kKeys); !s) return s;
  Expected<const Json*> format = require(root, "format", where);
  if (!format) return format.error();
  if (!(*format)->is_string() || (*format)->get_ref<const std::string&>() != kGraphFormatName) {
    return Where{"format", ""}.error("expected \"{}\", got {}", kGraphFormatName, describe(**format));
  }
  Expected<const Json*> version = require(root, "version", where);
  if (!version) return version.error();
  if (as_int64(**version) != kGraphFormatVersion) {
    return Where{"version", ""}.error("this reader understands version {}, got {}",
                                      kGraphFormatVersion, describe(**version));
  }
  if (const Json* n = field(root, "name")) {
    Expected<std::string> text = read_string(*n, Where{"name", ""});
    if (!text) return text.error();
    name = std::move(*text);
  }
  return ok_status();
}

// One error for every op name that neither the op table nor libtorch has, with counts, so an exported
// model's missing ops show at once rather than one per run. A single unknown
// node falls through to read_node's message (with its "did you mean").
Status check_ops_known(const Json& nodes) {
  struct Unknown {
    std::string op;
    int count = 0;
    size_t first = 0;
  };
  std::vector<Unknown> unknown;
  int total = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Json* op = nodes[i].is_object() ? field(nodes[i], "op") : nullptr;
    if (op == nullptr || !op->is_string()) continue;
    const std::string& name = op->get_ref<const std::string&>();
    if (find_op(name) || find_aten_schema(name) != nullptr) continue;
    auto it = std::find_if(unknown.begin(), unknown.end(), [&](const Unknown& u) { return u.op == name; });
    if (it == unknown.end()) it = unknown.insert(unknown.end(), Unknown{name, 0, i});
    ++it->count;
    ++total;
  }
  if (total < 2) return ok_status();
  std::sort(unknown.begin(), unknown.end(), [](const Unknown& a, const Unknown& b) { return a.op < b.op; });
  std::string list;
  for (const Unknown& u : unknown) {
    list += fmt::format("\n  {} x{} (first at nodes[{}])", u.op, u.count, u.first);
  }
  return make_error("unsupported ops: {} nodes use {} ops that neither autopar's op table "
                    "(src/ir/op_table.cc) nor libtorch has (covered ops: docs/pytorch.md):{}",
                    total, unknown.size(), list);
}

Expected<Graph> read_document(const Json& root) {
  std::string name;
  if (Status s = read_header(root, name); !s) return s.error();
  Where top{"(top level)", ""};
  Expected<const Json*> nodes = require(root, "nodes", top);
  if (!nodes) return nodes.error();
  if (!(*nodes)->is_array()) return Where{"nodes", ""}.error("expected an array, got {}", describe(**nodes));
  Expected<const Json*> outputs = require(root, "outputs", top);
  if (!outputs) return outputs.error();
  if (!(*outputs)->is_array()) {
    return Where{"outputs", ""}.error("expected an array, got {}", describe(**outputs));
  }
  if (Status s = check_ops_known(**nodes); !s) return s.error();
  Reader reader(**nodes);
  reader.graph().name = std::move(name);
  for (size_t i = 0; i < (*nodes)->size(); ++i) {
    if (Status s = reader.read_node(i); !s) return s.error();
  }
  for (size_t i = 0; i < (*outputs)->size(); ++i) {
    if (Status s = reader.read_output((**outputs)[i], i); !s) return s.error();
  }
  if (const Json* links = field(root, "gradient_links")) {
    if (!links->is_array()) {
      return Where{"gradient_links", ""}.error("expected an array, got {}", describe(*links));
    }
    for (size_t i = 0; i < links->size(); ++i) {
      if (Status s = reader.read_gradient_link((*links)[i], i); !s) return s.error();
    }
  }
  Graph graph = reader.take();
  if (Status s = verify(graph); !s) return s.error();
  return graph;
}

}  // namespace

Expected<Graph> read_graph_json(std::string_view text) {
  try {
    Json root;
    try {
      root = Json::parse(text.begin(), text.end());
    } catch (const Json::parse_error& e) {
      // what() starts with "[json.exception.parse_error.101] "; keep the rest.
      std::string what = e.what();
      if (size_t close = what.find("] "); close != std::string::npos) what.erase(0, close + 2);
      return make_error("malformed JSON at byte {}: {}", e.byte, what);
    }
    return read_document(root);
  } catch (const std::exception& e) {
    // A bug here, not a user error; still never let it escape to the caller.
    return make_error_of(ErrorKind::kInternal, "internal error while reading graph JSON: {}", e.what());
  }
}

}  // namespace autopar
