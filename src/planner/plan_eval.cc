// evaluate_plan: what a chosen assignment costs, computed directly from the
// graph (not from the solver's objective, which tests compare it against).
#include <algorithm>
#include <map>

#include "memory/recompute.h"
#include "planner/auto_plan.h"
#include "planner/problem_builder.h"

namespace autopar {
namespace {

MemoryTimeline memory_of(const Graph& graph, const Plan& plan, const std::vector<int64_t>* device,
                         const std::vector<char>& recompute);

void add_redistribution(const Graph& graph, Plan& plan, NodeId producer, NodeId consumer,
                        int32_t input, int32_t output_index, const Sharding& from,
                        const Sharding& to) {
  if (from == to) return;
  const TensorMeta& meta = graph.node(producer).outputs[static_cast<size_t>(output_index)];
  PlannedRedistribution r;
  r.producer = producer;
  r.consumer = consumer;
  r.input = input;
  r.output_index = output_index;
  r.from = from;
  r.to = to;
  r.plan = plan_redistribution(meta, from, to, plan.mesh);
  plan.redistributions.push_back(std::move(r));
}

void collect_redistributions(const Graph& graph, Plan& plan) {
  plan.redistributions.clear();
  const auto& sg = plan.strategies.nodes;
  for (NodeId v = 0; v < graph.size(); ++v) {
    const Node& node = graph.node(v);
    StrategyIdx sv = plan.choice[static_cast<size_t>(v)];
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      NodeId u = node.inputs[i];
      int out = producer_output_index(graph, v, static_cast<int>(i));
      add_redistribution(graph, plan, u, v, static_cast<int32_t>(i), out,
                         sg[static_cast<size_t>(u)].output(plan.choice[static_cast<size_t>(u)], out),
                         sg[static_cast<size_t>(v)].input(sv, static_cast<int>(i)));
    }
  }
  for (const GraphOutput& g : graph.outputs()) {
    NodeId p = g.placeholder();  // a gradient's param, an update's buffer
    if (p == kNoNode) continue;
    add_redistribution(graph, plan, g.node, p, -1, 0,
                       sg[static_cast<size_t>(g.node)].output(plan.choice[static_cast<size_t>(g.node)], 0),
                       sg[static_cast<size_t>(p)].output(plan.choice[static_cast<size_t>(p)], 0));
  }
}

using Volumes = std::map<std::pair<Collective, MeshDim>, CommVolume>;

// The all-reduces a sync strategy runs inside its op (SyncBatchNorm), as
// communication of the plan, for one run of node v.
void add_sync_volumes(const Graph& graph, Plan& plan, NodeId v, Volumes& volumes) {
  const NodeStrategies& ns = plan.strategies.nodes[static_cast<size_t>(v)];
  StrategyIdx s = plan.choice[static_cast<size_t>(v)];
  if (ns.sync_mask(s) == 0) return;
  std::vector<const TensorMeta*> inputs;
  for (size_t i = 0; i < graph.node(v).inputs.size(); ++i) {
    inputs.push_back(&input_meta(graph, v, static_cast<int>(i)));
  }
  std::vector<double> buffers = sync_buffer_bytes(ns, s, inputs, graph.node(v).outputs, plan.mesh);
  for (MeshDim m = 0; m < plan.mesh.ndim(); ++m) {
    if (!(ns.sync_mask(s) & (1u << m))) continue;
    for (double bytes : buffers) {
      CommVolume& vol = volumes[{Collective::kAllReduce, m}];
      vol.collective = Collective::kAllReduce;
      vol.mesh_dim = m;
      ++vol.count;
      vol.buffer_bytes += bytes;
      vol.sent_bytes += collective_sent_bytes(Collective::kAllReduce, plan.mesh.size(m), bytes);
      double t = collective_time(Collective::kAllReduce, plan.mesh.dims[static_cast<size_t>(m)].group, bytes);
      vol.time_s += t;
      plan.summary.comm_s += t;
    }
  }
}

void add_redistribution_volumes(const PlannedRedistribution& r, Plan& plan, Volumes& volumes) {
  plan.summary.comm_s += r.plan.time_s;
  for (const RedistStep& step : r.plan.steps) {
    CommVolume& v = volumes[{step.collective, step.mesh_dim}];
    v.collective = step.collective;
    v.mesh_dim = step.mesh_dim;
    ++v.count;
    v.buffer_bytes += step.buffer_bytes;
    v.sent_bytes += step.sent_bytes;
    v.time_s += step.time_s;
  }
}

// Every sync all-reduce and operand redistribution once per run of its node
// (runs: 2 for a recomputed node, node_runs), every pairing once.
void summarise_comm(const Graph& graph, Plan& plan, const std::vector<int>& runs) {
  Volumes volumes;
  plan.summary.comm_s = 0;
  for (NodeId v = 0; v < graph.size(); ++v)
    for (int run = 0; run < runs[static_cast<size_t>(v)]; ++run) add_sync_volumes(graph, plan, v, volumes);
  for (const PlannedRedistribution& r : plan.redistributions) {
    const int times = r.input >= 0 ? runs[static_cast<size_t>(r.consumer)] : 1;
    for (int run = 0; run < times; ++run) add_redistribution_volumes(r, plan, volumes);
  }
  plan.summary.comm.clear();
  for (auto& [key, v] : volumes) plan.summary.comm.push_back(v);
}

void summarise_generic_ops(const Graph& graph, Plan& plan) {
  std::map<std::string_view, GenericOpUse> uses;
  for (NodeId v = 0; v < graph.size(); ++v) {
    const Node& node = graph.node(v);
    if (node.op != OpId::kGeneric) continue;
    GenericOpUse& use = uses[node.aten];
    use.op = node.aten;
    ++use.nodes;
    const NodeStrategies& ns = plan.strategies.nodes[static_cast<size_t>(v)];
    use.compute_s += ns.compute_s[static_cast<size_t>(plan.choice[static_cast<size_t>(v)])];
  }
  for (const PlannedRedistribution& r : plan.redistributions) {
    if (r.input < 0 || graph.node(r.consumer).op != OpId::kGeneric) continue;
    uses[graph.node(r.consumer).aten].input_comm_s += r.plan.time_s;
  }
  plan.summary.generic_ops.clear();
  for (auto& [op, use] : uses) plan.summary.generic_ops.push_back(use);
  std::stable_sort(plan.summary.generic_ops.begin(), plan.summary.generic_ops.end(),
                   [](const GenericOpUse& a, const GenericOpUse& b) {
                     return a.input_comm_s + a.compute_s > b.input_comm_s + b.compute_s;
                   });
}

// Nodes whose chosen strategy holds some result or operand in uneven pieces.
void count_uneven_nodes(const Graph& graph, Plan& plan) {
  int32_t count = 0;
  for (NodeId v = 0; v < graph.size(); ++v) {
    count += strategy_is_uneven(graph, v, plan.strategies.nodes[static_cast<size_t>(v)],
                                plan.choice[static_cast<size_t>(v)], plan.mesh);
  }
  plan.summary.uneven_nodes = count;
}

// What the re-runs of recomputed roots cost (memory/recompute.h), already in
// the totals: each re-run node's compute, its all-reduces and its operands'
// redistributions once more.
void summarise_recompute(const Graph& graph, const RecomputeCandidates& candidates, Plan& plan) {
  PlanSummary& sum = plan.summary;
  sum.recomputed = sum.recomputed_layers = 0;
  sum.recompute_compute_s = sum.recompute_comm_s = 0;
  if (plan.recompute.empty()) return;
  const RedistributionIndex index(plan);
  std::vector<char> layer_seen(candidates.layers.size(), 0);
  for (NodeId v = 0; v < graph.size(); ++v) {
    if (!plan.recompute[static_cast<size_t>(v)] || !candidates.is_candidate(v)) continue;
    ++sum.recomputed;
    if (!candidates.layer.empty()) {
      char& seen = layer_seen[static_cast<size_t>(candidates.layer[static_cast<size_t>(v)])];
      sum.recomputed_layers += seen ? 0 : 1;
      seen = 1;
    }
    for (NodeId x : candidates.rerun[static_cast<size_t>(v)]) {
      const NodeStrategies& ns = plan.strategies.nodes[static_cast<size_t>(x)];
      auto s = static_cast<size_t>(plan.choice[static_cast<size_t>(x)]);
      sum.recompute_compute_s += ns.compute_s[s];
      if (!ns.sync_s.empty()) sum.recompute_comm_s += ns.sync_s[s];
      for (size_t i = 0; i < graph.node(x).inputs.size(); ++i)
        if (const PlannedRedistribution* r = index.find(x, static_cast<int32_t>(i))) sum.recompute_comm_s += r->plan.time_s;
    }
  }
}

// How often each node runs in the step: twice for a recomputed root's re-run
// nodes, once otherwise.
std::vector<int> node_runs(const Graph& graph, const RecomputeCandidates& candidates, const Plan& plan) {
  std::vector<int> runs(static_cast<size_t>(graph.size()), 1);
  if (plan.recompute.empty()) return runs;
  for (NodeId v = 0; v < graph.size(); ++v) {
    if (!plan.recompute[static_cast<size_t>(v)] || !candidates.is_candidate(v)) continue;
    for (NodeId x : candidates.rerun[static_cast<size_t>(v)]) runs[static_cast<size_t>(x)] = 2;
  }
  return runs;
}

void summarise_memory(const Graph& graph, Plan& plan) {
  MemoryTimeline timeline = plan_memory(graph, plan);
  MemoryBreakdown& m = plan.summary.memory;
  m = MemoryBreakdown{};
  static_cast<MemoryParts&>(m) = timeline.peak;
  m.peak = timeline.peak_bytes;
  m.peak_position = timeline.peak_position;
  plan.summary.fits = m.peak <= plan.summary.memory_budget;
  plan.summary.peak_without_recompute = m.peak;
  if (plan.summary.recomputed > 0) {
    static const std::vector<char> kNothingRecomputed;
    plan.summary.peak_without_recompute = memory_of(graph, plan, nullptr, kNothingRecomputed).peak_bytes;
  }
}

}  // namespace

