#include "planner/target_pruning.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <unordered_map>

namespace autopar::planner {
namespace {

size_t sz(int32_t i) { return static_cast<size_t>(i); }

template <typename T>
std::vector<T> pick(const std::vector<T>& values, const std::vector<int32_t>& kept) {
  std::vector<T> out;
  out.reserve(kept.size());
  for (int32_t i : kept) out.push_back(values[sz(i)]);
  return out;
}

// Row-major [rows][cols] restricted to the kept rows and columns.
std::vector<double> pick_matrix(const std::vector<double>& m, size_t cols, const std::vector<int32_t>& rows_kept,
                                const std::vector<int32_t>& cols_kept) {
  std::vector<double> out;
  out.reserve(rows_kept.size() * cols_kept.size());
  for (int32_t i : rows_kept)
    for (int32_t j : cols_kept) out.push_back(m[sz(i) * cols + sz(j)]);
  return out;
}

// The least edge slack of each class of one end (rows: u, columns: v).
std::vector<double> end_minima(const ReducedEdge& e, const std::vector<double>& slack, bool u_end) {
  const size_t A = sz(e.u_classes), B = sz(e.v_classes);
  std::vector<double> out(u_end ? A : B, kInfiniteCost);
  for (size_t a = 0; a < A; ++a)
    for (size_t b = 0; b < B; ++b) {
      double& m = out[u_end ? a : b];
      m = std::min(m, slack[a * B + b]);
    }
  return out;
}

}  // namespace

PrunedProblem prune_to_target(const ReducedProblem& r, const DualBound& dual, double target) {
  PrunedProblem out;
  const double limit = target - dual.bound + 1e-9 * std::max(1.0, std::abs(target));
  const bool pair_slack = dual.edge_slack.size() == r.edges.size();
  // Per group and alive strategy: the least slack any assignment taking it
  // adds to the bound (its own, and its edges' least over partners).
  std::vector<std::vector<double>> least(r.nodes.size());
  for (size_t g = 0; g < r.nodes.size(); ++g) least[g] = dual.slack[g];
  if (pair_slack) {
    for (size_t k = 0; k < r.edges.size(); ++k) {
      const ReducedEdge& e = r.edges[k];
      std::vector<double> mu = end_minima(e, dual.edge_slack[k], true);
      std::vector<double> mv = end_minima(e, dual.edge_slack[k], false);
      for (size_t i = 0; i < least[sz(e.u)].size(); ++i) least[sz(e.u)][i] += mu[sz(e.u_class[i])];
      for (size_t j = 0; j < least[sz(e.v)].size(); ++j) least[sz(e.v)][j] += mv[sz(e.v_class[j])];
    }
  }
  std::vector<std::vector<int32_t>> kept(r.nodes.size());
  for (size_t g = 0; g < r.nodes.size(); ++g) {
    const size_t n = r.nodes[g].alive.size();
    std::vector<int32_t>& k = kept[g];
    for (size_t i = 0; i < n; ++i)
      if (n < 2 || least[g][i] <= limit) k.push_back(static_cast<int32_t>(i));
    if (n >= 2 && k.size() < 2) {
      k.resize(n);
      std::iota(k.begin(), k.end(), 0);
      std::stable_sort(k.begin(), k.end(), [&](int32_t a, int32_t b) { return least[g][sz(a)] < least[g][sz(b)]; });
      k.resize(2);
      std::sort(k.begin(), k.end());
    }
    if (n >= 2) out.strategies += static_cast<int64_t>(n), out.strategies_left += static_cast<int64_t>(k.size());
  }

  ReducedProblem& p = out.problem;
  p = r;
  for (size_t g = 0; g < r.nodes.size(); ++g) {
    p.nodes[g].alive = pick(r.nodes[g].alive, kept[g]);
    p.nodes[g].costs = pick(r.nodes[g].costs, kept[g]);
  }
  for (size_t k = 0; k < r.edges.size(); ++k) {
    const ReducedEdge& e = r.edges[k];
    ReducedEdge& pe = p.edges[k];
    const std::vector<int32_t>& ku = kept[sz(e.u)];
    const std::vector<int32_t>& kv = kept[sz(e.v)];
    pe.u_class = pick(e.u_class, ku);
    pe.v_class = pick(e.v_class, kv);
    pe.costs = pick_matrix(e.costs, r.nodes[sz(e.v)].alive.size(), ku, kv);
    for (HeldOnEdge& h : pe.held) h.bytes = pick_matrix(h.bytes, r.nodes[sz(e.v)].alive.size(), ku, kv);
    // A class pair stays when both classes keep a strategy and its least
    // sum (the pair's slack and its ends' least) is within the target.
    std::vector<double> su(sz(e.u_classes), kInfiniteCost), sv(sz(e.v_classes), kInfiniteCost);
    for (int32_t i : ku) su[sz(e.u_class[sz(i)])] = std::min(su[sz(e.u_class[sz(i)])], dual.slack[sz(e.u)][sz(i)]);
    for (int32_t j : kv) sv[sz(e.v_class[sz(j)])] = std::min(sv[sz(e.v_class[sz(j)])], dual.slack[sz(e.v)][sz(j)]);
    const size_t B = sz(e.v_classes);
    for (size_t a = 0; a < sz(e.u_classes); ++a)
      for (size_t b = 0; b < B; ++b) {
        double& c = pe.class_costs[a * B + b];
        if (!(c < kInfiniteCost)) continue;
        ++out.pairs;
        const double sum = su[a] + sv[b] + (pair_slack ? dual.edge_slack[k][a * B + b] : 0.0);
        if (sum <= limit) ++out.pairs_left;
        else c = kInfiniteCost;
      }
  }
  // Terms shared between rows stay shared: each vector is picked once.
  std::unordered_map<const std::vector<double>*, SharedCoefficients> picked;
  auto pick_term = [&](MemoryTerm& t) {
    SharedCoefficients& to = picked[t.shared.get()];
    if (!to) to = std::make_shared<const std::vector<double>>(pick(t.coef(), kept[sz(t.group)]));
    t.shared = to;
  };
  for (MemoryRow& row : p.memory_rows)
    for (MemoryTerm& t : row.terms) pick_term(t);
  for (MemoryTerm& t : p.static_terms) pick_term(t);
  for (HeldOnGroup& h : p.group_held) h.bytes = pick(h.bytes, kept[sz(h.group)]);
  out.to_original = std::move(kept);
  return out;
}

std::vector<int32_t> unprune_choice(const PrunedProblem& pruned, const std::vector<int32_t>& choice) {
  std::vector<int32_t> out(choice.size());
  for (size_t g = 0; g < choice.size(); ++g) out[g] = pruned.to_original[g][sz(choice[g])];
  return out;
}

}  // namespace autopar::planner
