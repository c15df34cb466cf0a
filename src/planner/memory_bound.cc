#include "planner/memory_bound.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "planner/cbc_solver.h"
#include "planner/ilp_model.h"

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

// Raises the bound with the min-peak ILP; its bound is valid even if unproven.
void solve_min_peak(const Problem& p, const ReducedProblem& all, const SolverOptions& o,
                    MemoryShortfall& s) {
  IlpModel m = build_ilp(all, IlpObjective::kPeakMemory);
  if (m.integers() == 0) {  // every group has one strategy: nothing to choose
    Evaluation eval = evaluate(p, expand(all, std::vector<int32_t>(all.nodes.size(), 0)));
    s.lower_bound_bytes = eval.peak_bytes;
    s.point = eval.peak_point;
    s.exact = true;
    return;
  }
  CbcRun run = run_cbc(m, o);
  if (run.status == SolveStatus::kInfeasible) return;
  double bound = run.best_bound / m.memory_scale;
  if (run.status == SolveStatus::kOptimal) {
    Assignment a = expand(all, decode_choice(all, m, run.columns.data()));
    Evaluation eval = evaluate(p, a);
    s.lower_bound_bytes = eval.peak_bytes;
    s.point = eval.peak_point;
    s.exact = true;
  } else if (bound > s.lower_bound_bytes) {
    s.lower_bound_bytes = bound;
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
  if (o.exact_memory_bound) solve_min_peak(p, all, o, s);
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
