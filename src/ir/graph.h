// Graph: one training step as a list of aten-level nodes in execution order,
// like a torch.fx graph from AOT autograd's joint forward+backward trace.
//
// Placeholders come first and are tagged param / buffer / input / tangent /
// constant. Graph outputs are tagged loss, gradient (of a named param
// placeholder) or buffer (the step's new value of a named buffer placeholder).
// A node with several outputs is consumed only through getitem nodes.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/attr.h"
#include "ir/expected.h"
#include "ir/op_def.h"
#include "ir/tensor_meta.h"

namespace autopar {

using NodeId = int32_t;
inline constexpr NodeId kNoNode = -1;

// kConstant: a tensor that is part of the model but neither trained nor a
// buffer (a tensor constant traced from the model or lifted from the loss);
// its value travels with the graph.
enum class PlaceholderKind : uint8_t { kNone, kParam, kBuffer, kInput, kTangent, kConstant };
enum class OutputKind : uint8_t { kLoss, kGradient, kBuffer };

std::string_view placeholder_kind_name(PlaceholderKind kind);  // "param", ...
std::optional<PlaceholderKind> parse_placeholder_kind(std::string_view name);
std::string_view output_kind_name(OutputKind kind);  // "loss", "grad"
std::optional<OutputKind> parse_output_kind(std::string_view name);

// How one tensor-typed argument of an aten schema binds to a node's inputs,
// for ops whose binding is not one input per argument (an optional tensor left
// out, a tensor list). Generic ops (OpId::kGeneric) need it to rebuild the call.
struct TensorArg {
  int32_t count = 1;             // inputs this argument takes, in order
  std::vector<uint8_t> present;  // Tensor?[] only: per list element, 1 = a tensor, 0 = None
  bool operator==(const TensorArg&) const = default;
};

// Raw tensor data: little-endian, row-major, exactly numel * itemsize bytes.
using TensorBytes = std::vector<uint8_t>;

struct Node {
  std::string name;  // unique, FX style: "mm", "mm_1", "view_as_complex_3"
  OpId op = OpId::kPlaceholder;
  std::string aten;  // OpId::kGeneric only: the aten overload, e.g. "aten.triu.default"
  std::vector<TensorArg> arg_inputs;  // empty: one input per tensor argument
  std::vector<NodeId> inputs;
  Attrs attrs;
  std::vector<TensorMeta> outputs;
  PlaceholderKind kind = PlaceholderKind::kNone;  // placeholders only
  std::string target;  // placeholders: source name, e.g. "layers.0.attention.wq.weight"
  std::string scope;   // module path, e.g. "layers.3.attention"; "" at top level
  // Buffers and constants: the value the graph carries (null: none; the
  // runtime initialises the placeholder itself). Shared: graphs copy cheaply.
  std::shared_ptr<const TensorBytes> value;

  const TensorMeta& meta() const { return outputs.front(); }
  bool is_placeholder() const { return op == OpId::kPlaceholder; }
};

struct GraphOutput {
  NodeId node = kNoNode;
  OutputKind kind = OutputKind::kLoss;
  NodeId param = kNoNode;   // for gradients: the param placeholder it belongs to
  NodeId buffer = kNoNode;  // for buffer updates: the buffer placeholder it replaces

  // The placeholder whose sharding this output must end in (a gradient's
  // param, an update's buffer); kNoNode for the loss.
  NodeId placeholder() const {
    return kind == OutputKind::kGradient ? param : kind == OutputKind::kBuffer ? buffer : kNoNode;
  }
};

// A forward value and the node holding the whole gradient that flows back to
// it (all contributions summed). Autodiff records one per differentiated
// single-output forward node; the planner can pair their placements. Optional:
// graphs from elsewhere may have none.
struct GradientLink {
  NodeId value = kNoNode;
  NodeId grad = kNoNode;
};

class Graph {
 public:
  std::string name;

  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(NodeId id) const { return nodes_[static_cast<size_t>(id)]; }
  int32_t size() const { return static_cast<int32_t>(nodes_.size()); }
  const std::vector<GraphOutput>& outputs() const { return outputs_; }

  std::optional<NodeId> find(std::string_view name) const;

  // Appends a node as given (outputs included), renaming nothing. Fails if the
  // name is taken. Used by readers; run verify() afterwards.
  Expected<NodeId> append(Node node);

  // Appends a node with a fresh FX-style name derived from the op (or from
  // name_hint) and outputs inferred by the op table.
  Expected<NodeId> add(OpId op, std::vector<NodeId> inputs, Attrs attrs = {},
                       std::string_view scope = "", std::string_view name_hint = "");
  // Appends a generic aten op (OpId::kGeneric): libtorch must have `aten`;
  // its outputs are given, not inferred. One input per tensor argument.
  Expected<NodeId> add_generic(std::string_view aten, std::vector<NodeId> inputs, Attrs attrs,
                               std::vector<TensorMeta> outputs, std::string_view scope = "");
  NodeId add_placeholder(std::string_view name, PlaceholderKind kind, TensorMeta meta,
                         std::string_view target = "", std::string_view scope = "");
  void add_output(GraphOutput output) { outputs_.push_back(output); }
  const std::vector<GradientLink>& gradient_links() const { return gradient_links_; }
  void add_gradient_link(GradientLink link) { gradient_links_.push_back(link); }

  // Users of each node, in execution order.
  std::vector<std::vector<NodeId>> users() const;

  // FX-style unique name: base, base_1, base_2, ...
  std::string fresh_name(std::string_view base);

 private:
  std::vector<Node> nodes_;
  std::vector<GraphOutput> outputs_;
  std::vector<GradientLink> gradient_links_;
  std::unordered_map<std::string, NodeId> by_name_;
  std::unordered_map<std::string, int> name_counts_;
};

// "aten.mm.default" -> "mm", "aten._unsafe_view.default" -> "_unsafe_view".
std::string default_node_base_name(OpId op);

// The node's aten op name: the op table's, or a generic op's own.
std::string_view node_op_name(const Node& node);

// Parameter counts and bytes, for summaries.
int64_t param_count(const Graph& graph);

}  // namespace autopar
