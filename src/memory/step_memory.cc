#include "memory/step_memory.h"

#include <algorithm>
#include <set>

#include "memory/liveness.h"
#include "memory/recompute.h"

namespace autopar {
namespace {

size_t at(NodeId v) { return static_cast<size_t>(v); }

// Bytes of v's outputs per strategy, leaving out those a getitem claims.
std::vector<double> output_bytes(const Graph& graph, NodeId v, const StrategyGraph& sg,
                                 const std::vector<char>& claimed) {
  const NodeStrategies& ns = sg.nodes[at(v)];
  const std::vector<TensorMeta>& outs = graph.node(v).outputs;
  std::vector<double> bytes(static_cast<size_t>(ns.size()), 0.0);
  for (StrategyIdx s = 0; s < ns.size(); ++s) {
    for (size_t o = 0; o < outs.size(); ++o) {
      if (o < claimed.size() && claimed[o]) continue;
      bytes[static_cast<size_t>(s)] += local_tensor_bytes(outs[o], ns.output(s, static_cast<int>(o)), sg.mesh);
    }
  }
  return bytes;
}

// Bytes of v's first operand in the sharding v reads it in, per strategy.
std::vector<double> operand_bytes(const Graph& graph, NodeId v, const StrategyGraph& sg) {
  const NodeStrategies& ns = sg.nodes[at(v)];
  const TensorMeta& meta = input_meta(graph, v, 0);
  std::vector<double> bytes(static_cast<size_t>(ns.size()));
  for (StrategyIdx s = 0; s < ns.size(); ++s) {
    bytes[static_cast<size_t>(s)] = local_tensor_bytes(meta, ns.input(s, 0), sg.mesh);
  }
  return bytes;
}

void add_placeholder(const Graph& graph, NodeId v, std::vector<double> bytes, int32_t last,
                     double optimizer_bytes_per_element, std::vector<StepHolding>& out) {
  const Node& node = graph.node(v);
  if (node.kind != PlaceholderKind::kParam) {
    out.push_back({v, v, MemoryKind::kInput, 0, last, std::move(bytes)});
    return;
  }
  if (optimizer_bytes_per_element > 0) {
    std::vector<double> state = bytes;
    double per_byte = optimizer_bytes_per_element / static_cast<double>(dtype_size(node.meta().dtype));
    for (double& b : state) b *= per_byte;
    out.push_back({v, v, MemoryKind::kOptimizer, 0, last, std::move(state)});
  }
  out.push_back({v, v, MemoryKind::kParam, 0, last, std::move(bytes)});
}

// The reduced copy of a gradient or buffer update, in its placeholder's
// sharding, from the position after the node that completes it to the end.
// An output already in its placeholder's placement is its own reduced copy:
// that starts when the output's storage would have died.
void add_reduced_copies(const Graph& graph, const StrategyGraph& sg, const Liveness& live,
                        const std::vector<char>* in_place, std::vector<StepHolding>& out) {
  const int32_t last = graph.size() - 1;
  for (size_t k = 0; k < graph.outputs().size(); ++k) {
    const GraphOutput& g = graph.outputs()[k];
    NodeId p = g.placeholder();
    if (p == kNoNode || graph.node(g.node).is_placeholder()) continue;
    int32_t start = g.node + 1;
    if (in_place && (*in_place)[k]) start = live.end[at(live.storage_root[at(g.node)])] + 1;
    if (start > last) continue;
    const NodeStrategies& ns = sg.nodes[at(p)];
    std::vector<double> bytes(static_cast<size_t>(ns.size()));
    for (StrategyIdx s = 0; s < ns.size(); ++s) {
      bytes[static_cast<size_t>(s)] = local_tensor_bytes(graph.node(g.node).meta(), ns.output(s, 0), sg.mesh);
    }
    MemoryKind kind = g.kind == OutputKind::kGradient ? MemoryKind::kGrad : MemoryKind::kActivation;
    out.push_back({p, g.node, kind, start, last, std::move(bytes)});
  }
}

// The storages of a recomputed root's re-run nodes are not held inside its
// window (recompute.h): each such holding becomes its part before the window
// and its part from the window's end.
void split_recomputed(const Graph& graph, const std::vector<char>& recompute, std::vector<StepHolding>& out) {
  const RecomputeCandidates candidates = recompute_candidates_for(graph, recompute);
  std::vector<RecomputeWindow> window_of(at(graph.size()));
  for (NodeId v = 0; v < graph.size(); ++v) {
    if (!recompute[at(v)] || !candidates.is_candidate(v)) continue;
    for (NodeId x : candidates.rerun[at(v)]) window_of[at(x)] = candidates.window[at(v)];
  }
  const size_t held = out.size();
  for (size_t i = 0; i < held; ++i) {
    const RecomputeWindow w = window_of[at(out[i].tensor)];
    if (!w.valid() || out[i].kind != MemoryKind::kActivation) continue;
    // Re-run at restore_at, it is held there even when nothing reads it later.
    StepHolding after = out[i];
    after.start = std::max(after.start, w.restore_at);
    after.end = std::max(after.end, w.restore_at);
    out.push_back(std::move(after));
    out[i].end = std::min(out[i].end, w.drop_after);
  }
}

}  // namespace

std::vector<double> redistribution_results(const TensorMeta& meta, const Sharding& from, const Sharding& to,
                                           const RedistPlan& plan, const DeviceMesh& mesh) {
  if (plan.steps.empty()) return {local_tensor_bytes(meta, to, mesh)};
  std::vector<double> results;
  Sharding now = from;
  for (const RedistStep& step : plan.steps) {
    now[step.mesh_dim] = step.to;
    results.push_back(local_tensor_bytes(meta, now, mesh));
  }
  return results;
}

namespace {

// Peak extra bytes while a redistribution runs (every step holds its input
// and its output; the first input is the live operand) and what it leaves.
struct Transient {
  double peak = 0;
  double result = 0;
};

Transient transient(const Graph& graph, const StepRedistribution& r, const DeviceMesh& mesh) {
  const TensorMeta& meta = graph.node(r.producer).outputs[static_cast<size_t>(r.output_index)];
  Transient t;
  double held = 0;  // the current intermediate; 0 while it is the operand itself
  for (double bytes : redistribution_results(meta, r.from, r.to, *r.plan, mesh)) {
    t.peak = std::max(t.peak, held + bytes);
    held = bytes;
  }
  t.result = held;
  return t;
}

std::string placement_text(const Graph& graph, const StrategyGraph& sg,
                           std::span<const StrategyIdx> choice, NodeId v) {
  const NodeStrategies& ns = sg.nodes[at(v)];
  std::string text;
  for (size_t o = 0; o < graph.node(v).outputs.size(); ++o) {
    if (o > 0) text += ',';
    text += to_string(ns.output(choice[at(v)], static_cast<int>(o)));
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

LiveTensor describe(const Graph& graph, const StrategyGraph& sg, std::span<const StrategyIdx> choice,
                    NodeId tensor, NodeId owner, MemoryKind kind) {
  const Node& node = graph.node(tensor);
  LiveTensor t;
  t.node = tensor;
  t.name = node.name;
  t.op = std::string(node_op_name(node));
  t.shape = shape_text(node);
  t.placement = placement_text(graph, sg, choice, owner);
  t.kind = kind;
  return t;
}

}  // namespace

std::string_view memory_kind_name(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kParam: return "param";
    case MemoryKind::kOptimizer: return "optimizer";
    case MemoryKind::kInput: return "input";
    case MemoryKind::kGrad: return "grad";
    case MemoryKind::kActivation: return "activation";
    case MemoryKind::kCommBuffer: return "comm_buffer";
  }
  return "?";
}

void MemoryParts::add(MemoryKind kind, double bytes) {
  switch (kind) {
    case MemoryKind::kParam: params += bytes; break;
    case MemoryKind::kOptimizer: optimizer += bytes; break;
    case MemoryKind::kInput: inputs += bytes; break;
    case MemoryKind::kGrad: grads += bytes; break;
    case MemoryKind::kActivation: activations += bytes; break;
    case MemoryKind::kCommBuffer: comm_buffers += bytes; break;
  }
}

namespace {
// The device step_memory counts for, while it runs (null: the padded pieces).
// Kept out of the many helpers' signatures, which the planner's rows share.
thread_local const std::vector<int64_t>* counted_device = nullptr;
}  // namespace

double local_tensor_bytes(const TensorMeta& meta, const Sharding& sharding, const DeviceMesh& mesh) {
  double numel = 1;
  const Shape shape = counted_device ? local_shape_at(meta.shape, sharding, mesh, *counted_device)
                                     : local_shape(meta.shape, sharding, mesh);
  for (int64_t d : shape) numel *= static_cast<double>(d);
  return numel * static_cast<double>(dtype_size(meta.dtype));
}

double local_output_bytes(const Graph& graph, NodeId node, const NodeStrategies& ns,
                          StrategyIdx s, const DeviceMesh& mesh) {
  double bytes = 0;
  const std::vector<TensorMeta>& outs = graph.node(node).outputs;
  for (size_t o = 0; o < outs.size(); ++o) {
    bytes += local_tensor_bytes(outs[o], ns.output(s, static_cast<int>(o)), mesh);
  }
  return bytes;
}

std::vector<StepHolding> step_holdings(const Graph& graph, const StrategyGraph& sg,
                                       double optimizer_bytes_per_element,
                                       const std::vector<char>* own_storage,
                                       const std::vector<char>* reduced_in_place,
                                       const std::vector<char>* recompute) {
  std::vector<StepHolding> out;
  if (graph.size() == 0) return out;
  const Liveness live = analyze_liveness(graph, own_storage);
  const int32_t last = graph.size() - 1;
  std::vector<std::vector<char>> claimed(static_cast<size_t>(graph.size()));
  for (NodeId g = 0; g < graph.size(); ++g) {
    NodeId m = live.claims_output_of[at(g)];
    if (m == kNoNode) continue;
    claimed[at(m)].resize(graph.node(m).outputs.size(), 0);
    claimed[at(m)][static_cast<size_t>(producer_output_index(graph, g, 0))] = 1;
  }
  for (NodeId v = 0; v < graph.size(); ++v) {
    if (!live.owns_storage(v)) continue;
    // A view of a redistributed copy holds the copy: its operand's bytes.
    bool viewed_copy = own_storage && (*own_storage)[at(v)] && aliases_input(graph.node(v));
    std::vector<double> bytes = viewed_copy ? operand_bytes(graph, v, sg)
                                            : output_bytes(graph, v, sg, claimed[at(v)]);
    if (std::all_of(bytes.begin(), bytes.end(), [](double b) { return b == 0; })) continue;
    if (graph.node(v).is_placeholder()) {
      add_placeholder(graph, v, std::move(bytes), last, optimizer_bytes_per_element, out);
      continue;
    }
    MemoryKind kind = live.role[at(v)] == StorageRole::kGradient ? MemoryKind::kGrad : MemoryKind::kActivation;
    out.push_back({v, v, kind, live.start[at(v)], live.end[at(v)], std::move(bytes)});
  }
  add_reduced_copies(graph, sg, live, reduced_in_place, out);
  if (recompute && !recompute->empty()) split_recomputed(graph, *recompute, out);
  std::stable_sort(out.begin(), out.end(),
                   [](const StepHolding& a, const StepHolding& b) { return a.node < b.node; });
  return out;
}

namespace {

// The largest phase at one position (step_memory.h): while operand `index`
// is redistributed, while the kernel runs, or while the output `index`
// completed there is reduced.
// Or, at a restore position, while a re-run runs (kReRun: `index` the
// re-run, `operand` its operand being copied or -1 for its kernel).
struct Phase {
  enum Kind : uint8_t { kOperand, kKernel, kReduction, kReRun } kind = kKernel;
  size_t index = 0;
  double bytes = 0;
  int32_t operand = -1;
};

// A view whose operand is redistributed views the copy: it is the view's own
// output, already in `live`.
bool is_viewed_copy(const Graph& graph, const StepRedistribution& r) {
  return r.input == 0 && aliases_input(graph.node(r.consumer));
}

// One redistribution at its position, with what it holds.
struct Copy {
  const StepRedistribution* r = nullptr;
  Transient t;
  bool result_is_a_buffer = true;  // false: a viewed copy, counted as the view's output
};

Phase largest_phase(double live, double own, const std::vector<Copy>& operands,
                    const std::vector<Copy>& reductions) {
  Phase best{Phase::kKernel, 0, live};
  double copies = 0, reduced = 0;
  for (size_t i = 0; i < operands.size(); ++i) {
    const Transient& t = operands[i].t;
    if (live - own + copies + t.peak > best.bytes) best = {Phase::kOperand, i, live - own + copies + t.peak};
    if (operands[i].result_is_a_buffer) copies += t.result;
  }
  if (live + copies > best.bytes) best = {Phase::kKernel, 0, live + copies};
  for (size_t k = 0; k < reductions.size(); ++k) {
    const Transient& t = reductions[k].t;
    if (live + reduced + t.peak > best.bytes) best = {Phase::kReduction, k, live + reduced + t.peak};
    reduced += t.result;
  }
  return best;
}

// Re-runs (recompute.h) before the node at a position: in run order, each
// node and the bytes its restored storage piece allocates there.
struct ReRun {
  NodeId node = kNoNode;
  double bytes = 0;
};

std::vector<std::vector<ReRun>> reruns_by_position(const Graph& graph, const std::vector<char>* recompute,
                                                   const std::vector<StepHolding>& holdings,
                                                   std::span<const StrategyIdx> choice) {
  std::vector<std::vector<ReRun>> at_position(at(graph.size()));
  if (!recompute || recompute->empty()) return at_position;
  const RecomputeCandidates candidates = recompute_candidates_for(graph, *recompute);
  std::vector<int32_t> restore_of(at(graph.size()), -1);
  for (NodeId v = 0; v < graph.size(); ++v) {
    if (!(*recompute)[at(v)] || !candidates.is_candidate(v)) continue;
    for (NodeId x : candidates.rerun[at(v)]) restore_of[at(x)] = candidates.window[at(v)].restore_at;
  }
  std::vector<double> bytes(at(graph.size()), 0.0);
  for (const StepHolding& h : holdings) {
    const int32_t p = restore_of[at(h.tensor)];
    if (p >= 0 && h.start == p && h.tensor < p) bytes[at(h.tensor)] += h.bytes[static_cast<size_t>(choice[at(h.node)])];
  }
  for (NodeId x = 0; x < graph.size(); ++x)
    if (restore_of[at(x)] >= 0) at_position[at(restore_of[at(x)])].push_back({x, bytes[at(x)]});
  return at_position;
}

// The largest moment of the re-runs before the node at a position: each
// re-run's operand copies made one after another, then its output, beside
// what the position held before them (`before`) and the re-runs already made.
struct ReRunPeak {
  double bytes = 0;
  size_t rerun = 0;      // which re-run
  int32_t operand = -1;  // its operand being copied; -1: its kernel
};

ReRunPeak largest_rerun_phase(double before, const std::vector<ReRun>& reruns,
                              const std::vector<std::vector<Copy>>& operands) {
  ReRunPeak best;
  double made = 0;
  for (size_t i = 0; i < reruns.size(); ++i) {
    double copies = 0;
    const std::vector<Copy>& list = operands[at(reruns[i].node)];
    for (size_t k = 0; k < list.size(); ++k) {
      const double now = before + made + copies + list[k].t.peak;
      if (now > best.bytes) best = {now, i, static_cast<int32_t>(k)};
      if (list[k].result_is_a_buffer) copies += list[k].t.result;
    }
    made += reruns[i].bytes;
    if (before + made + copies > best.bytes) best = {before + made + copies, i, -1};
  }
  return best;
}

// The comm buffers held in a phase: the results before it and, for an operand
// or reduction phase, its own transient peak.
void add_phase_buffers(const Graph& graph, const StrategyGraph& sg, std::span<const StrategyIdx> choice,
                       const Phase& phase, int32_t position, const std::vector<Copy>& operands,
                       const std::vector<Copy>& reductions, std::vector<LiveTensor>& out) {
  auto add = [&](const StepRedistribution& r, double bytes) {
    LiveTensor t = describe(graph, sg, choice, r.producer, r.producer, MemoryKind::kCommBuffer);
    t.shape = shape_to_string(graph.node(r.producer).outputs[static_cast<size_t>(r.output_index)].shape);
    t.placement = to_string(r.from) + "->" + to_string(r.to);
    t.bytes = bytes;
    t.start = t.end = position;
    out.push_back(std::move(t));
  };
  const auto& list = phase.kind == Phase::kReduction ? reductions : operands;
  size_t held = phase.kind == Phase::kKernel ? list.size() : phase.index;
  for (size_t i = 0; i < held; ++i) {
    if (list[i].result_is_a_buffer) add(*list[i].r, list[i].t.result);
  }
  if (phase.kind != Phase::kKernel) add(*list[phase.index].r, list[phase.index].t.peak);
}

}  // namespace

MemoryTimeline step_memory(const Graph& graph, const StrategyGraph& sg,
                           std::span<const StrategyIdx> choice,
                           std::span<const StepRedistribution> redistributions,
                           double optimizer_bytes_per_element, const std::vector<int64_t>* device,
                           const std::vector<char>* recompute) {
  struct CountFor {
    explicit CountFor(const std::vector<int64_t>* d) { counted_device = d; }
    ~CountFor() { counted_device = nullptr; }
  } count_for(device);
  MemoryTimeline timeline;
  if (choice.size() != static_cast<size_t>(graph.size()) || graph.size() == 0) return timeline;
  const auto n = static_cast<size_t>(graph.size());
  // Redistributions by the position they run at, in run order (operands by
  // index; reductions in graph output order), each with what it holds.
  std::vector<std::vector<Copy>> operands(n), reductions(n);
  std::vector<char> viewed_copy(n, 0);
  std::set<std::pair<NodeId, NodeId>> reduced_by_copy;  // (output node, placeholder)
  for (const StepRedistribution& r : redistributions) {
    Copy c{&r, transient(graph, r, sg.mesh), !is_viewed_copy(graph, r)};
    if (r.input >= 0) {
      if (!c.result_is_a_buffer) viewed_copy[at(r.consumer)] = 1;
      operands[at(r.consumer)].push_back(c);
    } else {
      reduced_by_copy.emplace(r.producer, r.consumer);
      reductions[at(r.producer)].push_back(c);
    }
  }
  for (auto& list : operands) {
    std::stable_sort(list.begin(), list.end(), [](const Copy& a, const Copy& b) { return a.r->input < b.r->input; });
  }
  // Paired outputs with no redistribution are reduced in place.
  std::vector<char> in_place(graph.outputs().size(), 0);
  for (size_t k = 0; k < graph.outputs().size(); ++k) {
    const GraphOutput& g = graph.outputs()[k];
    in_place[k] = reduced_by_copy.count({g.node, g.placeholder()}) == 0 ? 1 : 0;
  }
  std::vector<StepHolding> holdings =
      step_holdings(graph, sg, optimizer_bytes_per_element, &viewed_copy, &in_place, recompute);
  // Live bytes per kind by difference arrays; own[v]: v's outputs, allocated at v.
  std::vector<MemoryParts> delta(n + 1), own(n);
  // Outputs allocated by the node at h.start (a claimed getitem's output is
  // allocated by its multi-output node).
  auto is_own = [&](const StepHolding& h) {
    // (A recomputed storage's second piece is allocated before the node at its start runs.)
    return h.tensor == h.node && !graph.node(h.node).is_placeholder() && h.start <= h.node;
  };
  for (const StepHolding& h : holdings) {
    double b = h.bytes[static_cast<size_t>(choice[at(h.node)])];
    delta[static_cast<size_t>(h.start)].add(h.kind, b);
    delta[static_cast<size_t>(h.end) + 1].add(h.kind, -b);
    if (is_own(h)) own[static_cast<size_t>(h.start)].add(h.kind, b);
  }
  const std::vector<std::vector<ReRun>> reruns = reruns_by_position(graph, recompute, holdings, choice);
  // The re-runs at p not yet made in a kReRun phase.
  auto unmade = [&](size_t p, const Phase& phase) {
    double bytes = 0;
    for (size_t i = phase.index + (phase.operand >= 0 ? 0 : 1); i < reruns[p].size(); ++i) bytes += reruns[p][i].bytes;
    return bytes;
  };
  timeline.positions.resize(n);
  std::vector<Phase> phases(n);
  MemoryParts now;
  for (size_t p = 0; p < n; ++p) {
    now.params += delta[p].params;
    now.optimizer += delta[p].optimizer;
    now.inputs += delta[p].inputs;
    now.grads += delta[p].grads;
    now.activations += delta[p].activations;
    const auto v = static_cast<int32_t>(p);
    Phase phase = largest_phase(now.total(), own[p].total(), operands[p], reductions[p]);
    if (!reruns[p].empty()) {  // before the node: its re-runs, all held at p
      double restored = 0;
      for (const ReRun& r : reruns[p]) restored += r.bytes;
      ReRunPeak rp = largest_rerun_phase(now.total() - own[p].total() - restored, reruns[p], operands);
      if (rp.bytes > phase.bytes) phase = {Phase::kReRun, rp.rerun, rp.bytes, rp.operand};
    }
    MemoryParts parts = now;
    if (phase.kind == Phase::kOperand || phase.kind == Phase::kReRun) {  // the kernel's outputs are not allocated yet
      parts.grads -= own[p].grads;
      parts.activations -= own[p].activations;
    }
    if (phase.kind == Phase::kReRun) parts.activations -= unmade(p, phase);
    parts.comm_buffers = phase.bytes - parts.total();
    timeline.positions[p] = parts;
    phases[p] = phase;
    if (timeline.peak_position < 0 || phase.bytes > timeline.peak_bytes) {
      timeline.peak_position = v;
      timeline.peak_bytes = phase.bytes;
    }
  }
  const int32_t peak = timeline.peak_position;
  const Phase& phase = phases[static_cast<size_t>(peak)];
  timeline.peak_node = peak;
  timeline.peak = timeline.positions[static_cast<size_t>(peak)];
  std::vector<char> not_yet(n, 0);  // re-runs a kReRun peak has not made
  if (phase.kind == Phase::kReRun) {
    const auto& list = reruns[static_cast<size_t>(peak)];
    for (size_t i = phase.index + (phase.operand >= 0 ? 0 : 1); i < list.size(); ++i) not_yet[at(list[i].node)] = 1;
  }
  for (const StepHolding& h : holdings) {
    if (h.start > peak || peak > h.end) continue;
    if ((phase.kind == Phase::kOperand || phase.kind == Phase::kReRun) && is_own(h) && h.start == peak) continue;
    if (h.start == peak && not_yet[at(h.tensor)]) continue;
    LiveTensor t = describe(graph, sg, choice, h.tensor, h.node, h.kind);
    t.bytes = h.bytes[static_cast<size_t>(choice[at(h.node)])];
    t.start = h.start;
    t.end = h.end;
    timeline.live_at_peak.push_back(std::move(t));
  }
  if (phase.kind == Phase::kReRun) {  // the re-run's operand copies, as an operand phase of it
    const NodeId x = reruns[static_cast<size_t>(peak)][phase.index].node;
    const Phase as_own{phase.operand >= 0 ? Phase::kOperand : Phase::kKernel,
                       static_cast<size_t>(std::max(phase.operand, 0)), phase.bytes};
    add_phase_buffers(graph, sg, choice, as_own, peak, operands[at(x)], {}, timeline.live_at_peak);
  } else {
    add_phase_buffers(graph, sg, choice, phase, peak, operands[static_cast<size_t>(peak)],
                      reductions[static_cast<size_t>(peak)], timeline.live_at_peak);
  }
  std::stable_sort(timeline.live_at_peak.begin(), timeline.live_at_peak.end(),
                   [](const LiveTensor& a, const LiveTensor& b) { return a.bytes > b.bytes; });
  return timeline;
}

}  // namespace autopar
