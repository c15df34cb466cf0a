// Resharding costs of graph edges, for the planner: for the edge feeding input
// i of a consumer, the time to turn each producer strategy's output sharding
// into each consumer strategy's required input sharding.
//
// Costs are computed once per distinct (producer sharding, consumer sharding)
// pair of the edge and memoised across edges in a RedistributionCache, then
// spread to the dense [producer strategy][consumer strategy] matrix.
#pragma once

#include <cstdint>
#include <vector>

#include "sharding/redistribute.h"
#include "sharding/strategy.h"

namespace autopar {

struct EdgeCosts {
  NodeId producer = kNoNode;
  NodeId consumer = kNoNode;
  int32_t input = 0;         // operand index of the consumer
  int32_t output_index = 0;  // which output of the producer
  int32_t rows = 0;          // producer strategies
  int32_t cols = 0;          // consumer strategies
  std::vector<double> time_s;  // row-major [rows][cols], seconds

  double at(StrategyIdx producer_s, StrategyIdx consumer_s) const {
    return time_s[static_cast<size_t>(producer_s) * static_cast<size_t>(cols) +
                  static_cast<size_t>(consumer_s)];
  }
};

EdgeCosts edge_costs(const Graph& graph, const StrategyGraph& strategies, NodeId consumer,
                     int input, RedistributionCache& cache);

// Every edge of the graph, in consumer order then operand order.
std::vector<EdgeCosts> all_edge_costs(const Graph& graph, const StrategyGraph& strategies,
                                      RedistributionCache& cache);

}  // namespace autopar
