#include "memory/liveness.h"

#include <algorithm>
#include <map>
#include <queue>
#include <utility>

#include "sharding/strategy.h"

namespace autopar {
namespace {

StorageRole role_of(const Node& node) {
  if (!node.is_placeholder()) return StorageRole::kActivation;
  switch (node.kind) {
    case PlaceholderKind::kParam: return StorageRole::kParam;
    case PlaceholderKind::kBuffer: return StorageRole::kBuffer;
    default: return StorageRole::kActivation;
  }
}

}  // namespace

bool aliases_input(const Node& node) {
  return node.op == OpId::kGetItem || op_def(node.op).has(kView);
}

Liveness analyze_liveness(const Graph& graph, const std::vector<char>* own_storage) {
  const auto n = static_cast<size_t>(graph.size());
  Liveness live;
  live.storage_root.resize(n);
  live.start.assign(n, -1);
  live.end.assign(n, -1);
  live.role.assign(n, StorageRole::kActivation);
  live.claims_output_of.assign(n, kNoNode);
  std::map<std::pair<NodeId, int>, NodeId> claimers;
  for (NodeId id = 0; id < graph.size(); ++id) {
    const Node& node = graph.node(id);
    auto i = static_cast<size_t>(id);
    bool owns = own_storage && (*own_storage)[i];
    // The first getitem of each output of a multi-output node owns that
    // output's storage from the node on: each output is its own tensor.
    NodeId claimer = kNoNode;
    if (node.op == OpId::kGetItem && !owns && graph.node(node.inputs[0]).outputs.size() > 1) {
      NodeId m = node.inputs[0];
      auto key = std::make_pair(m, producer_output_index(graph, id, 0));
      auto [it, first] = claimers.emplace(key, id);
      if (first) live.claims_output_of[i] = m;
      else claimer = it->second;
    }
    if (claimer != kNoNode) {
      live.storage_root[i] = live.storage_root[static_cast<size_t>(claimer)];
      continue;
    }
    if (aliases_input(node) && !node.inputs.empty() && !owns && live.claims_output_of[i] == kNoNode) {
      live.storage_root[i] = live.storage_root[static_cast<size_t>(node.inputs[0])];
      continue;
    }
    live.storage_root[i] = id;
    live.start[i] = live.claims_output_of[i] != kNoNode ? live.claims_output_of[i]
                    : node.is_placeholder()             ? 0
                                                        : id;
    live.end[i] = live.start[i];
    live.role[i] = role_of(node);
  }
  for (NodeId id = 0; id < graph.size(); ++id) {
    for (NodeId input : graph.node(id).inputs) {
      auto root = static_cast<size_t>(live.storage_root[static_cast<size_t>(input)]);
      live.end[root] = std::max(live.end[root], id);
    }
  }
  // The node holds all its outputs until its last getitem has run.
  for (size_t i = 0; i < n; ++i) {
    NodeId m = live.claims_output_of[i];
    if (m != kNoNode) live.end[i] = std::max(live.end[i], live.end[static_cast<size_t>(m)]);
  }
  const int32_t last = graph.size() - 1;
  for (const GraphOutput& out : graph.outputs()) {
    auto root = static_cast<size_t>(live.storage_root[static_cast<size_t>(out.node)]);
    // A gradient or buffer update is reduced to its placeholder's placement
    // as soon as its node has run, and this copy freed (step_memory.h); the
    // loss stays to the end.
    live.end[root] = out.placeholder() == kNoNode ? last : std::max(live.end[root], out.node);
    if (out.kind == OutputKind::kGradient) live.role[root] = StorageRole::kGradient;
  }
  for (size_t i = 0; i < n; ++i) {
    if (live.storage_root[i] != static_cast<NodeId>(i)) continue;
    if (live.role[i] == StorageRole::kParam || live.role[i] == StorageRole::kBuffer) {
      live.end[i] = last;  // resident for the whole step
    }
  }
  return live;
}

std::vector<int32_t> peak_candidate_points(const Liveness& live) {
  return peak_candidate_points(live.start, live.end, static_cast<int32_t>(live.start.size()));
}

std::vector<int32_t> peak_candidate_points(const std::vector<int32_t>& start,
                                           const std::vector<int32_t>& end, int32_t positions) {
  const auto n = static_cast<size_t>(positions);
  // max_start[t]: latest allocation among storages live at t. A candidate t is
  // dominated by the previous candidate p when p >= max_start[t]: everything
  // live at t was then already live at p (all of it ends at or after t > p).
  std::vector<bool> is_end(n, false);
  std::vector<std::vector<size_t>> starting(n);
  for (size_t i = 0; i < start.size(); ++i) {
    if (start[i] < 0) continue;
    is_end[static_cast<size_t>(end[i])] = true;
    starting[static_cast<size_t>(start[i])].push_back(i);
  }
  // Max-heap of (start, interval) over intervals begun so far; entries that
  // have died are dropped lazily when they reach the top.
  std::priority_queue<std::pair<int32_t, size_t>> allocated;
  std::vector<int32_t> points;
  int32_t previous = -1;
  for (int32_t t = 0; t < positions; ++t) {
    for (size_t i : starting[static_cast<size_t>(t)]) allocated.emplace(t, i);
    while (!allocated.empty() && end[allocated.top().second] < t) allocated.pop();
    if (!is_end[static_cast<size_t>(t)]) continue;
    int32_t max_start = allocated.empty() ? -1 : allocated.top().first;
    if (previous < 0 || previous < max_start) points.push_back(t);
    previous = t;
  }
  return points;
}

std::vector<NodeId> live_at(const Liveness& live, int32_t t, StorageRole role) {
  std::vector<NodeId> out;
  for (size_t s = 0; s < live.start.size(); ++s) {
    if (live.start[s] >= 0 && live.start[s] <= t && live.end[s] >= t && live.role[s] == role) {
      out.push_back(static_cast<NodeId>(s));
    }
  }
  return out;
}

}  // namespace autopar
