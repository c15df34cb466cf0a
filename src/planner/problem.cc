#include "planner/problem.h"

#include <algorithm>
#include <cmath>

namespace autopar::planner {

NodeIdx Problem::add_node(std::string name, std::vector<double> costs) {
  nodes.push_back(ProblemNode{std::move(name), std::move(costs), {}, {}});
  return static_cast<NodeIdx>(nodes.size() - 1);
}

EdgeIdx Problem::add_edge(NodeIdx src, NodeIdx dst, std::vector<double> costs,
                          int32_t input_index) {
  edges.push_back(ProblemEdge{src, dst, input_index, std::move(costs)});
  return static_cast<EdgeIdx>(edges.size() - 1);
}

void Problem::add_equal(NodeIdx leader, NodeIdx follower) {
  std::vector<StrategyIdx> map(strategy_count(leader));
  for (size_t i = 0; i < map.size(); ++i) map[i] = static_cast<StrategyIdx>(i);
  follows.push_back(Follow{leader, follower, std::move(map)});
}

namespace {

Status validate_nodes(const Problem& p) {
  for (size_t v = 0; v < p.nodes.size(); ++v) {
    const ProblemNode& n = p.nodes[v];
    if (n.costs.empty()) return make_error("planner: node {} '{}' has no strategies", v, n.name);
    for (const auto* vec : {&n.bytes, &n.static_bytes}) {
      if (!vec->empty() && vec->size() != n.costs.size())
        return make_error("planner: node {} '{}' has {} strategies but {} byte entries", v,
                          n.name, n.costs.size(), vec->size());
      for (double b : *vec)
        if (!(b >= 0) || std::isinf(b))
          return make_error("planner: node {} '{}' has byte count {} (must be finite, >= 0)",
                            v, n.name, b);
    }
  }
  return ok_status();
}

bool valid_node(const Problem& p, NodeIdx v) {
  return v >= 0 && static_cast<size_t>(v) < p.nodes.size();
}

Status validate_edges(const Problem& p) {
  for (size_t k = 0; k < p.edges.size(); ++k) {
    const ProblemEdge& e = p.edges[k];
    if (!valid_node(p, e.src) || !valid_node(p, e.dst) || e.src == e.dst)
      return make_error("planner: edge {} joins nodes {} -> {} (of {})", k, e.src, e.dst,
                        p.nodes.size());
    size_t want = p.strategy_count(e.src) * p.strategy_count(e.dst);
    if (e.costs.size() != want)
      return make_error("planner: edge {} '{}' -> '{}' has {} costs, expected {}x{}", k,
                        p.nodes[e.src].name, p.nodes[e.dst].name, e.costs.size(),
                        p.strategy_count(e.src), p.strategy_count(e.dst));
  }
  return ok_status();
}

Status validate_follows(const Problem& p) {
  std::vector<NodeIdx> leader_of(p.nodes.size(), -1);
  for (const Follow& f : p.follows) {
    if (!valid_node(p, f.leader) || !valid_node(p, f.follower) || f.leader == f.follower)
      return make_error("planner: follow {} -> {} names a bad node", f.leader, f.follower);
    if (f.map.size() != p.strategy_count(f.leader))
      return make_error("planner: follow '{}' -> '{}' maps {} strategies, leader has {}",
                        p.nodes[f.leader].name, p.nodes[f.follower].name, f.map.size(),
                        p.strategy_count(f.leader));
    for (StrategyIdx j : f.map)
      if (j != kNoStrategy && (j < 0 || static_cast<size_t>(j) >= p.strategy_count(f.follower)))
        return make_error("planner: follow '{}' -> '{}' maps to strategy {} of {}",
                          p.nodes[f.leader].name, p.nodes[f.follower].name, j,
                          p.strategy_count(f.follower));
    if (leader_of[f.follower] != -1)
      return make_error("planner: node '{}' follows two leaders ({} and {})",
                        p.nodes[f.follower].name, leader_of[f.follower], f.leader);
    leader_of[f.follower] = f.leader;
  }
  for (size_t v = 0; v < p.nodes.size(); ++v) {  // a chain longer than n is a cycle
    NodeIdx at = static_cast<NodeIdx>(v);
    for (size_t steps = 0; at != -1; ++steps, at = leader_of[at])
      if (steps > p.nodes.size())
        return make_error("planner: follow constraints form a cycle through '{}'",
                          p.nodes[v].name);
  }
  return ok_status();
}

Status validate_rest(const Problem& p) {
  for (const Pin& pin : p.pins) {
    if (!valid_node(p, pin.node)) return make_error("planner: pin on bad node {}", pin.node);
    for (StrategyIdx i : pin.allowed)
      if (i < 0 || static_cast<size_t>(i) >= p.strategy_count(pin.node))
        return make_error("planner: pin on '{}' allows strategy {} of {}",
                          p.nodes[pin.node].name, i, p.strategy_count(pin.node));
  }
  for (size_t t = 0; t < p.live_points.size(); ++t)
    for (NodeIdx v : p.live_points[t])
      if (!valid_node(p, v)) return make_error("planner: time point {} lists bad node {}", t, v);
  return ok_status();
}

Status validate_pairs(const Problem& p) {
  for (size_t k = 0; k < p.pairs.size(); ++k) {
    const PairHolding& h = p.pairs[k];
    if (!valid_node(p, h.src) || !valid_node(p, h.dst) || h.src == h.dst)
      return make_error("planner: pair holding {} joins nodes {} -> {} (of {})", k, h.src, h.dst,
                        p.nodes.size());
    size_t entries = h.bytes ? h.bytes->size() : 0;
    if (entries != p.strategy_count(h.src) * p.strategy_count(h.dst))
      return make_error("planner: pair holding {} '{}' -> '{}' has {} byte entries, expected {}x{}",
                        k, p.nodes[h.src].name, p.nodes[h.dst].name, entries,
                        p.strategy_count(h.src), p.strategy_count(h.dst));
    for (double b : *h.bytes)
      if (!(b >= 0) || std::isinf(b))
        return make_error("planner: pair holding {} has byte count {} (must be finite, >= 0)", k, b);
  }
  if (!p.live_pairs.empty() && p.live_pairs.size() != p.live_points.size())
    return make_error("planner: {} lists of live pairs for {} time points", p.live_pairs.size(),
                      p.live_points.size());
  for (size_t t = 0; t < p.live_pairs.size(); ++t)
    for (PairIdx h : p.live_pairs[t])
      if (h < 0 || static_cast<size_t>(h) >= p.pairs.size())
        return make_error("planner: time point {} lists bad pair holding {}", t, h);
  return ok_status();
}

double at_or_zero(const std::vector<double>& vec, StrategyIdx i) {
  return vec.empty() ? 0.0 : vec[static_cast<size_t>(i)];
}

}  // namespace

Status validate(const Problem& problem) {
  for (auto check : {validate_nodes, validate_edges, validate_follows, validate_rest, validate_pairs}) {
    Status status = check(problem);
    if (!status) return status;
  }
  return ok_status();
}

Evaluation evaluate(const Problem& p, const Assignment& a) {
  Evaluation eval;
  for (size_t v = 0; v < p.nodes.size(); ++v) {
    eval.cost += p.nodes[v].costs[a[v]];
    eval.static_bytes += at_or_zero(p.nodes[v].static_bytes, a[v]);
  }
  for (const ProblemEdge& e : p.edges)
    eval.cost += e.cost(a[e.src], a[e.dst], p.strategy_count(e.dst));
  for (const Follow& f : p.follows)
    if (f.map[a[f.leader]] != a[f.follower]) eval.satisfies_constraints = false;
  for (const Pin& pin : p.pins)
    if (std::find(pin.allowed.begin(), pin.allowed.end(), a[pin.node]) == pin.allowed.end())
      eval.satisfies_constraints = false;
  eval.peak_bytes = eval.static_bytes;
  for (size_t t = 0; t < p.live_points.size(); ++t) {
    double sum = eval.static_bytes;
    for (NodeIdx v : p.live_points[t]) sum += at_or_zero(p.nodes[v].bytes, a[v]);
    if (t < p.live_pairs.size())
      for (PairIdx h : p.live_pairs[t]) {
        const PairHolding& pair = p.pairs[static_cast<size_t>(h)];
        sum += pair.at(a[pair.src], a[pair.dst], p.strategy_count(pair.dst));
      }
    if (eval.peak_point < 0 || sum > eval.peak_bytes) {
      eval.peak_bytes = sum;
      eval.peak_point = static_cast<TimeIdx>(t);
    }
  }
  eval.fits_memory = eval.peak_bytes <= p.memory_budget && eval.static_bytes <= p.static_budget;
  return eval;
}

bool is_feasible(const Problem& /*problem*/, const Evaluation& eval) {
  return eval.satisfies_constraints && eval.fits_memory && eval.cost < kInfiniteCost;
}

namespace {

// Both sorted: is a a subset of b?
bool is_subset(const std::vector<NodeIdx>& a, const std::vector<NodeIdx>& b) {
  return a.size() <= b.size() && std::includes(b.begin(), b.end(), a.begin(), a.end());
}

}  // namespace

std::vector<TimeIdx> reduce_time_points(Problem& problem) {
  std::vector<std::vector<NodeIdx>>& points = problem.live_points;
  std::vector<std::vector<PairIdx>>& pairs = problem.live_pairs;
  for (auto* lists : {&points, &pairs})
    for (auto& live : *lists) {
      std::sort(live.begin(), live.end());
      live.erase(std::unique(live.begin(), live.end()), live.end());
    }
  auto within = [&](TimeIdx a, TimeIdx b) {
    return is_subset(points[a], points[b]) &&
           (pairs.empty() || is_subset(pairs[a], pairs[b]));
  };
  std::vector<TimeIdx> kept(points.size());
  for (size_t t = 0; t < kept.size(); ++t) kept[t] = static_cast<TimeIdx>(t);
  // Liveness grows then shrinks between peaks, so comparing neighbours (and
  // repeating after removals) finds the dominated points in O(T * live) a pass.
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<TimeIdx> next;
    for (size_t k = 0; k < kept.size(); ++k) {
      bool dominated = (!next.empty() && within(kept[k], next.back())) ||
                       (k + 1 < kept.size() && within(kept[k], kept[k + 1]));
      if (dominated) changed = true;
      else next.push_back(kept[k]);
    }
    kept = std::move(next);
  }
  std::vector<std::vector<NodeIdx>> reduced;
  std::vector<std::vector<PairIdx>> reduced_pairs;
  reduced.reserve(kept.size());
  for (TimeIdx t : kept) {
    reduced.push_back(std::move(points[t]));
    if (!pairs.empty()) reduced_pairs.push_back(std::move(pairs[t]));
  }
  points = std::move(reduced);
  pairs = std::move(reduced_pairs);
  return kept;
}

}  // namespace autopar::planner
