#include "planner/memory_bound.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "planner/cbc_run.h"
#include "planner/cbc_solver.h"
#include "planner/ilp_model.h"
#include "planner/relaxation_search.h"

namespace autopar::planner {
namespace {

constexpr size_t kTopNodes = 8;

// The kTopNodes nodes with the most bytes, most first.
std::vector<NodeBytes> largest(const Problem& p, const std::vector<double>& bytes) {
  std::vector<NodeBytes> out;
  for (size_t v = 0; v < bytes.size(); ++v)
    if (bytes[v] > 0) out.push_back(NodeBytes{static_cast<NodeIdx>(v), p.nodes[v].name, bytes[v]});
  size_t keep = std::min(out.size(), kTopNodes);
  std::partial_sort(out.begin(), out.begin() + static_cast<ptrdiff_t>(keep), out.end(),
                    [](const NodeBytes& a, const NodeBytes& b) { return a.min_bytes > b.min_bytes; });
  out.resize(keep);
  return out;
}

std::vector<NodeBytes> top_nodes(const Problem& p, const ReducedProblem& r, TimeIdx point) {
  std::vector<double> bytes(p.nodes.size(), 0.0);
  if (point >= 0)
    for (NodeIdx v : p.live_points[static_cast<size_t>(point)])
      bytes[static_cast<size_t>(v)] += min_bytes_of(p, r, v, /*static_bytes=*/false);
  for (size_t v = 0; v < p.nodes.size(); ++v)
    bytes[v] += min_bytes_of(p, r, static_cast<NodeIdx>(v), /*static_bytes=*/true);
  return largest(p, bytes);
}

// The least peak over every assignment (exact) or a bound on it, with the
// min-peak ILP over lazily entered rows: a model of every time point's row is
// dense (70b on 2x4: tens of GB in CBC's preprocessing), so each round solves
// `some` (every row of `rows` entered so far), a relaxation whose bound is
// valid, and adds the rows its answer breaks, until its answer breaks none
// (its peak is then the least) or CBC stops at a limit (the bound stands).
void solve_min_peak(const Problem& p, ReducedProblem& some, const std::vector<MemoryRow>& rows,
                    const SolverOptions& o, MemoryShortfall& s) {
  std::vector<char> entered(rows.size(), 0);
  size_t top = 0;  // start from the row with the most unavoidable bytes
  for (size_t k = 0; k < rows.size(); ++k)
    if (rows[k].constant > rows[top].constant) top = k;
  entered[top] = 1;
  for (int round = 0;; ++round) {
    some.memory_rows.clear();
    for (size_t k = 0; k < rows.size(); ++k)
      if (entered[k]) some.memory_rows.push_back(rows[k]);
    IlpModel m = build_ilp(some, IlpObjective::kPeakMemory);
    std::vector<int32_t> choice(some.nodes.size(), 0);
    const bool has_choices = m.integers() > 0;  // counted once: it scans every column
    if (has_choices) {
      // The LP first: often integral (70b on 2x4: 0.4 s, where CBC on the
      // whole model took 39 s for the same answer); else reduced-cost fixing
      // against the LP rounded, and CBC on what is left.
      CbcRun run;
      LpSolution lp;
      Relaxation relaxation = solve_integral_relaxation(m, o, run, &lp);
      if (relaxation != Relaxation::kIntegral) {
        run = relaxation == Relaxation::kFractional ? solve_peak_after_relaxation(some, m, lp, o) : run_cbc(m, o);
        if (run.status == SolveStatus::kInfeasible) return;
      }
      s.lower_bound_bytes = std::max(s.lower_bound_bytes, run.best_bound / m.memory_scale);
      if (run.status != SolveStatus::kOptimal) return;  // a limit: the bound stands
      choice = decode_choice(some, m, run.columns.data());
    }
    // The answer is optimal over the entered rows: its highest entered row
    // (read from the rows, not the solver's objective and its tolerance) is
    // the least peak unless a row left out is higher. With one assignment
    // there is nothing to add rows for.
    double least = 0;
    for (const MemoryRow& row : some.memory_rows) least = std::max(least, memory_row_value(some, row, choice));
    std::vector<std::pair<double, size_t>> broken;  // (excess, row)
    for (size_t k = 0; has_choices && k < rows.size(); ++k) {
      if (entered[k]) continue;
      double value = memory_row_value(some, rows[k], choice);
      if (value > least * (1 + 1e-9)) broken.push_back({value - least, k});
    }
    if (broken.empty()) {
      Evaluation eval = evaluate(p, expand(some, choice));
      s.lower_bound_bytes = eval.peak_bytes;
      s.point = eval.peak_point;
      s.exact = true;
      return;
    }
    if (round + 1 >= o.max_memory_row_rounds * 4) return;  // out of rounds: the bound stands
    std::stable_sort(broken.begin(), broken.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    size_t take = std::min(broken.size(), static_cast<size_t>(std::max(o.memory_rows_per_round, 1)));
    for (size_t i = 0; i < take; ++i) entered[broken[i].second] = 1;
  }
}

}  // namespace

std::optional<MemoryShortfall> memory_shortfall(const Problem& p, const ReducedProblem& r,
                                                const SolverOptions& o) {
  for (const MemoryRow& row : r.memory_rows)
    if (row.static_budget_row && row.constant > row.budget) {
      MemoryShortfall s{row.budget, row.constant, false, true, -1, top_nodes(p, r, -1)};
      return s;
    }
  if (!(p.memory_budget < kNoBudget)) return std::nullopt;
  ReducedProblem all = presolve(p, PresolveOptions{/*all_memory_rows=*/true});
  if (!all.infeasible.empty() || all.memory_rows.empty()) return std::nullopt;
  MemoryShortfall s;
  s.budget = p.memory_budget;
  for (const MemoryRow& row : all.memory_rows)
    if (s.point == -1 || row.constant > s.lower_bound_bytes)
      s.lower_bound_bytes = row.constant, s.point = row.point;
  if (o.exact_memory_bound) {
    std::vector<MemoryRow> rows = std::move(all.memory_rows);
    solve_min_peak(p, all, rows, o, s);
  }
  // Memory is why only if even the least peak exceeds the budget.
  double tolerance = 1e-9 * std::max(1.0, std::abs(s.budget));
  if (s.lower_bound_bytes <= s.budget + tolerance) return std::nullopt;
  s.top_nodes = top_nodes(p, all, s.point);
  return s;
}

std::optional<MemoryShortfall> quick_memory_shortfall(const Problem& p) {
  auto least = [](const std::vector<double>& bytes) {
    return bytes.empty() ? 0.0 : *std::min_element(bytes.begin(), bytes.end());
  };
  std::vector<double> live(p.nodes.size()), fixed(p.nodes.size());
  double static_sum = 0;
  for (size_t v = 0; v < p.nodes.size(); ++v) {
    live[v] = least(p.nodes[v].bytes);
    fixed[v] = least(p.nodes[v].static_bytes);
    static_sum += fixed[v];
  }
  auto top = [&](TimeIdx point) {
    std::vector<double> bytes(fixed);
    if (point >= 0)
      for (NodeIdx v : p.live_points[static_cast<size_t>(point)]) bytes[static_cast<size_t>(v)] += live[static_cast<size_t>(v)];
    return largest(p, bytes);
  };
  if (static_sum > p.static_budget)
    return MemoryShortfall{p.static_budget, static_sum, false, true, -1, top(-1)};
  if (!(p.memory_budget < kNoBudget)) return std::nullopt;
  double most = static_sum;
  TimeIdx at = -1;
  for (size_t t = 0; t < p.live_points.size(); ++t) {
    double sum = static_sum;
    for (NodeIdx v : p.live_points[t]) sum += live[static_cast<size_t>(v)];
    if (sum > most) most = sum, at = static_cast<TimeIdx>(t);
  }
  if (most <= p.memory_budget) return std::nullopt;
  return MemoryShortfall{p.memory_budget, most, false, false, at, top(at)};
}

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  size_t u = 0;
  while (std::abs(bytes) >= 1024 && u + 1 < std::size(units)) bytes /= 1024, ++u;
  return u == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.2f} {}", bytes, units[u]);
}

std::string describe(const MemoryShortfall& s) {
  std::string where = s.static_row   ? "for static bytes (params, grads, optimizer state)"
                      : s.point >= 0 ? fmt::format("at time point {}", s.point)
                                     : "for static bytes";
  std::string out = fmt::format("memory budget cannot be met: needs {} {} per device {}, budget {}",
                                s.exact ? "exactly" : "at least", format_bytes(s.lower_bound_bytes),
                                where, format_bytes(s.budget));
  if (!s.top_nodes.empty()) out += "; largest there:";
  for (const NodeBytes& n : s.top_nodes)
    out += fmt::format(" {} {}{}", n.name, format_bytes(n.min_bytes),
                       &n == &s.top_nodes.back() ? "" : ",");
  return out;
}

}  // namespace autopar::planner
