// The steps after a fractional LP relaxation (relaxation_search.h).
#include "planner/relaxation_search.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "planner/local_search.h"
#include "planner/stopwatch.h"

namespace autopar::planner {
namespace {

// The columns a choice sets to 1: its s columns and its edges' pair columns.
std::vector<int> columns_of(const ReducedProblem& r, const IlpModel& m, const std::vector<int32_t>& choice) {
  std::vector<int> columns;
  for (size_t g = 0; g < r.nodes.size(); ++g)
    if (m.first_column[g] >= 0) columns.push_back(m.first_column[g] + choice[g]);
  for (size_t k = 0; k < r.edges.size(); ++k) {
    const ReducedEdge& e = r.edges[k];
    int32_t a = e.u_class[static_cast<size_t>(choice[static_cast<size_t>(e.u)])];
    int32_t b = e.v_class[static_cast<size_t>(choice[static_cast<size_t>(e.v)])];
    int c = m.edge_columns[k][static_cast<size_t>(a * e.v_classes + b)];
    if (c >= 0) columns.push_back(c);
  }
  std::sort(columns.begin(), columns.end());
  return columns;
}

// The LP rounded where it is fractional only: groups the relaxation sets
// integrally keep that strategy, and a small ILP over the others (and the
// pair columns their edges leave open) chooses theirs. Empty if it finds
// nothing within the limits (then plain rounding is the candidate).
std::vector<int32_t> round_fractional_groups(const ReducedProblem& r, const IlpModel& m,
                                             const LpSolution& lp, const SolverOptions& o) {
  constexpr double kIntegral = 1e-6;
  std::vector<char> keep(static_cast<size_t>(m.columns()), 1);
  std::vector<int32_t> fixed(r.nodes.size(), -1);
  for (size_t g = 0; g < r.nodes.size(); ++g) {
    if (m.first_column[g] < 0) continue;
    size_t first = static_cast<size_t>(m.first_column[g]), n = r.nodes[g].alive.size();
    for (size_t k = 0; k < n; ++k)
      if (lp.columns[first + k] >= 1 - kIntegral) fixed[g] = static_cast<int32_t>(k);
    if (fixed[g] >= 0)
      for (size_t k = 0; k < n; ++k) keep[first + k] = static_cast<int32_t>(k) == fixed[g];
  }
  for (size_t k = 0; k < r.edges.size(); ++k) {
    const ReducedEdge& e = r.edges[k];
    int32_t fu = fixed[static_cast<size_t>(e.u)], fv = fixed[static_cast<size_t>(e.v)];
    for (int32_t a = 0; a < e.u_classes; ++a)
      for (int32_t b = 0; b < e.v_classes; ++b) {
        int c = m.edge_columns[k][static_cast<size_t>(a * e.v_classes + b)];
        if (c < 0) continue;
        if ((fu >= 0 && e.u_class[static_cast<size_t>(fu)] != a) ||
            (fv >= 0 && e.v_class[static_cast<size_t>(fv)] != b))
          keep[static_cast<size_t>(c)] = 0;
      }
  }
  std::vector<int> kept;
  IlpModel small = restrict_columns(m, keep, kept);
  SolverOptions quiet = o;
  quiet.progress = {};
  // Without CBC's feasibility pump: on this small ILP its first incumbent
  // came from a dive anyway, after the pump spent 6 of the 13 s
  // (llama3-debugmodel 2x4 at a tight budget: 34 s -> 31 s in all; llama3-8b
  // 2x4 1.4 -> 1.2 s). The caller's --cbc-option settings still apply after.
  quiet.cbc_parameters.insert(quiet.cbc_parameters.begin(), {"feasibilityPump", "off"});
  CbcRun run = run_cbc(small, quiet);
  if (run.columns.empty()) return {};
  std::vector<double> x = expand_columns(run.columns, kept, m.columns());
  return decode_choice(r, m, x.data());
}

// The LP rounded two ways: where fractional, by a small ILP; and plainly.
std::vector<std::vector<int32_t>> roundings(const ReducedProblem& r, const IlpModel& m, const LpSolution& lp,
                                            const SolverOptions& o) {
  return {round_fractional_groups(r, m, lp, o), decode_choice(r, m, lp.columns.data())};
}

// The best of the LP's roundings and the caller's start, each improved by
// single moves; empty when none is a feasible choice.
std::vector<int32_t> incumbent_choice(const ReducedProblem& r, const IlpModel& m, const LpSolution& lp,
                                      const SolverOptions& o, const std::vector<int>& start, double& cost) {
  std::vector<std::vector<int32_t>> candidates = roundings(r, m, lp, o);
  if (!start.empty()) {
    std::vector<double> x(static_cast<size_t>(m.columns()), 0.0);
    for (int c : start) x[static_cast<size_t>(c)] = 1;
    candidates.push_back(decode_choice(r, m, x.data()));
  }
  std::vector<int32_t> best;
  cost = kInfiniteCost;
  for (std::vector<int32_t>& choice : candidates) {
    if (choice.empty() || !(choice_cost(r, choice) < kInfiniteCost) || !memory_rows_hold(r, choice))
      continue;
    double c = improve_by_single_moves(r, choice);
    if (c < cost) cost = c, best = std::move(choice);
  }
  return best;
}

// The model left by reduced-cost fixing against an incumbent, with the
// incumbent's columns renumbered into it (`start`); nullopt when the fixing
// dropped one of them (tolerances: then the whole model is solved).
std::optional<IlpModel> restrict_around(const IlpModel& m, const LpSolution& lp, double incumbent,
                                        const std::vector<int>& incumbent_columns,
                                        std::vector<int>& kept, std::vector<int>& start) {
  IlpModel restricted = restrict_columns(m, columns_that_may_improve(m, lp, incumbent), kept);
  start.clear();
  for (int c : incumbent_columns) {
    auto at = std::lower_bound(kept.begin(), kept.end(), c);
    if (at == kept.end() || *at != c) return std::nullopt;
    start.push_back(static_cast<int>(at - kept.begin()));
  }
  return restricted;
}

bool meets_bound(double incumbent, double bound) {
  return incumbent <= bound + 1e-9 * std::max(1.0, std::abs(incumbent));
}

CbcRun incumbent_run(const IlpModel& m, const std::vector<int>& columns, double objective, double bound) {
  CbcRun run;
  run.status = SolveStatus::kOptimal;
  run.columns.assign(static_cast<size_t>(m.columns()), 0.0);
  for (int c : columns) run.columns[static_cast<size_t>(c)] = 1;
  run.objective = objective;
  run.best_bound = bound;
  return run;
}

// CBC on the model reduced-cost fixing left (`kept`: its columns' original
// indices), from the incumbent's columns (`start`), back in the whole
// model's columns. Solutions outside it cost more than the incumbent, so the
// bound is the restricted one capped by the incumbent, and never below the LP.
CbcRun run_restricted(const IlpModel& m, const IlpModel& restricted, const std::vector<int>& kept,
                      const std::vector<int>& start, double incumbent, const LpSolution& lp,
                      const SolverOptions& o, std::chrono::steady_clock::time_point progress_start,
                      ObjectiveMap map) {
  CbcRun run = run_cbc_reporting(restricted, o, progress_start, map, start);
  if (run.status == SolveStatus::kInfeasible || run.columns.empty()) {
    // Cannot be (the incumbent is feasible there) unless tolerances bit:
    // keep the incumbent rather than lose it.
    run.columns.assign(static_cast<size_t>(restricted.columns()), 0.0);
    for (int c : start) run.columns[static_cast<size_t>(c)] = 1;
    run.objective = incumbent;
    if (run.status == SolveStatus::kInfeasible) run.status = SolveStatus::kFeasible, run.best_bound = lp.objective;
  }
  run.columns = expand_columns(run.columns, kept, m.columns());
  run.best_bound = std::max(lp.objective, std::min(run.best_bound, incumbent));
  return run;
}

}  // namespace

CbcRun solve_after_relaxation(const ReducedProblem& r, const IlpModel& m, const LpSolution& lp,
                              const SolverOptions& o, std::chrono::steady_clock::time_point progress_start,
                              ObjectiveMap map, const std::vector<int>& start, SolveStats& stats) {
  auto begin = std::chrono::steady_clock::now();
  double cost = kInfiniteCost;
  std::vector<int32_t> choice = o.reduced_cost_fixing ? incumbent_choice(r, m, lp, o, start, cost)
                                                      : std::vector<int32_t>{};
  if (choice.empty()) return run_cbc_reporting(m, o, progress_start, map, start);
  ++stats.relaxation_incumbents;
  double incumbent = model_objective(r, m, choice, cost);
  std::vector<int> incumbent_columns = columns_of(r, m, choice);
  CbcRun run;
  stats.restricted_variables = 0;
  if (meets_bound(incumbent, lp.objective)) {
    run = incumbent_run(m, incumbent_columns, incumbent, lp.objective);
    run.seconds = seconds_since(begin);
    return run;
  }
  std::vector<int> kept, restricted_start;
  std::optional<IlpModel> restricted = restrict_around(m, lp, incumbent, incumbent_columns, kept, restricted_start);
  if (!restricted) return run_cbc_reporting(m, o, progress_start, map, start);
  SolverOptions rest = o;
  if (o.max_nodes > 0 && o.root_first) {
    SolverOptions root = o;
    root.max_nodes = 0;
    root.time_limit_s = std::max(o.time_limit_s - seconds_since(begin), 1e-3);
    CbcRun first = run_cbc_reporting(*restricted, root, progress_start, map, restricted_start);
    if (first.status == SolveStatus::kOptimal) {
      first.columns = expand_columns(first.columns, kept, m.columns());
      first.best_bound = std::max(lp.objective, std::min(first.best_bound, incumbent));
      stats.restricted_variables = restricted->columns();
      first.seconds = seconds_since(begin);
      return first;
    }
    if (!first.columns.empty() && first.objective < incumbent) {
      std::vector<double> x = expand_columns(first.columns, kept, m.columns());
      std::vector<int32_t> better = decode_choice(r, m, x.data());
      double better_cost = model_objective(r, m, better, improve_by_single_moves(r, better));
      if (better_cost < incumbent && memory_rows_hold(r, better)) {
        incumbent = better_cost;
        incumbent_columns = columns_of(r, m, better);
        if (meets_bound(incumbent, lp.objective)) {
          run = incumbent_run(m, incumbent_columns, incumbent, lp.objective);
          run.seconds = seconds_since(begin);
          return run;
        }
        std::vector<int> kept2, start2;
        if (std::optional<IlpModel> smaller = restrict_around(m, lp, incumbent, incumbent_columns, kept2, start2)) {
          restricted = std::move(smaller);
          kept = std::move(kept2);
          restricted_start = std::move(start2);
        }
      }
    }
  }
  stats.restricted_variables = restricted->columns();
  rest.time_limit_s = std::max(o.time_limit_s - seconds_since(begin), 1e-3);
  run = run_restricted(m, *restricted, kept, restricted_start, incumbent, lp, rest, progress_start, map);
  run.seconds = seconds_since(begin);
  return run;
}

// Counting the groups of one strategy too made every incumbent look worse
// than the LP by that constant (resnet18 2x4 at a tight budget: 2771.07
// against 2715.10, when the rounding had found the LP's optimum), so no
// incumbent met the bound and fixing kept too many columns.
double model_objective(const ReducedProblem& r, const IlpModel& m, const std::vector<int32_t>& choice,
                       double cost) {
  for (size_t g = 0; g < r.nodes.size(); ++g)
    if (m.first_column[g] < 0) cost -= r.nodes[g].costs[static_cast<size_t>(choice[g])];
  return cost * m.objective_scale;
}

CbcRun solve_peak_after_relaxation(const ReducedProblem& r, const IlpModel& m, const LpSolution& lp,
                                   const SolverOptions& o) {
  auto begin = std::chrono::steady_clock::now();
  std::vector<int32_t> best;
  double peak = kInfiniteCost;
  for (std::vector<int32_t>& choice : roundings(r, m, lp, o)) {
    if (choice.empty() || !(choice_cost(r, choice) < kInfiniteCost)) continue;
    double highest = 0;
    for (const MemoryRow& row : r.memory_rows) highest = std::max(highest, memory_row_value(r, row, choice));
    if (highest < peak) peak = highest, best = std::move(choice);
  }
  if (best.empty()) return run_cbc(m, o);
  double incumbent = peak * m.memory_scale;
  std::vector<int> incumbent_columns = columns_of(r, m, best);
  CbcRun run;
  std::vector<int> kept, start;
  std::optional<IlpModel> restricted;
  if (meets_bound(incumbent, lp.objective)) {
    run = incumbent_run(m, incumbent_columns, incumbent, lp.objective);
  } else if ((restricted = restrict_around(m, lp, incumbent, incumbent_columns, kept, start))) {
    run = run_restricted(m, *restricted, kept, start, incumbent, lp, o, begin, ObjectiveMap{});
  } else {
    run = run_cbc(m, o);
  }
  run.seconds = seconds_since(begin);
  return run;
}

}  // namespace autopar::planner
