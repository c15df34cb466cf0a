#include "report/memory_estimate.h"

#include <algorithm>

#include "memory/liveness.h"
#include "planner/problem_builder.h"
#include "sharding/placement.h"

namespace autopar::report {
namespace {

double local_bytes(const TensorMeta& meta, const Sharding& sharding, const DeviceMesh& mesh) {
  Shape local = local_shape(meta.shape, sharding, mesh);
  double numel = 1;
  for (int64_t d : local) numel *= static_cast<double>(d);
  return numel * static_cast<double>(dtype_size(meta.dtype));
}

// Placement of all of a node's outputs under its chosen strategy ("S(0)R" or,
// for several outputs, "S(0)R,RR").
std::string chosen_placement(const Graph& graph, const Plan& plan, NodeId v) {
  const NodeStrategies& ns = plan.strategies.nodes[static_cast<size_t>(v)];
  StrategyIdx s = plan.choice[static_cast<size_t>(v)];
  std::string text;
  for (size_t o = 0; o < graph.node(v).outputs.size(); ++o) {
    if (o > 0) text += ',';
    text += to_string(ns.output(s, static_cast<int>(o)));
  }
  return text;
}

std::string shape_text(const Node& node) {
  std::string text;
  for (size_t o = 0; o < node.outputs.size(); ++o) {
    if (o > 0) text += ',';
    text += shape_to_string(node.outputs[o].shape);
  }
  return text;
}

LiveTensor tensor_of(const Graph& graph, const Plan& plan, NodeId v, MemoryKind kind) {
  const Node& node = graph.node(v);
  LiveTensor t;
  t.node = v;
  t.name = node.name;
  t.op = std::string(node_op_name(node));
  t.shape = shape_text(node);
  t.placement = chosen_placement(graph, plan, v);
  t.kind = kind;
  return t;
}

// Storage roots: placeholders all step, gradients from allocation to the end,
// other activations over their liveness interval.
void add_storages(const Graph& graph, const Plan& plan, std::vector<LiveTensor>& held) {
  const Liveness live = analyze_liveness(graph);
  const int32_t last = graph.size() - 1;
  const double opt_per_elem = optimizer_bytes_per_element(plan.optimizer);
  for (NodeId v = 0; v < graph.size(); ++v) {
    if (!live.owns_storage(v)) continue;
    const Node& node = graph.node(v);
    const auto i = static_cast<size_t>(v);
    const double bytes = local_output_bytes(graph, v, plan.strategies.nodes[i], plan.choice[i], plan.mesh);
    if (node.is_placeholder()) {
      LiveTensor t = tensor_of(graph, plan, v, MemoryKind::kParam);
      t.bytes = bytes;
      t.start = 0;
      t.end = last;
      if (node.kind == PlaceholderKind::kParam && opt_per_elem > 0) {
        LiveTensor state = t;
        state.kind = MemoryKind::kOptimizer;
        state.bytes = bytes / static_cast<double>(dtype_size(node.meta().dtype)) * opt_per_elem;
        held.push_back(std::move(state));
      }
      held.push_back(std::move(t));
      continue;
    }
    bool grad = live.role[i] == StorageRole::kGradient;
    LiveTensor t = tensor_of(graph, plan, v, grad ? MemoryKind::kGrad : MemoryKind::kActivation);
    t.bytes = bytes;
    t.start = live.start[i];
    t.end = grad ? last : live.end[i];
    held.push_back(std::move(t));
  }
}

// The redistributed copy of an operand lives while its consumer runs; a
// gradient->parameter pairing runs after the last node.
void add_comm_buffers(const Graph& graph, const Plan& plan, std::vector<LiveTensor>& held) {
  const int32_t last = graph.size() - 1;
  for (const PlannedRedistribution& r : plan.redistributions) {
    const TensorMeta& meta = graph.node(r.producer).outputs[static_cast<size_t>(r.output_index)];
    LiveTensor t = tensor_of(graph, plan, r.producer, MemoryKind::kCommBuffer);
    t.shape = shape_to_string(meta.shape);
    t.placement = to_string(r.from) + "->" + to_string(r.to);
    t.bytes = local_bytes(meta, r.to, plan.mesh);
    t.start = r.input < 0 ? last : r.consumer;
    t.end = t.start;
    held.push_back(std::move(t));
  }
}

void add_to(MemoryParts& parts, MemoryKind kind, double bytes) {
  switch (kind) {
    case MemoryKind::kParam: parts.params += bytes; break;
    case MemoryKind::kGrad: parts.grads += bytes; break;
    case MemoryKind::kOptimizer: parts.optimizer += bytes; break;
    case MemoryKind::kActivation: parts.activations += bytes; break;
    case MemoryKind::kCommBuffer: parts.comm_buffers += bytes; break;
  }
}

}  // namespace

std::string_view memory_kind_name(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kParam: return "param";
    case MemoryKind::kGrad: return "grad";
    case MemoryKind::kOptimizer: return "optimizer";
    case MemoryKind::kActivation: return "activation";
    case MemoryKind::kCommBuffer: return "comm_buffer";
  }
  return "?";
}

MemoryTimeline estimate_memory(const Graph& graph, const Plan& plan) {
  MemoryTimeline timeline;
  if (plan.choice.size() != static_cast<size_t>(graph.size()) || graph.size() == 0) return timeline;
  std::vector<LiveTensor> held;
  add_storages(graph, plan, held);
  add_comm_buffers(graph, plan, held);
  // Difference arrays per kind: +bytes at start, -bytes after end.
  const auto n = static_cast<size_t>(graph.size());
  std::vector<MemoryParts> delta(n + 1);
  for (const LiveTensor& t : held) {
    add_to(delta[static_cast<size_t>(t.start)], t.kind, t.bytes);
    add_to(delta[static_cast<size_t>(t.end) + 1], t.kind, -t.bytes);
  }
  timeline.positions.resize(n);
  MemoryParts now;
  for (size_t p = 0; p < n; ++p) {
    now.params += delta[p].params;
    now.grads += delta[p].grads;
    now.optimizer += delta[p].optimizer;
    now.activations += delta[p].activations;
    now.comm_buffers += delta[p].comm_buffers;
    timeline.positions[p] = now;
    if (timeline.peak_position < 0 || now.total() > timeline.peak_bytes) {
      timeline.peak_position = static_cast<int32_t>(p);
      timeline.peak_bytes = now.total();
    }
  }
  timeline.peak_node = timeline.peak_position;
  timeline.peak = timeline.positions[static_cast<size_t>(timeline.peak_position)];
  const int32_t at = timeline.peak_position;
  for (LiveTensor& t : held) {
    if (t.start <= at && at <= t.end) timeline.live_at_peak.push_back(std::move(t));
  }
  std::stable_sort(timeline.live_at_peak.begin(), timeline.live_at_peak.end(),
                   [](const LiveTensor& a, const LiveTensor& b) { return a.bytes > b.bytes; });
  return timeline;
}

}  // namespace autopar::report
