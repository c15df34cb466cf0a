#include "planner/presolve.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include <fmt/format.h>

namespace autopar::planner {
namespace {

size_t sz(int32_t i) { return static_cast<size_t>(i); }

// Follow groups: each node's leader-of-leaders and the composed strategy map.
void build_groups(const Problem& p, ReducedProblem& r) {
  size_t n = p.nodes.size();
  std::vector<const Follow*> follow_of(n, nullptr);
  for (const Follow& f : p.follows) follow_of[sz(f.follower)] = &f;
  r.group_of.assign(n, -1);
  r.from_root.assign(n, {});
  for (size_t v = 0; v < n; ++v) {
    if (follow_of[v] != nullptr) continue;
    r.group_of[v] = static_cast<GroupIdx>(r.nodes.size());
    r.nodes.push_back(ReducedNode{static_cast<NodeIdx>(v), {}, {}});
    auto& map = r.from_root[v];
    map.resize(p.strategy_count(static_cast<NodeIdx>(v)));
    for (size_t i = 0; i < map.size(); ++i) map[i] = static_cast<StrategyIdx>(i);
  }
  std::vector<NodeIdx> chain;  // resolve followers top-down, no recursion
  for (size_t v = 0; v < n; ++v) {
    for (NodeIdx at = static_cast<NodeIdx>(v); r.group_of[sz(at)] < 0;
         at = follow_of[sz(at)]->leader)
      chain.push_back(at);
    for (; !chain.empty(); chain.pop_back()) {
      const Follow& f = *follow_of[sz(chain.back())];
      const auto& up = r.from_root[sz(f.leader)];
      auto& map = r.from_root[sz(f.follower)];
      map.resize(up.size());
      for (size_t i = 0; i < up.size(); ++i)
        map[i] = up[i] == kNoStrategy ? kNoStrategy : f.map[sz(up[i])];
      r.group_of[sz(f.follower)] = r.group_of[sz(f.leader)];
    }
  }
}

// Marks the leader strategies that some member forbids, and sums member costs
// and within-group edges over the leader's strategies.
void fold_members(const Problem& p, ReducedProblem& r, std::vector<std::vector<char>>& ok,
                  std::vector<std::vector<double>>& cost) {
  std::vector<std::vector<char>> pinned(p.nodes.size());
  for (const Pin& pin : p.pins) {
    std::vector<char> mask(p.strategy_count(pin.node), 0);
    for (StrategyIdx i : pin.allowed) mask[sz(i)] = 1;
    auto& cur = pinned[sz(pin.node)];
    if (cur.empty()) cur = mask;
    else for (size_t i = 0; i < cur.size(); ++i) cur[i] = cur[i] && mask[i];
  }
  for (const ReducedNode& g : r.nodes) {
    ok.emplace_back(p.strategy_count(g.root), 1);
    cost.emplace_back(p.strategy_count(g.root), 0.0);
  }
  for (size_t v = 0; v < p.nodes.size(); ++v) {
    GroupIdx g = r.group_of[v];
    const auto& map = r.from_root[v];
    for (size_t i = 0; i < map.size(); ++i) {
      StrategyIdx j = map[i];
      bool allowed = j != kNoStrategy && p.nodes[v].costs[sz(j)] < kInfiniteCost &&
                     (pinned[v].empty() || pinned[v][sz(j)]);
      if (!allowed) ok[sz(g)][i] = 0;
      else cost[sz(g)][i] += p.nodes[v].costs[sz(j)];
    }
  }
  for (const ProblemEdge& e : p.edges) {
    GroupIdx g = r.group_of[sz(e.src)];
    if (g != r.group_of[sz(e.dst)]) continue;
    const auto &ms = r.from_root[sz(e.src)], &md = r.from_root[sz(e.dst)];
    for (size_t i = 0; i < ms.size(); ++i) {
      if (!ok[sz(g)][i]) continue;
      double c = e.cost(ms[i], md[i], p.strategy_count(e.dst));
      if (c < kInfiniteCost) cost[sz(g)][i] += c;
      else ok[sz(g)][i] = 0;
    }
  }
}

// The edge between two groups (oriented u < v), made with zero costs if new.
size_t edge_between(ReducedProblem& r, std::unordered_map<uint64_t, size_t>& index, GroupIdx a,
                    GroupIdx b) {
  GroupIdx u = std::min(a, b), v = std::max(a, b);
  uint64_t key = (static_cast<uint64_t>(u) << 32) | static_cast<uint32_t>(v);
  auto [it, fresh] = index.try_emplace(key, r.edges.size());
  if (fresh) {
    ReducedEdge edge;
    edge.u = u, edge.v = v;
    edge.costs.assign(r.nodes[sz(u)].alive.size() * r.nodes[sz(v)].alive.size(), 0.0);
    r.edges.push_back(std::move(edge));
  }
  return it->second;
}

// Adds value(src strategy, dst strategy) over the edge's alive pairs to out.
template <typename Value>
void add_over_edge(const ReducedProblem& r, const ReducedEdge& edge, NodeIdx src, NodeIdx dst,
                   Value value, std::vector<double>& out) {
  bool flip = r.group_of[sz(src)] != edge.u;
  const auto &au = r.nodes[sz(edge.u)].alive, &av = r.nodes[sz(edge.v)].alive;
  const auto &ms = r.from_root[sz(src)], &md = r.from_root[sz(dst)];
  for (size_t k = 0; k < au.size(); ++k)
    for (size_t l = 0; l < av.size(); ++l) {
      StrategyIdx is = flip ? av[l] : au[k], id = flip ? au[k] : av[l];
      out[k * av.size() + l] += value(ms[sz(is)], md[sz(id)]);
    }
}

// Edges between groups over alive strategies, parallel ones summed; each pair
// holding between two groups rides on their edge.
void build_edges(const Problem& p, ReducedProblem& r) {
  std::unordered_map<uint64_t, size_t> index;
  for (const ProblemEdge& e : p.edges) {
    GroupIdx gs = r.group_of[sz(e.src)], gd = r.group_of[sz(e.dst)];
    if (gs == gd) continue;
    size_t k = edge_between(r, index, gs, gd), nd = p.strategy_count(e.dst);
    add_over_edge(r, r.edges[k], e.src, e.dst,
                  [&](StrategyIdx i, StrategyIdx j) { return e.cost(i, j, nd); }, r.edges[k].costs);
  }
  for (size_t h = 0; h < p.pairs.size(); ++h) {
    const PairHolding& pair = p.pairs[h];
    GroupIdx gs = r.group_of[sz(pair.src)], gd = r.group_of[sz(pair.dst)];
    if (gs == gd) continue;
    size_t k = edge_between(r, index, gs, gd), nd = p.strategy_count(pair.dst);
    // Repeated layers hold the same matrix through the same strategy maps:
    // one copy of the bytes serves them all.
    auto same = std::find_if(r.edges[k].held.begin(), r.edges[k].held.end(), [&](const HeldOnEdge& x) {
      const PairHolding& q = p.pairs[sz(x.pairs[0])];
      return q.bytes == pair.bytes && r.group_of[sz(q.src)] == gs &&
             r.from_root[sz(q.src)] == r.from_root[sz(pair.src)] &&
             r.from_root[sz(q.dst)] == r.from_root[sz(pair.dst)];
    });
    if (same != r.edges[k].held.end()) {
      same->pairs.push_back(static_cast<PairIdx>(h));
      continue;
    }
    HeldOnEdge held{{static_cast<PairIdx>(h)}, std::vector<double>(r.edges[k].costs.size(), 0.0), {}};
    add_over_edge(r, r.edges[k], pair.src, pair.dst,
                  [&](StrategyIdx i, StrategyIdx j) { return pair.at(i, j, nd); }, held.bytes);
    r.edges[k].held.push_back(std::move(held));
  }
}

// Edge consistency: drop strategies whose every live partner is forbidden.
bool propagate(ReducedProblem& r, std::vector<std::vector<char>>& live) {
  bool any_change = false;
  for (bool changed = true; changed;) {
    changed = false;
    for (const ReducedEdge& e : r.edges) {
      auto &lu = live[sz(e.u)], &lv = live[sz(e.v)];
      size_t nv = lv.size();
      std::vector<char> col_ok(nv, 0);
      for (size_t k = 0; k < lu.size(); ++k) {
        if (!lu[k]) continue;
        bool row_ok = false;
        for (size_t l = 0; l < nv; ++l)
          if (lv[l] && e.costs[k * nv + l] < kInfiniteCost) row_ok = true, col_ok[l] = 1;
        if (!row_ok) lu[k] = 0, changed = true;
      }
      for (size_t l = 0; l < nv; ++l)
        if (lv[l] && !col_ok[l]) lv[l] = 0, changed = true;
    }
    any_change = any_change || changed;
  }
  return any_change;
}

std::string describe_group(const Problem& p, const ReducedProblem& r, GroupIdx g) {
  size_t members = std::count(r.group_of.begin(), r.group_of.end(), g);
  return fmt::format("'{}' (with {} follower(s))", p.nodes[sz(r.nodes[sz(g)].root)].name,
                     members - 1);
}

// Keeps only live strategies in nodes and edge matrices.
void compact(ReducedProblem& r, const std::vector<std::vector<char>>& live) {
  std::vector<std::vector<size_t>> keep(r.nodes.size());
  for (size_t g = 0; g < r.nodes.size(); ++g) {
    ReducedNode& n = r.nodes[g];
    std::vector<StrategyIdx> alive;
    std::vector<double> costs;
    for (size_t k = 0; k < n.alive.size(); ++k)
      if (live[g][k]) keep[g].push_back(k), alive.push_back(n.alive[k]), costs.push_back(n.costs[k]);
    n.alive = std::move(alive);
    n.costs = std::move(costs);
  }
  for (ReducedEdge& e : r.edges) {
    size_t nv_old = live[sz(e.v)].size();
    auto shrink = [&](std::vector<double>& matrix) {
      std::vector<double> out;
      out.reserve(keep[sz(e.u)].size() * keep[sz(e.v)].size());
      for (size_t k : keep[sz(e.u)])
        for (size_t l : keep[sz(e.v)]) out.push_back(matrix[k * nv_old + l]);
      matrix = std::move(out);
    };
    shrink(e.costs);
    for (HeldOnEdge& h : e.held) shrink(h.bytes);
  }
}

// Edges with a single-strategy end become node costs; single nodes become constants.
void fold_single_ends(ReducedProblem& r) {
  std::vector<ReducedEdge> kept;
  for (ReducedEdge& e : r.edges) {
    ReducedNode &u = r.nodes[sz(e.u)], &v = r.nodes[sz(e.v)];
    size_t nu = u.alive.size(), nv = v.alive.size();
    if (nu > 1 && nv > 1) { kept.push_back(std::move(e)); continue; }
    for (HeldOnEdge& h : e.held) {
      if (nv == 1) r.group_held.push_back({h.pairs, e.u, h.bytes});  // [k * 1 + 0]
      else r.group_held.push_back({h.pairs, e.v, h.bytes});         // [0 * nv + l]
    }
    for (size_t k = 0; k < nu; ++k)
      for (size_t l = 0; l < nv; ++l) {
        double c = e.costs[k * nv + l];
        if (nu == 1 && nv == 1) r.constant_cost += c;
        else if (nu == 1) v.costs[l] += c;
        else u.costs[k] += c;
      }
  }
  r.edges = std::move(kept);
  for (const ReducedNode& n : r.nodes)
    if (n.alive.size() == 1) r.constant_cost += n.costs[0];
}

// Classes of equal rows (stride 1 along a row) or equal columns of an edge
// matrix; returns the class count. Hashing keeps it linear in the matrix size.
int32_t classes_of(const std::vector<double>& costs, size_t lines, size_t len, size_t line_step,
                   size_t elem_step, std::vector<int32_t>& cls) {
  std::unordered_map<uint64_t, std::vector<size_t>> by_hash;  // hash -> class representatives
  std::vector<size_t> rep_line;
  cls.assign(lines, -1);
  auto at = [&](size_t line, size_t k) { return costs[line * line_step + k * elem_step] + 0.0; };
  for (size_t line = 0; line < lines; ++line) {
    uint64_t h = 1469598103934665603ull;
    for (size_t k = 0; k < len; ++k) {
      double c = at(line, k);
      uint64_t bits;
      std::memcpy(&bits, &c, sizeof bits);
      h = (h ^ bits) * 1099511628211ull;
    }
    auto& reps = by_hash[h];
    for (size_t rep : reps) {
      bool same = true;
      for (size_t k = 0; k < len && same; ++k) same = at(line, k) == at(rep_line[sz(cls[rep])], k);
      if (same) { cls[line] = cls[rep]; break; }
    }
    if (cls[line] >= 0) continue;
    cls[line] = static_cast<int32_t>(rep_line.size());
    rep_line.push_back(line);
    reps.push_back(line);
  }
  return static_cast<int32_t>(rep_line.size());
}

void build_domains(const Problem& p, ReducedProblem& r) {
  std::vector<std::vector<char>> ok;
  std::vector<std::vector<double>> cost;
  fold_members(p, r, ok, cost);
  for (size_t g = 0; g < r.nodes.size(); ++g) {
    for (size_t i = 0; i < ok[g].size(); ++i)
      if (ok[g][i]) r.nodes[g].alive.push_back(static_cast<StrategyIdx>(i)), r.nodes[g].costs.push_back(cost[g][i]);
    if (r.nodes[g].alive.empty() && r.infeasible.empty())
      r.infeasible = fmt::format(
          "node {} has no allowed strategy: infinite costs, pins and follow maps exclude all {}",
          describe_group(p, r, static_cast<GroupIdx>(g)), ok[g].size());
  }
}

// The bytes of a pair holding whose ends are both in group g, per alive strategy.
std::vector<double> inner_pair_bytes(const Problem& p, const ReducedProblem& r, GroupIdx g,
                                     const PairHolding& pair) {
  const auto& alive = r.nodes[sz(g)].alive;
  const auto &ms = r.from_root[sz(pair.src)], &md = r.from_root[sz(pair.dst)];
  std::vector<double> out(alive.size());
  for (size_t k = 0; k < alive.size(); ++k)
    out[k] = pair.at(ms[sz(alive[k])], md[sz(alive[k])], p.strategy_count(pair.dst));
  return out;
}

// dom[i * n + j]: strategy i is no better than j in every byte vector of
// every member node (activation and static bytes) and of the pair holdings
// inside the group.
void dominated_in_bytes(const Problem& p, const ReducedProblem& r, GroupIdx g,
                        const std::vector<NodeIdx>& members, const std::vector<PairIdx>& inner,
                        std::vector<char>& dom) {
  size_t n = r.nodes[sz(g)].alive.size();
  const auto& alive = r.nodes[sz(g)].alive;
  auto clear = [&](auto bytes_of) {
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < n; ++j)
        if (dom[i * n + j] && bytes_of(i) < bytes_of(j)) dom[i * n + j] = 0;
  };
  for (NodeIdx v : members)
    for (const auto* bytes : {&p.nodes[sz(v)].bytes, &p.nodes[sz(v)].static_bytes}) {
      if (bytes->empty()) continue;
      const auto& map = r.from_root[sz(v)];
      clear([&](size_t i) { return (*bytes)[sz(map[sz(alive[i])])]; });
    }
  for (PairIdx h : inner) {
    std::vector<double> bytes = inner_pair_bytes(p, r, g, p.pairs[sz(h)]);
    clear([&](size_t i) { return bytes[i]; });
  }
}

// Clears dom[i * n + j] unless every entry of an edge matrix (costs or held
// bytes) from i is >= from j.
void dominated_on_edge(const std::vector<double>& matrix, bool at_u, size_t n, size_t other,
                       std::vector<char>& dom) {
  auto at = [&](size_t mine, size_t theirs) {
    return at_u ? matrix[mine * other + theirs] : matrix[theirs * n + mine];
  };
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j)
      for (size_t k = 0; k < other && dom[i * n + j]; ++k)
        if (at(i, k) < at(j, k)) dom[i * n + j] = 0;
}

