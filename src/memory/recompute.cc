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

// "layers.3.attention" -> "layers.3": the scope up to its first integer
// component; "" when it has none.
std::string_view layer_scope(std::string_view scope) {
  size_t from = 0;
  while (from < scope.size()) {
    size_t dot = std::min(scope.find('.', from), scope.size());
    std::string_view part = scope.substr(from, dot - from);
    if (!part.empty() && std::all_of(part.begin(), part.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
      return scope.substr(0, dot);
    from = dot + 1;
  }
  return {};
}

// The graph facts one layer's re-run set is decided from.
struct LayerFacts {
  const Graph& graph;
  const Liveness& live;
  NodeId loss;
  std::vector<int32_t> last_reader, first_after_loss;
  std::vector<std::vector<NodeId>> readers;
  std::vector<char> output_storage;
};

// Marks, for the layer `members` (graph order; in_layer per node), the nodes
// re-run at the returned position (-1: none). `kept` and `needed` are per-node
// scratch, 0 outside the layer on entry; only members' entries are written.
int32_t choose_layer_reruns(const LayerFacts& f, const std::vector<NodeId>& members,
                            const std::vector<char>& in_layer, std::vector<char>& kept, std::vector<char>& needed) {
  const Graph& graph = f.graph;
  auto root = [&](NodeId v) { return f.live.storage_root[at(v)]; };
  for (NodeId v : members) {
    NodeId r = root(v);
    bool outside = !in_layer[at(r)] || f.live.role[at(r)] != StorageRole::kActivation || f.output_storage[at(r)];
    for (NodeId w : f.readers[at(v)])
      if (w <= f.loss && !in_layer[at(w)]) outside = true;
    kept[at(v)] = outside ? 1 : 0;
  }
  int32_t restore_at = -1;
  for (bool changed = true; changed;) {
    changed = false;
    // A storage is kept or dropped whole: root, views, a node's getitems.
    for (int pass = 0; pass < 2; ++pass) {
      for (NodeId v : members) {
        NodeId r = root(v), m = f.live.claims_output_of[at(v)];
        if (kept[at(v)] && in_layer[at(r)]) kept[at(r)] = 1;
        if (kept[at(r)]) kept[at(v)] = 1;
        if (m != kNoNode && in_layer[at(m)] && (kept[at(v)] || kept[at(m)])) kept[at(v)] = kept[at(m)] = 1;
      }
    }
    for (NodeId v : members) needed[at(v)] = 0;
    for (auto it = members.rbegin(); it != members.rend(); ++it) {
      NodeId v = *it;
      if (kept[at(v)]) continue;
      bool need = f.first_after_loss[at(v)] >= 0;
      for (NodeId w : f.readers[at(v)])
        if (in_layer[at(w)] && needed[at(w)]) need = true;
      needed[at(v)] = need ? 1 : 0;
    }
    for (NodeId v : members) {  // a re-run node re-makes all its outputs
      NodeId m = f.live.claims_output_of[at(v)];
      if (m != kNoNode && in_layer[at(m)] && needed[at(m)]) needed[at(v)] = 1;
    }
    restore_at = -1;
    for (NodeId v : members)
      if (needed[at(v)] && f.first_after_loss[at(v)] >= 0 &&
          (restore_at < 0 || f.first_after_loss[at(v)] < restore_at))
        restore_at = f.first_after_loss[at(v)];
    if (restore_at < 0) return -1;
    for (NodeId x : members) {
      if (!needed[at(x)]) continue;
      for (NodeId u : graph.node(x).inputs) {
        if (needed[at(u)] || graph.node(u).is_placeholder() || f.last_reader[at(u)] >= restore_at) continue;
        kept[at(x)] = 1;
        changed = true;
      }
    }
  }
  return restore_at;
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

RecomputeCandidates find_layer_recompute(const Graph& graph) {
  RecomputeCandidates c;
  c.window.assign(at(graph.size()), RecomputeWindow{});
  c.rerun.assign(at(graph.size()), {});
  c.layer.assign(at(graph.size()), -1);
  const NodeId loss = loss_position(graph);
  if (loss <= 0) return c;
  const Liveness live = analyze_liveness(graph);
  const Reads reads = storage_reads(graph, live, loss);
  LayerFacts f{graph, live, loss, {}, {}, {}, {}};
  f.last_reader.assign(at(graph.size()), -1);
  f.first_after_loss.assign(at(graph.size()), -1);
  f.readers.assign(at(graph.size()), {});
  f.output_storage.assign(at(graph.size()), 0);
  for (NodeId w = 0; w < graph.size(); ++w) {
    for (NodeId u : graph.node(w).inputs) {
      f.last_reader[at(u)] = std::max(f.last_reader[at(u)], w);
      if (w > loss && f.first_after_loss[at(u)] < 0) f.first_after_loss[at(u)] = w;
      if (f.readers[at(u)].empty() || f.readers[at(u)].back() != w) f.readers[at(u)].push_back(w);
    }
  }
  for (const GraphOutput& g : graph.outputs()) f.output_storage[at(live.storage_root[at(g.node)])] = 1;
  std::vector<std::vector<NodeId>> members;
  for (NodeId v = 0; v < loss; ++v) {
    std::string_view scope = layer_scope(graph.node(v).scope);
    if (graph.node(v).is_placeholder() || scope.empty()) continue;
    auto it = std::find(c.layers.begin(), c.layers.end(), scope);
    if (it == c.layers.end()) {
      c.layers.emplace_back(scope);
      members.emplace_back();
      it = c.layers.end() - 1;
    }
    auto l = static_cast<size_t>(it - c.layers.begin());
    members[l].push_back(v);
    c.layer[at(v)] = static_cast<int32_t>(l);
  }
  // Per-node scratch, written for one layer's members and cleared after it.
  std::vector<char> in_layer(at(graph.size()), 0), kept(at(graph.size()), 0), needed(at(graph.size()), 0);
  for (size_t l = 0; l < members.size(); ++l) {
    for (NodeId v : members[l]) in_layer[at(v)] = 1;
    const int32_t restore_at = choose_layer_reruns(f, members[l], in_layer, kept, needed);
    for (NodeId v : members[l]) {
      const bool rerun = restore_at >= 0 && needed[at(v)];
      in_layer[at(v)] = kept[at(v)] = needed[at(v)] = 0;
      if (!rerun) continue;
      NodeId r = live.storage_root[at(v)];
      c.window[at(v)] = {std::max(reads.last_forward[at(r)], v), restore_at};
      c.rerun[at(v)] = {v};
      ++c.count;
    }
  }
  return c;
}

RecomputeCandidates recompute_candidates_for(const Graph& graph, const std::vector<char>& marks) {
  if (std::find(marks.begin(), marks.end(), kLayerMark) != marks.end()) return find_layer_recompute(graph);
  return find_recompute_candidates(graph);
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
