#include "planner/tied_multipliers.h"

#include <algorithm>
#include <map>
#include <utility>

namespace autopar::planner {
namespace {

size_t sz(int32_t i) { return static_cast<size_t>(i); }

// The tied edge an untied edge copies, and whether its ends are swapped.
struct TiedEdge {
  int32_t edge = -1;
  bool swapped = false;
};

// Per alive strategy of an untied group: its index among the alive
// strategies of the tied group holding the same node, or -1.
std::vector<int32_t> tied_positions(const ReducedProblem& tied, const ReducedProblem& untied, GroupIdx g) {
  const NodeIdx node = untied.nodes[sz(g)].root;
  const GroupIdx tg = tied.group_of[sz(node)];
  const std::vector<StrategyIdx>& tied_alive = tied.nodes[sz(tg)].alive;
  const std::vector<StrategyIdx>& to_node = tied.from_root[sz(node)];
  std::vector<int32_t> out;
  for (StrategyIdx s : untied.nodes[sz(g)].alive) {
    int32_t found = -1;
    for (size_t p = 0; p < tied_alive.size() && found < 0; ++p)
      if (to_node[sz(tied_alive[p])] == s) found = static_cast<int32_t>(p);
    out.push_back(found);
  }
  return out;
}

// One end of an untied edge: its classes' multipliers from the tied end's.
// Returns which classes took a tied value.
std::vector<char> spread_end(const std::vector<int32_t>& untied_class, int32_t untied_classes,
                             const std::vector<int32_t>& positions, const std::vector<int32_t>& tied_class,
                             const std::vector<double>& tied_l, double share, std::vector<double>& out) {
  out.assign(sz(untied_classes), 0.0);
  std::vector<char> set(sz(untied_classes), 0);
  for (size_t i = 0; i < untied_class.size(); ++i) {
    const int32_t c = untied_class[i];
    if (set[sz(c)] || positions[i] < 0) continue;
    out[sz(c)] = tied_l[sz(tied_class[sz(positions[i])])] * share;
    set[sz(c)] = 1;
  }
  return set;
}

// Classes the tied problem has no strategy of (dominated there, or in
// no tied edge) would keep a zero multiplier, and a pair of them could sink
// the edge's minimum far below the tied one. Each takes instead the value
// that keeps its pairs at or above the minimum over the spread pairs: a row
// (column) of the edge then never lowers the edge's term.
void complete_edge(const ReducedEdge& e, const std::vector<char>& set_u, const std::vector<char>& set_v,
                   std::vector<double>& lu, std::vector<double>& lv) {
  const size_t A = sz(e.u_classes), B = sz(e.v_classes);
  const std::vector<double>& c = e.class_costs;
  double least = kInfiniteCost;
  for (size_t a = 0; a < A; ++a)
    for (size_t b = 0; b < B; ++b)
      if (set_u[a] && set_v[b]) least = std::min(least, c[a * B + b] - lu[a] - lv[b]);
  if (least == kInfiniteCost) return;  // nothing spread: zeros stay
  for (size_t a = 0; a < A; ++a) {
    if (set_u[a]) continue;
    double row = kInfiniteCost;
    for (size_t b = 0; b < B; ++b)
      if (set_v[b]) row = std::min(row, c[a * B + b] - lv[b]);
    if (row < kInfiniteCost) lu[a] = row - least;
  }
  for (size_t b = 0; b < B; ++b) {
    if (set_v[b]) continue;
    double column = kInfiniteCost;
    for (size_t a = 0; a < A; ++a) column = std::min(column, c[a * B + b] - lu[a]);
    if (column < kInfiniteCost) lv[b] = column - least;
  }
}

}  // namespace

EdgeMultipliers spread_tied_multipliers(const ReducedProblem& tied, const EdgeMultipliers& tied_l,
                                        const ReducedProblem& untied) {
  // A tied edge sums every copy of an edge (presolve sums parallel edges),
  // keyed here by its ends (u < v).
  std::map<std::pair<GroupIdx, GroupIdx>, int32_t> tied_edge_of;
  for (size_t k = 0; k < tied.edges.size(); ++k)
    tied_edge_of.try_emplace({tied.edges[k].u, tied.edges[k].v}, static_cast<int32_t>(k));
  std::vector<TiedEdge> copies_of(untied.edges.size());
  std::vector<int32_t> copies(tied.edges.size(), 0);
  for (size_t k = 0; k < untied.edges.size(); ++k) {
    const NodeIdx a = untied.nodes[sz(untied.edges[k].u)].root, b = untied.nodes[sz(untied.edges[k].v)].root;
    const GroupIdx u = tied.group_of[sz(a)], v = tied.group_of[sz(b)];
    if (u == v) continue;
    const bool swapped = v < u;
    auto it = tied_edge_of.find({std::min(u, v), std::max(u, v)});
    if (it == tied_edge_of.end()) continue;
    copies_of[k] = {it->second, swapped};
    ++copies[sz(copies_of[k].edge)];
  }
  std::vector<std::vector<int32_t>> positions(untied.nodes.size());
  for (size_t g = 0; g < untied.nodes.size(); ++g)
    positions[g] = tied_positions(tied, untied, static_cast<GroupIdx>(g));
  EdgeMultipliers out;
  out.u.resize(untied.edges.size());
  out.v.resize(untied.edges.size());
  for (size_t k = 0; k < untied.edges.size(); ++k) {
    const ReducedEdge& e = untied.edges[k];
    const TiedEdge t = copies_of[k];
    if (t.edge < 0) {
      out.u[k].assign(sz(e.u_classes), 0.0);
      out.v[k].assign(sz(e.v_classes), 0.0);
      continue;
    }
    const ReducedEdge& te = tied.edges[sz(t.edge)];
    const double share = 1.0 / copies[sz(t.edge)];
    const std::vector<int32_t>& pu = positions[sz(e.u)];
    const std::vector<int32_t>& pv = positions[sz(e.v)];
    const std::vector<double>& from_u = t.swapped ? tied_l.v[sz(t.edge)] : tied_l.u[sz(t.edge)];
    const std::vector<double>& from_v = t.swapped ? tied_l.u[sz(t.edge)] : tied_l.v[sz(t.edge)];
    const std::vector<char> set_u =
        spread_end(e.u_class, e.u_classes, pu, t.swapped ? te.v_class : te.u_class, from_u, share, out.u[k]);
    const std::vector<char> set_v =
        spread_end(e.v_class, e.v_classes, pv, t.swapped ? te.u_class : te.v_class, from_v, share, out.v[k]);
    complete_edge(e, set_u, set_v, out.u[k], out.v[k]);
  }
  return out;
}

}  // namespace autopar::planner