MemoryTimeline plan_memory(const Graph& graph, const Plan& plan, const std::vector<int64_t>* device) {
  return memory_of(graph, plan, device, plan.recompute);
}

namespace {

MemoryTimeline memory_of(const Graph& graph, const Plan& plan, const std::vector<int64_t>* device,
                         const std::vector<char>& recompute) {
  std::vector<StepRedistribution> redistributions;
  redistributions.reserve(plan.redistributions.size());
  for (const PlannedRedistribution& r : plan.redistributions) {
    redistributions.push_back({r.producer, r.output_index, r.consumer, r.input, r.from, r.to, &r.plan});
  }
  return step_memory(graph, plan.strategies, plan.choice, redistributions,
                     optimizer_bytes_per_element(plan.optimizer), device, &recompute);
}

}  // namespace

void evaluate_plan(const Graph& graph, Plan& plan) {
  plan.summary.compute_s = 0;
  plan.summary.optimizer_s = 0;
  const RecomputeCandidates candidates =
      plan.recompute.empty() ? RecomputeCandidates{} : recompute_candidates_for(graph, plan.recompute);
  const std::vector<int> runs = node_runs(graph, candidates, plan);
  for (NodeId v = 0; v < graph.size(); ++v) {
    const NodeStrategies& ns = plan.strategies.nodes[static_cast<size_t>(v)];
    auto s = static_cast<size_t>(plan.choice[static_cast<size_t>(v)]);
    plan.summary.compute_s += runs[static_cast<size_t>(v)] * ns.compute_s[s];
    if (!ns.update_s.empty()) plan.summary.optimizer_s += ns.update_s[s];
  }
  collect_redistributions(graph, plan);
  summarise_comm(graph, plan, runs);
  summarise_recompute(graph, candidates, plan);
  summarise_generic_ops(graph, plan);
  count_uneven_nodes(graph, plan);
  summarise_memory(graph, plan);
  plan.summary.step_time_s = plan.summary.compute_s + plan.summary.comm_s + plan.summary.optimizer_s;
}

}  // namespace autopar
