#include "planner/reduced_cost_fixing.h"

#include <algorithm>
#include <cmath>

namespace autopar::planner {
namespace {

size_t sz(int i) { return static_cast<size_t>(i); }

// Below this a column counts as at its lower bound 0 (Clp's primal tolerance).
constexpr double kAtLowerBound = 1e-9;

}  // namespace

std::vector<char> columns_that_may_improve(const IlpModel& m, const LpSolution& lp, double incumbent) {
  const size_t n = sz(m.columns());
  // sum_c d_c (x_c - x*_c) >= 0 needs each term >= 0: true at a bound with a
  // reduced cost of the right sign. Clp's tolerances leave some terms that
  // can go negative, by at most d_c x*_c (d_c > 0) or -d_c (upper - x*_c);
  // their total comes off the bound.
  double slack = 0;
  for (size_t c = 0; c < n; ++c) {
    double d = lp.reduced_costs[c], x = lp.columns[c];
    if (d > 0) slack += d * std::max(x, 0.0);
    else if (d < 0) slack += std::isfinite(m.upper[c]) ? -d * std::max(m.upper[c] - x, 0.0) : kInfiniteCost;
  }
  // Relative and absolute margins over what Clp's tolerances can move z.
  double margin = 1e-7 * std::max(1.0, std::abs(incumbent)) + 1e-6 + slack;
  std::vector<char> keep(n, 1);
  for (size_t c = 0; c < n; ++c)
    if (lp.columns[c] <= kAtLowerBound && lp.objective + lp.reduced_costs[c] > incumbent + margin)
      keep[c] = 0;
  return keep;
}

IlpModel restrict_columns(const IlpModel& m, const std::vector<char>& keep, std::vector<int>& kept) {
  std::vector<int> new_index(sz(m.columns()), -1);
  kept.clear();
  for (int c = 0; c < m.columns(); ++c)
    if (keep[sz(c)]) new_index[sz(c)] = static_cast<int>(kept.size()), kept.push_back(c);
  IlpModel out;
  for (int c : kept) {
    out.objective.push_back(m.objective[sz(c)]);
    out.upper.push_back(m.upper[sz(c)]);
    out.integer.push_back(m.integer[sz(c)]);
    if (!m.column_names.empty()) out.column_names.push_back(m.column_names[sz(c)]);
  }
  out.row_lower = m.row_lower;
  out.row_upper = m.row_upper;
  out.row_names = m.row_names;
  for (int r = 0; r < m.rows(); ++r) {
    for (int p = m.row_start[sz(r)]; p < m.row_start[sz(r) + 1]; ++p)
      if (int c = new_index[sz(m.row_index[sz(p)])]; c >= 0) {
        out.row_index.push_back(c);
        out.row_value.push_back(m.row_value[sz(p)]);
      }
    out.row_start.push_back(static_cast<int>(out.row_index.size()));
  }
  out.peak_column = m.peak_column >= 0 ? new_index[sz(m.peak_column)] : -1;
  out.objective_scale = m.objective_scale;
  out.memory_scale = m.memory_scale;
  return out;
}

std::vector<double> expand_columns(const std::vector<double>& restricted, const std::vector<int>& kept,
                                   int original_columns) {
  std::vector<double> out(sz(original_columns), 0.0);
  for (size_t c = 0; c < kept.size(); ++c) out[sz(kept[c])] = restricted[c];
  return out;
}

}  // namespace autopar::planner
