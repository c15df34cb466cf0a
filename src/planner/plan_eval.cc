// evaluate_plan: what a chosen assignment costs, computed directly from the
// graph (not from the solver's objective, which tests compare it against).
#include <algorithm>
#include <map>

#include "planner/auto_plan.h"
#include "planner/problem_builder.h"

namespace autopar {
namespace {

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

// The all-reduces sync strategies run inside their ops (SyncBatchNorm), as
// communication of the plan.
void add_sync_volumes(const Graph& graph, Plan& plan,
                      std::map<std::pair<Collective, MeshDim>, CommVolume>& volumes) {
  for (NodeId v = 0; v < graph.size(); ++v) {
    const NodeStrategies& ns = plan.strategies.nodes[static_cast<size_t>(v)];
    StrategyIdx s = plan.choice[static_cast<size_t>(v)];
    if (ns.sync_mask(s) == 0) continue;
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
        double t = collective_time(Collective::kAllReduce,
                                   plan.mesh.dims[static_cast<size_t>(m)].group, bytes);
        vol.time_s += t;
        plan.summary.comm_s += t;
      }
    }
  }
}

void summarise_comm(const Graph& graph, Plan& plan) {
  std::map<std::pair<Collective, MeshDim>, CommVolume> volumes;
  plan.summary.comm_s = 0;
  add_sync_volumes(graph, plan, volumes);
  for (const PlannedRedistribution& r : plan.redistributions) {
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

void summarise_memory(const Graph& graph, Plan& plan) {
  MemoryTimeline timeline = plan_memory(graph, plan);
  MemoryBreakdown& m = plan.summary.memory;
  m = MemoryBreakdown{};
  static_cast<MemoryParts&>(m) = timeline.peak;
  m.peak = timeline.peak_bytes;
  m.peak_position = timeline.peak_position;
  plan.summary.fits = m.peak <= plan.summary.memory_budget;
}

}  // namespace

MemoryTimeline plan_memory(const Graph& graph, const Plan& plan, const std::vector<int64_t>* device) {
  std::vector<StepRedistribution> redistributions;
  redistributions.reserve(plan.redistributions.size());
  for (const PlannedRedistribution& r : plan.redistributions) {
    redistributions.push_back({r.producer, r.output_index, r.consumer, r.input, r.from, r.to, &r.plan});
  }
  return step_memory(graph, plan.strategies, plan.choice, redistributions,
                     optimizer_bytes_per_element(plan.optimizer), device);
}

void evaluate_plan(const Graph& graph, Plan& plan) {
  plan.summary.compute_s = 0;
  plan.summary.optimizer_s = 0;
  for (NodeId v = 0; v < graph.size(); ++v) {
    const NodeStrategies& ns = plan.strategies.nodes[static_cast<size_t>(v)];
    auto s = static_cast<size_t>(plan.choice[static_cast<size_t>(v)]);
    plan.summary.compute_s += ns.compute_s[s];
    if (!ns.update_s.empty()) plan.summary.optimizer_s += ns.update_s[s];
  }
  collect_redistributions(graph, plan);
  summarise_comm(graph, plan);
  summarise_generic_ops(graph, plan);
  count_uneven_nodes(graph, plan);
  summarise_memory(graph, plan);
  plan.summary.step_time_s = plan.summary.compute_s + plan.summary.comm_s + plan.summary.optimizer_s;
}

}  // namespace autopar
