#include "graph_summary.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "cli_output.h"
#include "ir/op_def.h"

namespace autopar {
namespace {

// Nodes that some loss output depends on: the forward part of a joint graph.
std::vector<bool> forward_nodes(const Graph& graph) {
  std::vector<bool> forward(static_cast<size_t>(graph.size()), false);
  std::vector<NodeId> stack;
  for (const GraphOutput& output : graph.outputs()) {
    if (output.kind == OutputKind::kLoss) stack.push_back(output.node);
  }
  if (stack.empty()) return std::vector<bool>(forward.size(), true);
  while (!stack.empty()) {
    NodeId id = stack.back();
    stack.pop_back();
    if (id < 0 || id >= graph.size() || forward[static_cast<size_t>(id)]) continue;
    forward[static_cast<size_t>(id)] = true;
    for (NodeId input : graph.node(id).inputs) stack.push_back(input);
  }
  return forward;
}

void count_placeholder(const Node& node, GraphSummary& summary) {
  switch (node.kind) {
    case PlaceholderKind::kParam:
      ++summary.param_placeholders;
      summary.params += node.meta().numel();
      summary.param_bytes += node.meta().bytes();
      break;
    case PlaceholderKind::kBuffer: ++summary.buffers; break;
    case PlaceholderKind::kInput: ++summary.inputs; break;
    case PlaceholderKind::kTangent: ++summary.tangents; break;
    case PlaceholderKind::kConstant: ++summary.constants; break;
    case PlaceholderKind::kNone: break;
  }
}

std::string bytes_line(std::string_view label, int64_t bytes) {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  return fmt::format("{:<30}{} ({}, {:.2f} GiB)\n", label, with_thousands(bytes), bytes,
                     static_cast<double>(bytes) / kGiB);
}

}  // namespace

GraphSummary summarize_graph(const Graph& graph) {
  GraphSummary summary;
  summary.name = graph.name;
  summary.nodes = graph.size();
  const std::vector<bool> forward = forward_nodes(graph);
  std::map<std::string_view, int64_t> by_op;
  for (NodeId id = 0; id < graph.size(); ++id) {
    const Node& node = graph.node(id);
    ++by_op[node_op_name(node)];
    if (node.op == OpId::kGeneric) ++summary.generic_nodes;
    if (node.is_placeholder()) {
      count_placeholder(node, summary);
      continue;
    }
    if (node.op == OpId::kGetItem) continue;
    int64_t bytes = 0;
    for (const TensorMeta& meta : node.outputs) bytes += meta.bytes();
    summary.joint_activation_bytes += bytes;
    if (forward[static_cast<size_t>(id)]) summary.forward_activation_bytes += bytes;
  }
  for (const auto& [op, count] : by_op) summary.ops.push_back({op, count});
  std::stable_sort(summary.ops.begin(), summary.ops.end(),
                   [](const OpCount& a, const OpCount& b) { return a.count > b.count; });
  for (const GraphOutput& output : graph.outputs()) {
    if (output.kind == OutputKind::kLoss) ++summary.loss_outputs;
    if (output.kind == OutputKind::kGradient) ++summary.grad_outputs;
    if (output.kind == OutputKind::kBuffer) ++summary.buffer_outputs;
  }
  return summary;
}

std::string format_summary(const GraphSummary& s) {
  std::string out;
  out += fmt::format("{:<30}{}\n", "graph:", s.name.empty() ? "(unnamed)" : s.name);
  out += fmt::format("{:<30}{} ({})\n", "nodes:", with_thousands(s.nodes), s.nodes);
  out += fmt::format("{:<30}{} params, {} buffers, {} inputs, {} tangents{}\n", "placeholders:",
                     s.param_placeholders, s.buffers, s.inputs, s.tangents,
                     s.constants > 0 ? fmt::format(", {} constants", s.constants) : "");
  out += fmt::format("{:<30}{} loss, {} gradients{}\n", "outputs:", s.loss_outputs, s.grad_outputs,
                     s.buffer_outputs > 0 ? fmt::format(", {} buffer updates", s.buffer_outputs) : "");
  if (s.generic_nodes > 0) {
    out += fmt::format("{:<30}{} (aten ops without a rule of their own: replicated)\n",
                       "generic op nodes:", s.generic_nodes);
  }
  out += fmt::format("{:<30}{} ({})\n", "parameters:", with_thousands(s.params), s.params);
  out += bytes_line("parameter bytes:", s.param_bytes);
  out += bytes_line("activation bytes, forward:", s.forward_activation_bytes);
  out += bytes_line("activation bytes, joint:", s.joint_activation_bytes);
  out += "nodes by op:\n";
  for (const OpCount& op : s.ops) out += fmt::format("  {:>9}  {}\n", with_thousands(op.count), op.op);
  return out;
}

}  // namespace autopar