// Drops a strategy when another of its node costs no more on the node, on
// every edge against every partner, and holds no more bytes anywhere: any
// assignment using it stays feasible and costs no less with the other, so
// the optimum is unchanged. Of identical strategies the first is kept.
bool drop_dominated(const Problem& p, ReducedProblem& r, std::vector<std::vector<char>>& live) {
  std::vector<std::vector<NodeIdx>> members(r.nodes.size());
  for (size_t v = 0; v < p.nodes.size(); ++v)
    members[sz(r.group_of[v])].push_back(static_cast<NodeIdx>(v));
  std::vector<std::vector<PairIdx>> inner(r.nodes.size());
  for (size_t h = 0; h < p.pairs.size(); ++h)
    if (r.group_of[sz(p.pairs[h].src)] == r.group_of[sz(p.pairs[h].dst)])
      inner[sz(r.group_of[sz(p.pairs[h].src)])].push_back(static_cast<PairIdx>(h));
  std::vector<std::vector<size_t>> incident(r.nodes.size());
  for (size_t k = 0; k < r.edges.size(); ++k)
    incident[sz(r.edges[k].u)].push_back(k), incident[sz(r.edges[k].v)].push_back(k);
  bool any = false;
  std::vector<char> dom;
  for (size_t g = 0; g < r.nodes.size(); ++g) {
    const ReducedNode& node = r.nodes[g];
    size_t n = node.alive.size();
    if (n < 2) continue;
    dom.assign(n * n, 0);
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < n; ++j) dom[i * n + j] = i != j && node.costs[i] >= node.costs[j];
    dominated_in_bytes(p, r, static_cast<GroupIdx>(g), members[g], inner[g], dom);
    for (size_t k : incident[g]) {
      const ReducedEdge& e = r.edges[k];
      bool at_u = sz(e.u) == g;
      size_t other = r.nodes[sz(at_u ? e.v : e.u)].alive.size();
      dominated_on_edge(e.costs, at_u, n, other, dom);
      for (const HeldOnEdge& h : e.held) dominated_on_edge(h.bytes, at_u, n, other, dom);
    }
    live[g].assign(n, 1);
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < n && live[g][i]; ++j) {
        // Mutual dominance (identical): drop the later one only.
        bool mutual = dom[j * n + i];
        if (dom[i * n + j] && live[g][j] && (!mutual || j < i)) live[g][i] = 0, any = true;
      }
  }
  return any;
}

}  // namespace

