// The verifier re-derives everything the op table can derive and compares it
// with what the graph records, so a graph read from a file (or built by a pass)
// is trusted by later stages only after this passes. Errors are checked in graph
// order so the first message is about the earliest broken node.
#include "ir/verifier.h"

#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

namespace autopar {
namespace {

std::string node_label(const Node& node, NodeId id) {
  if (node.name.empty()) return fmt::format("node #{} ({})", id, node_op_name(node));
  return fmt::format("node '{}' ({})", node.name, node_op_name(node));
}

std::string metas_to_string(const std::vector<TensorMeta>& metas) {
  if (metas.size() == 1) return to_string(metas.front());
  std::string out = "(";
  for (size_t i = 0; i < metas.size(); ++i) out += (i > 0 ? ", " : "") + to_string(metas[i]);
  return out + ")";
}

Status check_names(const Graph& graph) {
  std::unordered_map<std::string_view, NodeId> seen;
  seen.reserve(static_cast<size_t>(graph.size()));
  for (NodeId id = 0; id < graph.size(); ++id) {
    const Node& node = graph.node(id);
    if (node.name.empty()) return make_error("{}: name is empty", node_label(node, id));
    auto [it, inserted] = seen.emplace(node.name, id);
    if (!inserted) {
      return make_error("{}: name is also used by node #{} (names must be unique)",
                        node_label(node, id), it->second);
    }
  }
  return ok_status();
}

// first_other: the first non-placeholder node seen so far, or kNoNode.
Status check_placeholder(const Graph& graph, NodeId id, NodeId first_other) {
  const Node& node = graph.node(id);
  std::string label = node_label(node, id);
  if (first_other != kNoNode) {
    return make_error("{}: placeholders must precede all other nodes, but '{}' (node #{}) comes "
                      "before it", label, graph.node(first_other).name, first_other);
  }
  if (!node.inputs.empty()) {
    return make_error("{}: a placeholder takes no inputs, got {}", label, node.inputs.size());
  }
  if (node.kind == PlaceholderKind::kNone) {
    return make_error("{}: placeholder has no kind (param, buffer, input, tangent or constant)",
                      label);
  }
  if (!node.attrs.items().empty()) {
    return make_error("{}: a placeholder has no attributes, got {}", label,
                      node.attrs.items().size());
  }
  if (node.outputs.size() != 1) {
    return make_error("{}: a placeholder declares exactly one output, got {}", label,
                      node.outputs.size());
  }
  return ok_status();
}

// A generic aten op's outputs come from the file (nothing to infer them
// with); only getitem may consume a multi-output node, as for any op.
Status check_generic(const Node& node, const std::string& label,
                     std::span<const std::vector<TensorMeta>* const> input_outputs) {
  if (node.aten.empty()) return make_error("{}: a generic op node has no aten name", label);
  for (size_t i = 0; i < input_outputs.size(); ++i) {
    if (input_outputs[i]->size() != 1) {
      return make_error("{}: input {} has {} outputs; select one with getitem", label, i,
                        input_outputs[i]->size());
    }
  }
  return ok_status();
}

Status check_computed(const Graph& graph, NodeId id) {
  const Node& node = graph.node(id);
  std::string label = node_label(node, id);
  if (node.kind != PlaceholderKind::kNone) {
    return make_error("{}: only placeholders have a kind, got '{}'", label,
                      placeholder_kind_name(node.kind));
  }
  std::vector<const std::vector<TensorMeta>*> input_outputs;
  input_outputs.reserve(node.inputs.size());
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    NodeId input = node.inputs[i];
    if (input < 0 || input >= id) {
      return make_error("{}: input {} refers to node #{}, which does not come before it "
                        "(this is node #{})", label, i, input, id);
    }
    input_outputs.push_back(&graph.node(input).outputs);
  }
  if (node.op == OpId::kGeneric) return check_generic(node, label, input_outputs);
  Expected<std::vector<TensorMeta>> inferred = infer_outputs(node.op, {input_outputs, node.attrs});
  if (!inferred) return make_error_like(inferred.error(), "{}: {}", label, inferred.error().message);
  if (*inferred != node.outputs) {
    return make_error("{}: recorded outputs {} differ from inferred {}", label,
                      metas_to_string(node.outputs), metas_to_string(*inferred));
  }
  return ok_status();
}

bool valid_id(const Graph& graph, NodeId id) { return id >= 0 && id < graph.size(); }

Status check_output_node(const Graph& graph, size_t index, const GraphOutput& output) {
  std::string_view kind = output_kind_name(output.kind);
  if (!valid_id(graph, output.node)) {
    return make_error("graph output {} ({}): node id {} is not a node of the graph", index, kind,
                      output.node);
  }
  const Node& node = graph.node(output.node);
  if (node.outputs.size() != 1) {
    return make_error("graph output {} ({}): node '{}' has {} outputs; select one with getitem",
                      index, kind, node.name, node.outputs.size());
  }
  if (output.kind == OutputKind::kLoss) {
    if (!node.meta().shape.empty() || !is_floating(node.meta().dtype)) {
      return make_error("graph output {} (loss): node '{}' must be a floating scalar, got {}",
                        index, node.name, to_string(node.meta()));
    }
    if (output.param != kNoNode) {
      return make_error("graph output {} (loss): a loss has no param, got node #{}", index,
                        output.param);
    }
  }
  return ok_status();
}

// The wording of a paired output: a gradient lands in its param, a buffer
// update in its buffer.
struct PairedKind {
  std::string_view output;  // "grad" / "buffer"
  std::string_view holder;  // "param" / "buffer"
  PlaceholderKind kind;
  std::string_view of;      // "grad of" / "update of"
  std::string_view twice;   // what a second one says
};

constexpr PairedKind kGradientPair{"grad", "param", PlaceholderKind::kParam, "grad of",
                                   "the param already has a gradient"};
constexpr PairedKind kBufferPair{"buffer", "buffer", PlaceholderKind::kBuffer, "update of",
                                 "the buffer is already updated"};

// A gradient or buffer update: its placeholder exists and has the right kind,
// the value has its meta, and no placeholder gets two. seen: placeholder ->
// graph output index.
Status check_paired(const Graph& graph, size_t index, const GraphOutput& output,
                    const PairedKind& k, std::unordered_map<NodeId, size_t>& seen) {
  NodeId target = output.placeholder();
  if (!valid_id(graph, target)) {
    return make_error("graph output {} ({}): {} id {} is not a node of the graph", index,
                      k.output, k.holder, target);
  }
  const Node& holder = graph.node(target);
  if (!holder.is_placeholder() || holder.kind != k.kind) {
    std::string what = holder.is_placeholder()
                           ? fmt::format("its kind is {}", placeholder_kind_name(holder.kind))
                           : fmt::format("its op is {}", node_op_name(holder));
    return make_error("graph output {} ({}): '{}' is not a {} placeholder ({})", index, k.output,
                      holder.name, k.holder, what);
  }
  const Node& value = graph.node(output.node);
  if (value.meta() != holder.meta()) {
    return make_error("graph output {} ({} '{}'): node '{}' is {}, but the {} is {}", index, k.of,
                      holder.name, value.name, to_string(value.meta()), k.holder,
                      to_string(holder.meta()));
  }
  auto [it, inserted] = seen.emplace(target, index);
  if (!inserted) {
    return make_error("graph output {} ({} '{}'): {} (graph output {})", index, k.of, holder.name,
                      k.twice, it->second);
  }
  return ok_status();
}

Status check_outputs(const Graph& graph) {
  std::unordered_map<NodeId, size_t> grad_of;
  std::vector<size_t> losses;
  const std::vector<GraphOutput>& outputs = graph.outputs();
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (Status s = check_output_node(graph, i, outputs[i]); !s) return s;
    if (outputs[i].kind == OutputKind::kLoss) {
      losses.push_back(i);
    } else {
      const PairedKind& k = outputs[i].kind == OutputKind::kBuffer ? kBufferPair : kGradientPair;
      if (Status s = check_paired(graph, i, outputs[i], k, grad_of); !s) return s;
    }
  }
  if (losses.empty()) return make_error("graph has no loss output; exactly one is required");
  if (losses.size() > 1) {
    return make_error("graph has {} loss outputs (graph outputs {} and {}); exactly one is "
                      "required", losses.size(), losses[0], losses[1]);
  }
  return ok_status();
}

