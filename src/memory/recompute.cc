#include "memory/recompute.h"

#include <algorithm>

#include "memory/liveness.h"

namespace autopar {
namespace {

size_t at(NodeId v) { return static_cast<size_t>(v); }

// Per storage root: the last read at or before the loss, the first after it.
struct Reads {
  std::vector<int32_t> last_forward, first_backward;
};

Reads storage_reads(const Graph& graph, const Liveness& live, NodeId loss) {
  Reads r;
  r.last_forward.assign(at(graph.size()), -1);
  r.first_backward.assign(at(graph.size()), -1);
  for (NodeId w = 0; w < graph.size(); ++w) {
    for (NodeId u : graph.node(w).inputs) {
      auto root = at(live.storage_root[at(u)]);
      if (w <= loss) r.last_forward[root] = std::max(r.last_forward[root], w);
      else if (r.first_backward[root] < 0) r.first_backward[root] = w;
    }
  }
  return r;
}

// v, then the forward views of v's storage (aliases: those views, in graph
// order) that some node at or after restore_at reads, with the views they are
// made from.
std::vector<NodeId> rerun_list(const Graph& graph, NodeId v, const std::vector<NodeId>& aliases,
                               int32_t restore_at, const std::vector<int32_t>& last_reader) {
  std::vector<char> needed(aliases.size(), 0);
  for (size_t i = aliases.size(); i-- > 0;) {
    NodeId a = aliases[i];
    if (last_reader[at(a)] >= restore_at) needed[i] = 1;
    if (!needed[i]) continue;
    NodeId from = graph.node(a).inputs[0];
    for (size_t j = 0; j < i; ++j)
      if (aliases[j] == from) needed[j] = 1;
  }
  std::vector<NodeId> out{v};
  for (size_t i = 0; i < aliases.size(); ++i)
    if (needed[i]) out.push_back(aliases[i]);
  return out;
}

}  // namespace

std::string_view recompute_mode_name(RecomputeMode mode) {
  switch (mode) {
    case RecomputeMode::kNone: return "none";
    case RecomputeMode::kAuto: return "auto";
    case RecomputeMode::kFull: return "full";
  }
  return "?";
}

bool parse_recompute_mode(std::string_view name, RecomputeMode& mode) {
  if (name == "none") mode = RecomputeMode::kNone;
  else if (name == "auto") mode = RecomputeMode::kAuto;
  else if (name == "full") mode = RecomputeMode::kFull;
  else return false;
  return true;
}

NodeId loss_position(const Graph& graph) {
  for (const GraphOutput& g : graph.outputs())
    if (g.kind == OutputKind::kLoss) return g.node;
  return kNoNode;
}

RecomputeCandidates find_recompute_candidates(const Graph& graph) {
  RecomputeCandidates c;
  c.window.assign(at(graph.size()), RecomputeWindow{});
  c.rerun.assign(at(graph.size()), {});
  const NodeId loss = loss_position(graph);
  if (loss <= 0) return c;
  const Liveness live = analyze_liveness(graph);
  const Reads reads = storage_reads(graph, live, loss);
  std::vector<int32_t> last_reader(at(graph.size()), -1);
  for (NodeId w = 0; w < graph.size(); ++w)
    for (NodeId u : graph.node(w).inputs) last_reader[at(u)] = std::max(last_reader[at(u)], w);
  std::vector<char> is_output_storage(at(graph.size()), 0);
  for (const GraphOutput& g : graph.outputs()) is_output_storage[at(live.storage_root[at(g.node)])] = 1;

  std::vector<std::vector<NodeId>> aliases(at(loss));  // per root: its forward views
  for (NodeId a = 0; a < loss; ++a) {
    NodeId root = live.storage_root[at(a)];
    if (root != a) aliases[at(root)].push_back(a);
  }
  // First pass: roots with a window whose re-runs read only what is still held.
  for (NodeId v = 0; v < loss; ++v) {
    const Node& node = graph.node(v);
    if (node.is_placeholder() || !live.owns_storage(v) || node.outputs.size() != 1 ||
        live.claims_output_of[at(v)] != kNoNode || live.role[at(v)] != StorageRole::kActivation ||
        is_output_storage[at(v)])
      continue;
    const int32_t drop_after = std::max(reads.last_forward[at(v)], v);
    const int32_t restore_at = reads.first_backward[at(v)];
    if (restore_at < 0 || restore_at <= drop_after + 1) continue;
    std::vector<NodeId> rerun = rerun_list(graph, v, aliases[at(v)], restore_at, last_reader);
    bool inputs_held = true;
    for (NodeId x : rerun) {
      for (NodeId u : graph.node(x).inputs) {
        if (std::find(rerun.begin(), rerun.end(), u) != rerun.end()) continue;
        // Each node's value is let go after its own last reader.
        if (!graph.node(u).is_placeholder() && last_reader[at(u)] < restore_at) inputs_held = false;
      }
    }
    if (!inputs_held) continue;
    c.window[at(v)] = {drop_after, restore_at};
    c.rerun[at(v)] = std::move(rerun);
  }
  // Second pass: an operand whose storage is restored later than v is not
  // held when v is re-run, so the two are not both recomputed.
  for (NodeId v = 0; v < loss; ++v) {
    if (!c.is_candidate(v)) continue;
    for (NodeId x : c.rerun[at(v)]) {
      for (NodeId u : graph.node(x).inputs) {
        NodeId ru = live.storage_root[at(u)];
        if (ru == v || !c.is_candidate(ru)) continue;
        if (c.window[at(ru)].restore_at > c.window[at(v)].restore_at) c.exclusive.emplace_back(ru, v);
      }
    }
  }
  std::sort(c.exclusive.begin(), c.exclusive.end());
  c.exclusive.erase(std::unique(c.exclusive.begin(), c.exclusive.end()), c.exclusive.end());
  for (const RecomputeWindow& w : c.window) c.count += w.valid() ? 1 : 0;
  return c;
}

}  // namespace autopar
