#include "report/top_nodes.h"

#include <algorithm>

#include <fmt/format.h>

#include "planner/problem_builder.h"
#include "report/graph_view.h"

namespace autopar::report {
namespace {

// The strategy whose outputs take the fewest bytes per device (lowest index
// among equals, so the suggestion is deterministic).
StrategyIdx smallest_output_strategy(const Graph& graph, const Plan& plan, NodeId node) {
  const NodeStrategies& ns = plan.strategies.nodes[static_cast<size_t>(node)];
  StrategyIdx best = 0;
  double best_bytes = -1;
  for (StrategyIdx s = 0; s < ns.size(); ++s) {
    double bytes = local_output_bytes(graph, node, ns, s, plan.mesh);
    if (best_bytes < 0 || bytes < best_bytes) {
      best = s;
      best_bytes = bytes;
    }
  }
  return best;
}

bool has_input_strategy(const NodeStrategies& ns, int32_t input, const Sharding& sharding) {
  for (StrategyIdx s = 0; s < ns.size(); ++s) {
    if (ns.input(s, input) == sharding) return true;
  }
  return false;
}

bool has_output_strategy(const NodeStrategies& ns, const Sharding& sharding) {
  for (StrategyIdx s = 0; s < ns.size(); ++s) {
    if (ns.num_outputs > 0 && ns.output(s, 0) == sharding) return true;
  }
  return false;
}

void suggest_pin(const Graph& graph, const Plan& plan, CommHotspot& hot) {
  const PlannedRedistribution& r = *hot.redistribution;
  const std::string& producer = graph.node(r.producer).name;
  const std::string& consumer = graph.node(r.consumer).name;
  const auto& nodes = plan.strategies.nodes;
  if (r.input >= 0 && has_input_strategy(nodes[static_cast<size_t>(r.consumer)], r.input, r.from)) {
    hot.pin = fmt::format("{}.in{}={}", consumer, r.input, to_string(r.from));
    hot.pin_effect = fmt::format("{} reads {} as produced", consumer, producer);
  } else if (r.output_index == 0 && has_output_strategy(nodes[static_cast<size_t>(r.producer)], r.to)) {
    hot.pin = fmt::format("{}={}", producer, to_string(r.to));
    hot.pin_effect = fmt::format("{} produces what {} reads", producer, consumer);
  }
}

}  // namespace

std::vector<MemoryHotspot> memory_hotspots(const Graph& graph, const Plan& plan,
                                           const MemoryTimeline& timeline, size_t limit) {
  std::vector<MemoryHotspot> out;
  for (const LiveTensor& tensor : timeline.live_at_peak) {
    if (out.size() >= limit) break;
    MemoryHotspot hot;
    hot.tensor = tensor;
    NodeId v = tensor.node;
    if (v != kNoNode && tensor.kind != MemoryKind::kCommBuffer) {
      const NodeStrategies& ns = plan.strategies.nodes[static_cast<size_t>(v)];
      StrategyIdx now = plan.choice[static_cast<size_t>(v)];
      StrategyIdx best = smallest_output_strategy(graph, plan, v);
      double now_bytes = local_output_bytes(graph, v, ns, now, plan.mesh);
      double best_bytes = local_output_bytes(graph, v, ns, best, plan.mesh);
      if (best_bytes < now_bytes && ns.num_outputs > 0) {
        hot.pin = fmt::format("{}={}", graph.node(v).name, to_string(ns.output(best, 0)));
        hot.pinned_bytes = tensor.bytes * best_bytes / now_bytes;
      }
    }
    out.push_back(std::move(hot));
  }
  return out;
}

std::vector<CommHotspot> comm_hotspots(const Graph& graph, const Plan& plan, size_t limit) {
  std::vector<const PlannedRedistribution*> order;
  for (const PlannedRedistribution& r : plan.redistributions) {
    if (r.plan.time_s > 0) order.push_back(&r);
  }
  // Slowest first; ties in graph order so equal layers list deterministically.
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    return a->plan.time_s > b->plan.time_s;
  });
  if (order.size() > limit) order.resize(limit);
  std::vector<CommHotspot> out;
  for (const PlannedRedistribution* r : order) {
    CommHotspot hot;
    hot.redistribution = r;
    hot.label = collective_label(r->plan, plan.mesh);
    suggest_pin(graph, plan, hot);
    out.push_back(std::move(hot));
  }
  return out;
}

std::string pin_argument(std::string_view pin) {
  std::string quoted = "--pin '";
  for (char c : pin) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

}  // namespace autopar::report