void aggregate_edges(ReducedProblem& r) {
  std::vector<ReducedEdge> kept;
  std::vector<double> stacked;
  for (ReducedEdge& e : r.edges) {
    ReducedNode &u = r.nodes[sz(e.u)], &v = r.nodes[sz(e.v)];
    size_t nu = u.alive.size(), nv = v.alive.size();
    // Strategies share a class only if their costs and every held byte count
    // agree: the matrices stacked below one another ([costs; held...], each
    // nu x nv) give equal columns, and side by side equal rows.
    size_t layers = 1 + e.held.size();
    if (layers == 1) {
      e.u_classes = classes_of(e.costs, nu, nv, nv, 1, e.u_class);
      e.v_classes = classes_of(e.costs, nv, nu, 1, nv, e.v_class);
    } else {
      stacked = e.costs;
      for (const HeldOnEdge& h : e.held) stacked.insert(stacked.end(), h.bytes.begin(), h.bytes.end());
      e.v_classes = classes_of(stacked, nv, layers * nu, 1, nv, e.v_class);
      for (size_t k = 0; k < nu; ++k)  // side by side: row k of every layer
        for (size_t layer = 0; layer < layers; ++layer)
          for (size_t l = 0; l < nv; ++l)
            stacked[k * layers * nv + layer * nv + l] =
                layer == 0 ? e.costs[k * nv + l] : e.held[layer - 1].bytes[k * nv + l];
      e.u_classes = classes_of(stacked, nu, layers * nv, layers * nv, 1, e.u_class);
    }
    // Edge consistency ran, so a single-class end has a finite cost for every
    // strategy of the other end: the edge is a cost on that other end.
    if (e.u_classes == 1) {
      for (size_t l = 0; l < nv; ++l) v.costs[l] += e.costs[l];
      for (HeldOnEdge& h : e.held)
        r.group_held.push_back({h.pairs, e.v, std::vector<double>(h.bytes.begin(), h.bytes.begin() + static_cast<ptrdiff_t>(nv))});
      continue;
    }
    if (e.v_classes == 1) {
      for (size_t k = 0; k < nu; ++k) u.costs[k] += e.costs[k * nv];
      for (HeldOnEdge& h : e.held) {
        std::vector<double> column(nu);
        for (size_t k = 0; k < nu; ++k) column[k] = h.bytes[k * nv];
        r.group_held.push_back({h.pairs, e.u, std::move(column)});
      }
      continue;
    }
    std::vector<size_t> row_of(sz(e.u_classes)), col_of(sz(e.v_classes));
    for (size_t k = 0; k < nu; ++k) row_of[sz(e.u_class[k])] = k;
    for (size_t l = 0; l < nv; ++l) col_of[sz(e.v_class[l])] = l;
    auto by_class = [&](const std::vector<double>& matrix) {
      std::vector<double> out(row_of.size() * col_of.size());
      for (size_t a = 0; a < row_of.size(); ++a)
        for (size_t b = 0; b < col_of.size(); ++b) out[a * col_of.size() + b] = matrix[row_of[a] * nv + col_of[b]];
      return out;
    };
    e.class_costs = by_class(e.costs);
    for (HeldOnEdge& h : e.held) h.class_bytes = by_class(h.bytes);
    kept.push_back(std::move(e));
  }
  r.edges = std::move(kept);
}

