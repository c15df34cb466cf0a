#include "planner/recompute_choices.h"

namespace autopar {
namespace {

size_t at(NodeId v) { return static_cast<size_t>(v); }

}  // namespace

RecomputeChoices::RecomputeChoices(const Graph& graph, const StrategyGraph& sg,
                                   const std::vector<NodeId>& rep, RecomputeMode mode)
    : sg_(sg), mode_(mode), rep_(rep) {
  if (mode == RecomputeMode::kNone) return;
  const bool full = mode == RecomputeMode::kFull;
  candidates_ = full ? find_layer_recompute(graph) : find_recompute_candidates(graph);
  // A layer member takes its representative's strategy index, so a group is
  // doubled only when every member is a candidate; with whole layers, a layer
  // is re-run only when every one of its candidates is doubled.
  std::vector<char> group_ok(at(graph.size()), 1);
  std::vector<char> layer_ok(candidates_.layers.size(), 1);
  for (NodeId v = 0; v < graph.size(); ++v)
    if (!candidates_.is_candidate(v)) group_ok[at(rep[at(v)])] = 0;
  for (bool changed = true; changed && full;) {
    changed = false;
    for (NodeId v = 0; v < graph.size(); ++v) {
      if (!candidates_.is_candidate(v)) continue;
      auto l = static_cast<size_t>(candidates_.layer[at(v)]);
      if (group_ok[at(rep[at(v)])] == layer_ok[l]) continue;
      group_ok[at(rep[at(v)])] = layer_ok[l] = 0;
      changed = true;
    }
  }
  doubled_.assign(at(graph.size()), 0);
  for (NodeId v = 0; v < graph.size(); ++v) {
    if (!candidates_.is_candidate(v) || !group_ok[at(rep[at(v)])]) continue;
    doubled_[at(v)] = 1;
    ++doubled_count_;
  }
  for (auto [u, v] : candidates_.exclusive) exclusive_.emplace(rep[at(u)], rep[at(v)]);
  if (mode == RecomputeMode::kFull) choose_all(graph);
  for (NodeId v = 0; v < graph.size(); ++v) {
    if (!doubled_[at(v)]) continue;
    for (NodeId x : candidates_.rerun[at(v)])
      if (x != v) reruns_.emplace(rep[at(v)], rep[at(x)]);
  }
}

void RecomputeChoices::double_node(NodeId v, planner::ProblemNode& node,
                                   std::vector<StrategyIdx>& allowed) const {
  const NodeStrategies& ns = sg_.nodes[at(v)];
  const size_t n = node.costs.size();
  node.costs.resize(2 * n);
  for (size_t s = 0; s < n; ++s) {
    double again = ns.compute_s[s] + (ns.sync_s.empty() ? 0.0 : ns.sync_s[s]);
    node.costs[n + s] = node.costs[s] + again;
  }
  auto twice = [](std::vector<double>& bytes) {
    if (!bytes.empty()) bytes.insert(bytes.end(), bytes.begin(), bytes.end());
  };
  twice(node.bytes);
  twice(node.static_bytes);
  std::vector<StrategyIdx> base = allowed;
  if (base.empty())
    for (size_t s = 0; s < n; ++s) base.push_back(static_cast<StrategyIdx>(s));
  const bool full = mode_ == RecomputeMode::kFull;
  allowed.clear();
  if (!full || !forced_[at(rep_[at(v)])]) allowed = base;
  if (!full || forced_[at(rep_[at(v)])])
    for (StrategyIdx s : base) allowed.push_back(static_cast<StrategyIdx>(n) + s);
  if (!full && base.size() == n) allowed.clear();  // unpinned stays unpinned
}

void RecomputeChoices::choose_all(const Graph& graph) {
  // In graph order, every doubled group whose representative is not excluded
  // by one already chosen (a producer wins over its reader).
  forced_.assign(at(graph.size()), 0);
  for (NodeId v = 0; v < graph.size(); ++v) {
    if (!doubled_[at(v)] || rep_[at(v)] != v) continue;
    bool excluded = false;
    for (auto [u, w] : exclusive_)
      if (w == v && forced_[at(u)]) excluded = true;
    forced_[at(v)] = excluded ? 0 : 1;
  }
}

std::vector<double> RecomputeChoices::expand_edge(NodeId src, NodeId dst, int32_t input,
                                                  std::vector<double> costs) const {
  const bool ds = doubled(src), dd = doubled(dst);
  if (!ds && !dd) return costs;
  const size_t ns = sg_.nodes[at(src)].size(), nd = sg_.nodes[at(dst)].size();
  const size_t ns2 = ds ? 2 * ns : ns, nd2 = dd ? 2 * nd : nd;
  const bool rerun_view = ds && input == 0 && reruns_.count({src, dst}) > 0;
  const bool exclusive = input == kRecomputeExclusive;
  std::vector<double> out(ns2 * nd2);
  for (size_t i = 0; i < ns2; ++i) {
    for (size_t j = 0; j < nd2; ++j) {
      double c = costs[(i % ns) * nd + (j % nd)];
      const bool src_again = i >= ns, dst_again = j >= nd;
      if (dst_again && input >= 0) c *= 2;
      if (src_again && rerun_view) c = 2 * c + sg_.nodes[at(dst)].compute_s[j % nd];
      if (exclusive) c = src_again && dst_again ? planner::kInfiniteCost : 0.0;
      out[i * nd2 + j] = c;
    }
  }
  return out;
}

std::vector<std::pair<NodeId, NodeId>> RecomputeChoices::exclusive_pairs() const {
  std::vector<std::pair<NodeId, NodeId>> out;
  for (auto [u, v] : candidates_.exclusive)
    if (doubled(u) && doubled(v)) out.emplace_back(u, v);
  return out;
}

std::shared_ptr<const std::vector<double>> RecomputeChoices::expand_pair(
    NodeId src, NodeId dst, std::shared_ptr<const std::vector<double>> bytes) const {
  if (!doubled(src) && !doubled(dst)) return bytes;
  const size_t ns = sg_.nodes[at(src)].size(), nd = sg_.nodes[at(dst)].size();
  const size_t ns2 = doubled(src) ? 2 * ns : ns, nd2 = doubled(dst) ? 2 * nd : nd;
  auto out = std::make_shared<std::vector<double>>(ns2 * nd2);
  for (size_t i = 0; i < ns2; ++i)
    for (size_t j = 0; j < nd2; ++j) (*out)[i * nd2 + j] = (*bytes)[(i % ns) * nd + (j % nd)];
  return out;
}

std::pair<StrategyIdx, bool> RecomputeChoices::decode(NodeId v, StrategyIdx s) const {
  const auto n = static_cast<StrategyIdx>(sg_.nodes[at(v)].size());
  if (!doubled(v) || s < n) return {s, false};
  return {s - n, true};
}

}  // namespace autopar
