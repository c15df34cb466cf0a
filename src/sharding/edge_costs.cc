#include "sharding/edge_costs.h"

#include <algorithm>

namespace autopar {
namespace {

// Maps each strategy to the index of its sharding among the distinct ones.
void distinct(const std::vector<Sharding>& all, std::vector<Sharding>& unique,
              std::vector<int32_t>& index) {
  unique.clear();
  index.clear();
  for (const Sharding& s : all) {
    auto it = std::find(unique.begin(), unique.end(), s);
    index.push_back(static_cast<int32_t>(it - unique.begin()));
    if (it == unique.end()) unique.push_back(s);
  }
}

}  // namespace

EdgeCosts edge_costs(const Graph& graph, const StrategyGraph& strategies, NodeId consumer,
                     int input, RedistributionCache& cache) {
  EdgeCosts e;
  e.consumer = consumer;
  e.input = input;
  e.producer = graph.node(consumer).inputs[static_cast<size_t>(input)];
  e.output_index = producer_output_index(graph, consumer, input);
  const NodeStrategies& ps = strategies.nodes[static_cast<size_t>(e.producer)];
  const NodeStrategies& cs = strategies.nodes[static_cast<size_t>(consumer)];
  e.rows = ps.size();
  e.cols = cs.size();
  std::vector<Sharding> from_all, to_all, from, to;
  for (StrategyIdx s = 0; s < e.rows; ++s) from_all.push_back(ps.output(s, e.output_index));
  for (StrategyIdx s = 0; s < e.cols; ++s) to_all.push_back(cs.input(s, input));
  std::vector<int32_t> from_index, to_index;
  distinct(from_all, from, from_index);
  distinct(to_all, to, to_index);
  RedistributionCache::MetaId meta = cache.intern(input_meta(graph, consumer, input));
  std::vector<double> small(from.size() * to.size());
  for (size_t i = 0; i < from.size(); ++i) {
    for (size_t j = 0; j < to.size(); ++j) small[i * to.size() + j] = cache.time(meta, from[i], to[j]);
  }
  e.time_s.resize(static_cast<size_t>(e.rows) * static_cast<size_t>(e.cols));
  for (StrategyIdx r = 0; r < e.rows; ++r) {
    const double* row = &small[static_cast<size_t>(from_index[static_cast<size_t>(r)]) * to.size()];
    double* out = &e.time_s[static_cast<size_t>(r) * static_cast<size_t>(e.cols)];
    for (StrategyIdx c = 0; c < e.cols; ++c) out[c] = row[to_index[static_cast<size_t>(c)]];
  }
  return e;
}

std::vector<EdgeCosts> all_edge_costs(const Graph& graph, const StrategyGraph& strategies,
                                      RedistributionCache& cache) {
  std::vector<EdgeCosts> edges;
  for (NodeId id = 0; id < graph.size(); ++id) {
    for (size_t i = 0; i < graph.node(id).inputs.size(); ++i) {
      edges.push_back(edge_costs(graph, strategies, id, static_cast<int>(i), cache));
    }
  }
  return edges;
}

}  // namespace autopar