ReducedProblem presolve(const Problem& p, const PresolveOptions& options) {
  ReducedProblem r;
  build_groups(p, r);
  build_domains(p, r);
  if (!r.infeasible.empty()) return r;
  build_edges(p, r);
  std::vector<std::vector<char>> live;
  for (const ReducedNode& n : r.nodes) live.emplace_back(n.alive.size(), 1);
  if (propagate(r, live)) {
    for (size_t g = 0; g < live.size(); ++g)
      if (std::count(live[g].begin(), live[g].end(), 1) == 0) {
        r.infeasible = fmt::format(
            "node {} has no strategy left: forbidden resharding (infinite edge costs) "
            "excludes every pairing with its neighbours",
            describe_group(p, r, static_cast<GroupIdx>(g)));
        return r;
      }
    compact(r, live);
  }
  // Fresh masks of the compacted sizes: drop_dominated skips single-strategy
  // nodes, and compact reads every mask's size as its node's strategy count.
  for (size_t g = 0; g < r.nodes.size(); ++g) live[g].assign(r.nodes[g].alive.size(), 1);
  if (options.drop_dominated && drop_dominated(p, r, live)) compact(r, live);
  fold_single_ends(r);
  aggregate_edges(r);
  for (size_t h = 0; h < p.pairs.size(); ++h) {
    GroupIdx g = r.group_of[sz(p.pairs[h].src)];
    if (g == r.group_of[sz(p.pairs[h].dst)])
      r.group_held.push_back({{static_cast<PairIdx>(h)}, g, inner_pair_bytes(p, r, g, p.pairs[h])});
  }
  if (options.memory_rows) build_memory_rows(p, r, options);
  return r;
}

Assignment expand(const ReducedProblem& r, const std::vector<int32_t>& choice) {
  Assignment a(r.group_of.size());
  for (size_t v = 0; v < a.size(); ++v) {
    GroupIdx g = r.group_of[v];
    a[v] = r.from_root[v][sz(r.nodes[sz(g)].alive[sz(choice[sz(g)])])];
  }
  return a;
}

double min_bytes_of(const Problem& p, const ReducedProblem& r, NodeIdx node, bool static_bytes) {
  const ProblemNode& n = p.nodes[sz(node)];
  const auto& bytes = static_bytes ? n.static_bytes : n.bytes;
  if (bytes.empty()) return 0;
  double best = kInfiniteCost;
  for (StrategyIdx i : r.nodes[sz(r.group_of[sz(node)])].alive)
    best = std::min(best, bytes[sz(r.from_root[sz(node)][sz(i)])]);
  return best;
}

}  // namespace autopar::planner
