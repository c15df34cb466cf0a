// Keep rules of a pipeline stage (see keep_rules.h).
#include "pipeline_runtime/keep_rules.h"

namespace autopar::pipeline {
namespace {

std::vector<bool> mark(const Graph& graph, const std::vector<NodeId>& nodes) {
  std::vector<bool> marked(static_cast<size_t>(graph.size()), false);
  for (NodeId id : nodes) marked[static_cast<size_t>(id)] = true;
  return marked;
}

std::vector<bool> inputs_of(const Graph& graph, const std::vector<NodeId>& nodes) {
  std::vector<bool> read(static_cast<size_t>(graph.size()), false);
  for (NodeId id : nodes) {
    for (NodeId in : graph.node(id).inputs) read[static_cast<size_t>(in)] = true;
  }
  return read;
}

std::vector<bool> either(std::vector<bool> a, const std::vector<bool>& b) {
  for (size_t i = 0; i < a.size(); ++i) a[i] = a[i] || b[i];
  return a;
}

}  // namespace

StageKeepRules keep_rules(const Graph& graph, const StageProgram& p) {
  StageKeepRules rules;
  rules.read_by_backward = inputs_of(graph, p.backward);
  std::vector<bool> sent = mark(graph, {});
  for (const Value& v : p.activations_out) sent[static_cast<size_t>(v.node)] = true;
  if (p.loss != kNoNode) sent[static_cast<size_t>(p.loss)] = true;
  rules.after_forward = either(rules.read_by_backward, sent);
  for (NodeId v : p.rerun) rules.after_forward[static_cast<size_t>(v)] = false;  // re-run, not kept
  rules.sent_grads = mark(graph, p.grads_out);
  rules.after_backward = either(rules.sent_grads, mark(graph, p.param_grads));
  rules.after_input_grad = either(inputs_of(graph, p.weight_grad), rules.after_backward);
  return rules;
}

std::vector<int32_t> last_reads(const Graph& graph, const std::vector<NodeId>& nodes) {
  std::vector<int32_t> last(static_cast<size_t>(graph.size()), -1);
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (NodeId in : graph.node(nodes[i]).inputs) last[static_cast<size_t>(in)] = static_cast<int32_t>(i);
  }
  return last;
}

}  // namespace autopar::pipeline
