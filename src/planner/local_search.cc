#include "planner/local_search.h"

#include <algorithm>
#include <numeric>

namespace autopar::planner {
namespace {

size_t sz(int32_t i) { return static_cast<size_t>(i); }

// The same tolerance as the lazy memory rows' "broken" test (cbc_solver.cc).
bool within(double value, double budget) { return value <= budget * (1 + 1e-9); }

double edge_cost(const ReducedEdge& e, int32_t cu, int32_t cv) {
  return e.class_costs[sz(e.u_class[sz(cu)]) * sz(e.v_classes) + sz(e.v_class[sz(cv)])];
}

double edge_coef(const ReducedEdge& e, const EdgeMemoryTerm& t, int32_t cu, int32_t cv) {
  return t.coef()[sz(e.u_class[sz(cu)]) * sz(e.v_classes) + sz(e.v_class[sz(cv)])];
}

// Where each group and edge appears in the memory rows, so a move's effect on
// every row is a few lookups.
struct RowIndex {
  struct GroupTerm { size_t row; const MemoryTerm* term; };
  struct EdgeTerm { size_t row; const EdgeMemoryTerm* term; };
  std::vector<std::vector<GroupTerm>> of_group;
  std::vector<std::vector<EdgeTerm>> of_edge;
  std::vector<const MemoryTerm*> static_of_group;  // in shared-static rows
  std::vector<size_t> shared_rows;

  explicit RowIndex(const ReducedProblem& r)
      : of_group(r.nodes.size()), of_edge(r.edges.size()), static_of_group(r.nodes.size(), nullptr) {
    for (size_t i = 0; i < r.memory_rows.size(); ++i) {
      const MemoryRow& row = r.memory_rows[i];
      for (const MemoryTerm& t : row.terms) of_group[sz(t.group)].push_back({i, &t});
      for (const EdgeMemoryTerm& t : row.edge_terms) of_edge[sz(t.edge)].push_back({i, &t});
      if (row.shared_static) shared_rows.push_back(i);
    }
    for (const MemoryTerm& t : r.static_terms) static_of_group[sz(t.group)] = &t;
  }
};

class SingleMoves {
 public:
  SingleMoves(const ReducedProblem& r, std::vector<int32_t>& choice)
      : r_(r), choice_(choice), rows_(r), incident_(r.nodes.size()) {
    for (size_t k = 0; k < r.edges.size(); ++k) {
      incident_[sz(r.edges[k].u)].push_back(k);
      incident_[sz(r.edges[k].v)].push_back(k);
    }
    values_.reserve(r.memory_rows.size());
    for (const MemoryRow& row : r.memory_rows) values_.push_back(memory_row_value(r, row, choice));
  }

  // One pass over the groups; true when some group moved.
  bool sweep() {
    bool moved = false;
    for (size_t g = 0; g < r_.nodes.size(); ++g) moved = improve(static_cast<int32_t>(g)) || moved;
    return moved;
  }

 private:
  double local_cost(int32_t g, int32_t k) const {
    double c = r_.nodes[sz(g)].costs[sz(k)];
    for (size_t e : incident_[sz(g)]) {
      const ReducedEdge& edge = r_.edges[e];
      c += edge.u == g ? edge_cost(edge, k, choice_[sz(edge.v)]) : edge_cost(edge, choice_[sz(edge.u)], k);
    }
    return c;
  }

  // Each row's change if group g moves from its strategy to k.
  void row_deltas(int32_t g, int32_t k, std::vector<double>& delta) const {
    std::fill(delta.begin(), delta.end(), 0.0);
    int32_t was = choice_[sz(g)];
    for (const auto& [row, term] : rows_.of_group[sz(g)]) delta[row] += term->coef()[sz(k)] - term->coef()[sz(was)];
    if (const MemoryTerm* st = rows_.static_of_group[sz(g)])
      for (size_t row : rows_.shared_rows) delta[row] += st->coef()[sz(k)] - st->coef()[sz(was)];
    for (size_t e : incident_[sz(g)]) {
      const ReducedEdge& edge = r_.edges[e];
      int32_t u_was = choice_[sz(edge.u)], v_was = choice_[sz(edge.v)];
      int32_t u_now = edge.u == g ? k : u_was, v_now = edge.v == g ? k : v_was;
      for (const auto& [row, term] : rows_.of_edge[e])
        delta[row] += edge_coef(edge, *term, u_now, v_now) - edge_coef(edge, *term, u_was, v_was);
    }
  }

  bool improve(int32_t g) {
    size_t n = r_.nodes[sz(g)].alive.size();
    if (n < 2) return false;
    double now = local_cost(g, choice_[sz(g)]);
    std::vector<std::pair<double, int32_t>> better;
    for (size_t k = 0; k < n; ++k) {
      double c = local_cost(g, static_cast<int32_t>(k));
      if (c < now - 1e-12 * std::max(1.0, std::abs(now))) better.push_back({c, static_cast<int32_t>(k)});
    }
    std::stable_sort(better.begin(), better.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<double> delta(values_.size());
    for (const auto& [cost, k] : better) {
      row_deltas(g, k, delta);
      bool fits = true;
      for (size_t i = 0; fits && i < values_.size(); ++i)
        fits = delta[i] <= 0 || within(values_[i] + delta[i], r_.memory_rows[i].budget);
      if (!fits) continue;
      for (size_t i = 0; i < values_.size(); ++i) values_[i] += delta[i];
      choice_[sz(g)] = k;
      return true;
    }
    return false;
  }

  const ReducedProblem& r_;
  std::vector<int32_t>& choice_;
  RowIndex rows_;
  std::vector<std::vector<size_t>> incident_;  // group -> its edges
  std::vector<double> values_;                 // each memory row's left side now
};

}  // namespace

double choice_cost(const ReducedProblem& r, const std::vector<int32_t>& choice) {
  double cost = 0;
  for (size_t g = 0; g < r.nodes.size(); ++g) cost += r.nodes[g].costs[sz(choice[g])];
  for (const ReducedEdge& e : r.edges) cost += edge_cost(e, choice[sz(e.u)], choice[sz(e.v)]);
  return cost;
}

bool memory_rows_hold(const ReducedProblem& r, const std::vector<int32_t>& choice) {
  return std::all_of(r.memory_rows.begin(), r.memory_rows.end(), [&](const MemoryRow& row) {
    return within(memory_row_value(r, row, choice), row.budget);
  });
}

double improve_by_single_moves(const ReducedProblem& r, std::vector<int32_t>& choice, int max_sweeps) {
  SingleMoves moves(r, choice);
  for (int sweep = 0; sweep < max_sweeps && moves.sweep(); ++sweep) {
  }
  return choice_cost(r, choice);
}

}  // namespace autopar::planner