// A link pairs a computed forward value with a later node of the same meta.
Status check_gradient_links(const Graph& graph) {
  const std::vector<GradientLink>& links = graph.gradient_links();
  for (size_t i = 0; i < links.size(); ++i) {
    const GradientLink& link = links[i];
    if (!valid_id(graph, link.value) || !valid_id(graph, link.grad)) {
      return make_error("gradient link {}: node ids {} -> {} are not both nodes of the graph", i,
                        link.value, link.grad);
    }
    const Node& value = graph.node(link.value);
    const Node& grad = graph.node(link.grad);
    if (value.is_placeholder() || value.outputs.size() != 1) {
      return make_error("gradient link {}: '{}' must be a computed single-output node", i,
                        value.name);
    }
    if (link.grad <= link.value || grad.outputs.size() != 1 || grad.meta() != value.meta()) {
      return make_error("gradient link {}: '{}' ({}) cannot be the gradient of '{}' ({}); a "
                        "gradient comes later and has the value's shape and dtype", i, grad.name,
                        to_string(grad.meta()), value.name, to_string(value.meta()));
    }
  }
  return ok_status();
}

}  // namespace

Status verify(const Graph& graph) {
  if (Status s = check_names(graph); !s) return s;
  NodeId first_other = kNoNode;
  for (NodeId id = 0; id < graph.size(); ++id) {
    if (graph.node(id).is_placeholder()) {
      if (Status s = check_placeholder(graph, id, first_other); !s) return s;
    } else {
      if (first_other == kNoNode) first_other = id;
      if (Status s = check_computed(graph, id); !s) return s;
    }
  }
  if (Status s = check_outputs(graph); !s) return s;
  return check_gradient_links(graph);
}

}  // namespace autopar
