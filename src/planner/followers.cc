#include "planner/followers.h"

#include <limits>

namespace autopar {
namespace {

size_t sz(NodeId v) { return static_cast<size_t>(v); }

// Views and pointwise ops with exactly one tensor operand.
bool is_follower_op(const Graph& graph, NodeId v) {
  const Node& node = graph.node(v);
  if (node.is_placeholder() || node.inputs.size() != 1 || node.outputs.size() != 1) return false;
  const OpDef& def = op_def(node.op);
  if (def.has(kStructural) || def.has(kComplex)) return false;
  return def.has(kView) || def.has(kPointwise);
}

// For each producer strategy: the cheapest follower strategy taking the
// producer's output sharding unchanged; empty when some strategy has none.
std::vector<StrategyIdx> follow_map(const Graph& graph, NodeId follower,
                                    const NodeStrategies& producer, const NodeStrategies& own) {
  int out = producer_output_index(graph, follower, 0);
  std::vector<StrategyIdx> map(static_cast<size_t>(producer.size()), planner::kNoStrategy);
  for (StrategyIdx i = 0; i < producer.size(); ++i) {
    const Sharding& arriving = producer.output(i, out);
    double best = std::numeric_limits<double>::infinity();
    for (StrategyIdx j = 0; j < own.size(); ++j) {
      if (own.input(j, 0) != arriving) continue;
      double cost = own.compute_s.empty() ? 0.0 : own.cost(j);
      if (cost < best) {
        best = cost;
        map[static_cast<size_t>(i)] = j;
      }
    }
    if (map[static_cast<size_t>(i)] == planner::kNoStrategy) return {};
  }
  return map;
}

}  // namespace

std::vector<planner::Follow> find_followers(const Graph& graph, const StrategyGraph& strategies,
                                            const std::vector<NodeId>& representative,
                                            const std::vector<std::vector<StrategyIdx>>& allowed) {
  std::vector<planner::Follow> follows;
  for (NodeId v = 0; v < graph.size(); ++v) {
    if (representative[sz(v)] != v || !is_follower_op(graph, v)) continue;
    NodeId producer = graph.node(v).inputs[0];
    if (graph.node(producer).op == OpId::kGetItem) continue;  // multi-output producers keep edges
    if (!allowed[sz(v)].empty() || !allowed[sz(producer)].empty()) continue;
    std::vector<StrategyIdx> map =
        follow_map(graph, v, strategies.nodes[sz(producer)], strategies.nodes[sz(v)]);
    if (map.empty()) continue;
    follows.push_back(planner::Follow{producer, v, std::move(map)});
  }
  return follows;
}

}  // namespace autopar
