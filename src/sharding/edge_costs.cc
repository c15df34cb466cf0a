#include "sharding/edge_costs.h"

#include <algorithm>

namespace autopar {
namespace {

// Buffers reused across edges so the loop over ~10k edges allocates only the
// matrices it returns.
struct Scratch {
  std::vector<uint64_t> from_keys, to_keys;
  std::vector<Sharding> from, to;
  std::vector<int32_t> from_index, to_index;
};

// Maps each strategy's sharding to its index among the distinct ones.
void add_distinct(const Sharding& s, std::vector<uint64_t>& keys, std::vector<Sharding>& unique,
                  std::vector<int32_t>& index) {
  uint64_t key = s.key();
  auto it = std::find(keys.begin(), keys.end(), key);
  index.push_back(static_cast<int32_t>(it - keys.begin()));
  if (it == keys.end()) {
    keys.push_back(key);
    unique.push_back(s);
  }
}

EdgeCosts edge_costs_with(const Graph& graph, const StrategyGraph& strategies, NodeId consumer,
                          int input, RedistributionCache& cache, Scratch& k) {
  EdgeCosts e;
  e.consumer = consumer;
  e.input = input;
  e.producer = graph.node(consumer).inputs[static_cast<size_t>(input)];
  e.output_index = producer_output_index(graph, consumer, input);
  const NodeStrategies& ps = strategies.nodes[static_cast<size_t>(e.producer)];
  const NodeStrategies& cs = strategies.nodes[static_cast<size_t>(consumer)];
  e.rows = ps.size();
  e.cols = cs.size();
  k.from_keys.clear(), k.to_keys.clear(), k.from.clear(), k.to.clear();
  k.from_index.clear(), k.to_index.clear();
  for (StrategyIdx s = 0; s < e.rows; ++s) {
    add_distinct(ps.output(s, e.output_index), k.from_keys, k.from, k.from_index);
  }
  for (StrategyIdx s = 0; s < e.cols; ++s) add_distinct(cs.input(s, input), k.to_keys, k.to, k.to_index);
  RedistributionCache::MetaId meta = cache.intern(input_meta(graph, consumer, input));
  const size_t nt = k.to.size();
  const std::vector<double>& small = cache.block(meta, k.from, k.to);
  e.time_s.resize(static_cast<size_t>(e.rows) * static_cast<size_t>(e.cols));
  for (StrategyIdx r = 0; r < e.rows; ++r) {
    const double* row = &small[static_cast<size_t>(k.from_index[static_cast<size_t>(r)]) * nt];
    double* out = &e.time_s[static_cast<size_t>(r) * static_cast<size_t>(e.cols)];
    for (StrategyIdx c = 0; c < e.cols; ++c) out[c] = row[k.to_index[static_cast<size_t>(c)]];
  }
  return e;
}

}  // namespace

EdgeCosts edge_costs(const Graph& graph, const StrategyGraph& strategies, NodeId consumer,
                     int input, RedistributionCache& cache) {
  Scratch scratch;
  return edge_costs_with(graph, strategies, consumer, input, cache, scratch);
}

std::vector<EdgeCosts> all_edge_costs(const Graph& graph, const StrategyGraph& strategies,
                                      RedistributionCache& cache) {
  std::vector<EdgeCosts> edges;
  Scratch scratch;
  for (NodeId id = 0; id < graph.size(); ++id) {
    for (size_t i = 0; i < graph.node(id).inputs.size(); ++i) {
      edges.push_back(edge_costs_with(graph, strategies, id, static_cast<int>(i), cache, scratch));
    }
  }
  return edges;
}

}  // namespace autopar
