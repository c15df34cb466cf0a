// solve_with_cbc: presolve, rounds of lazy memory rows, each an LP
// relaxation first and CBC (relaxation_search.h) when it is fractional.
#include "planner/cbc_solver.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string_view>

#include "planner/memory_bound.h"
#include "planner/local_search.h"
#include "planner/relaxation_search.h"
#include "planner/target_pruning.h"
#include "planner/stopwatch.h"

namespace autopar::planner {
namespace {

// Sweeps of a warm-started dual ascent (SolverOptions::dual_start), a work
// limit. llama3-8b b32 s8192 on 8x8, untied from the tied multipliers
// (tied_multipliers.h): 50 sweeps leave 334 k pair columns after pruning,
// 100 leave 53 k (1.3 s of sweeps), 200 leave 36 k.
constexpr int32_t kWarmSweeps = 100;

// "node limit of 10000 (raise --max-nodes)", for messages.
std::string limit_phrase(const SolverOptions& o, StopReason reason) {
  switch (reason) {
    case StopReason::kNodeLimit:
      return fmt::format("node limit of {} (raise --max-nodes)", o.max_nodes);
    case StopReason::kIterationLimit:
      return fmt::format("LP iteration limit of {} (raise --max-lp-iterations)", o.max_lp_iterations);
    case StopReason::kCompleted:
    case StopReason::kTimeLimit: break;
  }
  return fmt::format("{} s time limit (raise --time-limit)", o.time_limit_s);
}

void fill_from_assignment(const Problem& p, Solution& s) {
  Evaluation eval = evaluate(p, s.assignment);
  s.objective = eval.cost;
  s.peak_bytes = eval.peak_bytes;
  s.best_bound = std::min(s.best_bound, s.objective);
  s.gap = relative_gap(s.objective, s.best_bound);  // > 0 with SolverOptions::relative_gap
}

// The s columns set to 1 by `start` (a full assignment of the Problem), or
// none when one of its strategies did not survive presolve (a dominated one).
std::vector<int> start_columns(const ReducedProblem& r, const IlpModel& m, const Assignment& start) {
  std::vector<int> columns;
  if (start.size() != r.group_of.size()) return {};
  for (size_t g = 0; g < r.nodes.size(); ++g) {
    if (m.first_column[g] < 0) continue;
    const std::vector<StrategyIdx>& alive = r.nodes[g].alive;
    auto at = std::find(alive.begin(), alive.end(), start[static_cast<size_t>(r.nodes[g].root)]);
    if (at == alive.end()) return {};
    columns.push_back(m.first_column[g] + static_cast<int>(at - alive.begin()));
  }
  return columns;
}

Solution infeasible(const Problem& p, const ReducedProblem& r, const SolverOptions& o,
                    std::string message, bool memory_may_be_why) {
  Solution s;
  s.status = SolveStatus::kInfeasible;
  s.message = std::move(message);
  if (memory_may_be_why && p.has_memory_limit()) {
    s.shortfall = memory_shortfall(p, r, o);
    if (s.shortfall) s.message = describe(*s.shortfall);
  }
  return s;
}

// The last round's LP basis, carried to the next round's model. Rounds
// differ only in their memory rows (build_ilp's last rows) and, once a row
// shares the static terms, the S column and its row (ilp_model.h): rows kept
// keep their status, new memory rows and a new S column start basic, a new S
// row nonbasic (so the basis stays square, and the duals, hence dual
// feasibility, are unchanged).
struct RoundBasis {
  LpBasis last;
  bool last_static = false;
  std::vector<size_t> last_rows;  // all-rows index of each of last's memory rows
  std::vector<size_t> rows;       // the same for the round about to run

  static constexpr int kBasic = 1, kAtLower = 3;

  LpBasis for_model(const IlpModel& m, size_t memory_rows) const {
    LpBasis b;
    const bool now_static = m.static_sum_column >= 0;
    const size_t cols = static_cast<size_t>(m.columns()) - (now_static ? 1 : 0);
    const size_t base = static_cast<size_t>(m.rows()) - memory_rows - (now_static ? 1 : 0);
    const size_t last_cols = last.columns.size() - (last_static ? 1 : 0);
    const size_t last_base = last.rows.size() - last_rows.size() - (last_static ? 1 : 0);
    if (last.empty() || (last_static && !now_static) || cols != last_cols || base != last_base ||
        rows.size() != memory_rows)
      return b;
    b.columns.assign(last.columns.begin(), last.columns.begin() + static_cast<std::ptrdiff_t>(cols));
    b.rows.assign(last.rows.begin(), last.rows.begin() + static_cast<std::ptrdiff_t>(base));
    if (now_static) {
      b.columns.push_back(last_static ? last.columns[cols] : kBasic);
      b.rows.push_back(last_static ? last.rows[base] : kAtLower);
    }
    const size_t last_first = last_base + (last_static ? 1 : 0);
    size_t k = 0;  // both lists ascend
    for (size_t id : rows) {
      while (k < last_rows.size() && last_rows[k] < id) ++k;
      b.rows.push_back(k < last_rows.size() && last_rows[k] == id ? last.rows[last_first + k] : kBasic);
    }
    return b;
  }
};

// The model's size, in the stats.
void record_size(const IlpModel& m, SolveStats& stats) {
  stats.variables = m.columns();
  stats.integer_variables = m.integers();
  stats.constraints = m.rows();
  stats.nonzeros = static_cast<int64_t>(m.row_index.size());
}

// One solve of a reduced problem with the memory rows it holds now. Fills s
// (status, bound, message) and choice; false when there is no answer to go
// on with (infeasible or stopped without one: s says why). Stats add up over
// rounds; the time limit counts from solve_start. `pruned`: a pruned problem
// (target_pruning.h), whose infeasibility is no news about the whole (no
// shortfall is worked out) and whose size is not the problem's.
// `stop_above` (seconds): only an answer at or below it matters; when the LP
// relaxation is above it, the answer is "infeasible" with no search (CBC's
// own cutoff there was tried and dropped: its search without the pruned
// optimum as an incumbent took llama3-debugmodel 6x8 tight 1.6 -> 14.3 s).
Expected<bool> solve_reduced(const Problem& p, const ReducedProblem& r, const SolverOptions& o,
                             const Assignment& incumbent,
                             std::chrono::steady_clock::time_point solve_start, SolveStats& stats,
                             Solution& s, std::vector<int32_t>& choice, RoundBasis& basis, bool pruned,
                             double stop_above = kInfiniteCost) {
  auto start = std::chrono::steady_clock::now();
  IlpModel m = build_ilp(r, IlpObjective::kCost);
  // A non-finite coefficient aborts Clp (an assert, not an error): refuse it.
  for (size_t c = 0; c < m.objective.size(); ++c)
    if (!std::isfinite(m.objective[c]))
      return make_error_of(ErrorKind::kInternal,
                           "planner: internal error: ILP column {} has objective {} after presolve "
                           "(a forbidden cost was not removed); please report it with --dump-ilp",
                           c, m.objective[c]);
  stats.pruned_variables = pruned ? m.columns() : 0;
  if (!pruned) record_size(m, stats);
  stats.build_s += seconds_since(start);
  s = Solution{};
  std::fill(choice.begin(), choice.end(), 0);
  if (m.columns() == 0) {
    s.status = SolveStatus::kOptimal;
    s.best_bound = r.constant_cost;
    return true;
  }
  SolverOptions left = o;  // earlier rounds count against the limit
  left.time_limit_s = std::max(o.time_limit_s - seconds_since(solve_start), 1e-3);
  CbcRun run;
  const ObjectiveMap map{m.objective_scale, r.constant_cost};
  if (o.progress && o.lp_first) report_progress(o.progress, "lp relaxation", solve_start, std::nullopt, std::nullopt);
  LpSolution relaxation;
  LpBasis start_basis = basis.for_model(m, r.memory_rows.size());
  Relaxation lp = o.lp_first ? solve_integral_relaxation(m, left, run, &relaxation,
                                                         &start_basis, &basis.last)
                             : Relaxation::kFractional;
  basis.last_static = m.static_sum_column >= 0;
  bool done = lp != Relaxation::kFractional;  // stopped: no CBC (see cbc_solver.h)
  double lp_s = run.seconds;
  stats.lp_iterations += run.lp_iterations;
  if (stop_above < kInfiniteCost && lp == Relaxation::kFractional &&
      map(relaxation.objective) > stop_above + 1e-7 * std::abs(stop_above)) {
    stats.solve_s += lp_s;
    s.status = SolveStatus::kInfeasible;  // nothing at or below stop_above
    return false;
  }
  if (!done) {
    SolverOptions rest = left;  // the relaxation's time counts against the limit
    rest.time_limit_s = std::max(left.time_limit_s - lp_s, 1e-3);
    run = o.lp_first ? solve_after_relaxation(r, m, relaxation, rest, solve_start, map,
                                              start_columns(r, m, incumbent), stats)
                     : run_cbc_reporting(m, rest, solve_start, map, start_columns(r, m, incumbent));
  }
  stats.solve_s += run.seconds + (done ? 0 : lp_s);
  stats.search_nodes += run.nodes;
  if (run.status == SolveStatus::kInfeasible && pruned) {
    s.status = SolveStatus::kInfeasible;
    return false;
  }
  if (run.status == SolveStatus::kInfeasible) {
    s = infeasible(p, r, o, p.has_memory_limit()
                            ? "no assignment meets both the memory budget and the "
                              "forbidden reshardings"
                            : "no assignment avoids every forbidden resharding", true);
    s.stats = stats;
    return false;
  }
  s.status = run.status;
  s.stopped_by = run.stopped_by;
  s.best_bound = run.best_bound / m.objective_scale + r.constant_cost;
  if (lp == Relaxation::kStopped) {
    s.best_bound = std::numeric_limits<double>::quiet_NaN();
    s.message = fmt::format("no solution within the {}: the LP relaxation alone took it all "
                            "(on 3+ dim meshes the default --mesh-solve sweeps solves smaller "
                            "ILPs)", limit_phrase(o, run.stopped_by));
    s.stats = stats;
    return false;
  }
  if (run.columns.empty()) {
    s.message = fmt::format("no solution within the {}", limit_phrase(o, run.stopped_by));
    s.stats = stats;
    return false;
  }
  choice = decode_choice(r, m, run.columns.data());
  return true;
}

// What a choice costs, seconds: choice_cost counts the single-strategy
// groups, whose cost is in constant_cost already.
double choice_seconds(const ReducedProblem& r, const std::vector<int32_t>& choice) {
  double cost = choice_cost(r, choice) + r.constant_cost;
  for (size_t g = 0; g < r.nodes.size(); ++g)
    if (r.nodes[g].alive.size() < 2) cost -= r.nodes[g].costs[static_cast<size_t>(choice[g])];
  return cost;
}


DualBound warm_dual_bound(const ReducedProblem& r, const std::function<EdgeMultipliers(const ReducedProblem&)>& start) {
  const EdgeMultipliers l = start(r);
  return pairwise_dual_bound(r, kWarmSweeps, 1e-9, &l);
}

// solve_reduced, first on the problem pruned to a target (target_pruning.h),
// twice at most: steps of 0.5% and 4% above the dual bound (relative to the
// bound's part that choices decide), or instead the cost of the cheapest
// incumbent known by then when that is within the step (the caller's, the
// dual ascent's least-potential choice improved by single moves, or the
// first pruned problem's answer).
// A target that is an incumbent's cost is conclusive: the pruned problem
// holds that incumbent and every cheaper assignment, so its optimum is the
// whole problem's. Any other answers only when its optimum is within it.
// When neither answers, or a pruning keeps half the pair columns or more, the
// whole problem is solved, from the cheapest incumbent.
Expected<bool> solve_round(const Problem& p, const ReducedProblem& r, const SolverOptions& o,
                           const Assignment& incumbent,
                           std::chrono::steady_clock::time_point solve_start, SolveStats& stats,
                           Solution& s, std::vector<int32_t>& choice, RoundBasis& basis) {
  if (!o.target_pruning || !o.lp_first || cost_ilp_columns(r) < o.target_pruning_min_pairs)
    return solve_reduced(p, r, o, incumbent, solve_start, stats, s, choice, basis, false);
  auto begin = std::chrono::steady_clock::now();
  if (o.progress) report_progress(o.progress, "dual bound", solve_start, std::nullopt, std::nullopt);
  const DualBound dual = !r.memory_rows.empty() ? memory_dual_bound(r, kInfiniteCost)
                         : o.dual_start       ? warm_dual_bound(r, o.dual_start)
                                              : pairwise_dual_bound(r);
  // The cheapest incumbent: the caller's, when it fits, or the ascent's.
  Assignment start = incumbent;
  double found = kInfiniteCost;  // seconds, of `start` when it fits
  if (!incumbent.empty()) {
    const Evaluation eval = evaluate(p, incumbent);
    if (is_feasible(p, eval)) found = eval.cost;
  }
  if (!dual.fitting_choice.empty()) {
    std::vector<int32_t> fitting = dual.fitting_choice;
    improve_by_single_moves(r, fitting);
    if (const double cost = choice_seconds(r, fitting); cost < found) found = cost, start = expand(r, fitting);
  }
  stats.solve_s += seconds_since(begin);
  const double scale = std::max(std::abs(dual.bound - r.constant_cost), 1e-15);
  for (int attempt = 0; attempt < 2; ++attempt) {
    const double step = attempt == 0 ? 0.005 : 0.04;
    const bool conclusive = found <= dual.bound + step * scale;
    const double target = conclusive ? found : dual.bound + step * scale;
    auto prune_start = std::chrono::steady_clock::now();
    PrunedProblem pruned = prune_to_target(r, dual, target);
    stats.solve_s += seconds_since(prune_start);
    if (pruned.pairs_left * 2 > pruned.pairs) break;  // too little gone to pay for a second solve
    ++stats.pruning_targets;
    Solution answer;
    std::vector<int32_t> pruned_choice(r.nodes.size(), 0);
    RoundBasis fresh;
    // Not conclusive: a relaxation above the target settles it with no
    // search (llama3-70b 6x8 at 80 GB: 7.7 -> 4.2 s); below it, the pruned
    // optimum is searched for whole, as the incumbent for the next target.
    Expected<bool> solved = solve_reduced(p, pruned.problem, o, start, solve_start, stats, answer, pruned_choice,
                                          fresh, true, conclusive ? kInfiniteCost : target);
    if (!solved) return solved.error();
    if (answer.status == SolveStatus::kInfeasible && !conclusive) continue;  // nothing fits at or below the target
    if (!*solved) {  // stopped by a limit without an answer (or, conclusive, tolerances bit)
      s = std::move(answer);
      s.best_bound = std::max(dual.bound, std::min(s.best_bound, target));
      return false;
    }
    choice = unprune_choice(pruned, pruned_choice);
    const double cost = choice_seconds(r, choice);
    const bool within = cost <= target * (1 + 1e-12) + 1e-15;
    // Completed above the target: nothing within it.
    if (!within && answer.stopped_by == StopReason::kCompleted) {
      if (cost < found) found = cost, start = expand(r, choice);
      continue;
    }
    // Optimal within the target: the whole problem's optimum. Stopped by a
    // limit: an answer, and a bound capped by the target.
    s = std::move(answer);
    if (s.status != SolveStatus::kOptimal) s.best_bound = std::max(dual.bound, std::min(s.best_bound, target));
    if (o.whole_size_stats) {
      record_size(build_ilp(r, IlpObjective::kCost), stats);  // the problem's size, not the pruned one's
    } else {
      stats.variables = cost_ilp_columns(r);
    }
    return true;
  }
  if (!o.whole_after_pruning) {
    s = Solution{};
    s.best_bound = dual.bound;
    s.message = "pruning to a target near the dual bound answered nothing, and the whole problem was not asked for";
    s.stats = stats;
    return false;
  }
  return solve_reduced(p, r, o, start, solve_start, stats, s, choice, basis, false);
}

}  // namespace

Expected<Solution> solve_with_cbc(const Problem& p, const SolverOptions& o, const Assignment& incumbent) {
  if (Status valid = validate(p); !valid) return valid.error();
  return solve_validated_with_cbc(p, o, incumbent);
}

Expected<Solution> solve_validated_with_cbc(const Problem& p, const SolverOptions& o, const Assignment& incumbent) {
  auto start = std::chrono::steady_clock::now();
  const auto solve_start = start;  // progress reports count from here
  ReducedProblem r = presolve(p);
  SolveStats stats;
  stats.nodes = static_cast<int32_t>(p.nodes.size());
  for (const ReducedNode& n : r.nodes) stats.reduced_nodes += n.alive.size() > 1 ? 1 : 0;
  stats.reduced_edges = static_cast<int32_t>(r.edges.size());
  stats.memory_rows = static_cast<int32_t>(r.memory_rows.size());
  stats.presolve_s = seconds_since(start);
  if (!r.infeasible.empty()) {
    Solution s = infeasible(p, r, o, r.infeasible, /*memory_may_be_why=*/false);
    s.stats = stats;
    return s;
  }
  for (const MemoryRow& row : r.memory_rows)
    if (row.constant > row.budget) {
      Solution s = infeasible(p, r, o, "memory budget cannot be met", true);
      s.stats = stats;
      return s;
    }
  // Memory rows enter lazily (lazy_memory_rows): each round solves with the
  // rows that bound a previous round's answer and adds those it breaks.
  std::vector<MemoryRow> all_rows = std::move(r.memory_rows);
  // No row can bind: the relaxation is all there is to solve, perturbed
  // (SolverOptions::perturb_relaxation).
  SolverOptions options = o;
  options.perturb_relaxation = o.perturb_relaxation || all_rows.empty();
  std::vector<char> entered(all_rows.size(), 0);
  for (size_t k = 0; k < all_rows.size(); ++k)
    if (all_rows[k].static_budget_row || !o.lazy_memory_rows) entered[k] = 1;
  Solution s;
  std::vector<int32_t> choice(r.nodes.size(), 0);
  Assignment start_from = incumbent;
  RoundBasis basis;
  for (int round = 0;; ++round) {
    r.memory_rows.clear();
    basis.last_rows = std::move(basis.rows);
    basis.rows.clear();
    for (size_t k = 0; k < all_rows.size(); ++k)
      if (entered[k]) r.memory_rows.push_back(all_rows[k]), basis.rows.push_back(k);
    stats.memory_rows_entered = static_cast<int32_t>(r.memory_rows.size());
    stats.memory_row_rounds = round + 1;
    Expected<bool> solved = solve_round(p, r, options, start_from, solve_start, stats, s, choice, basis);
    if (!solved) return solved.error();
    if (!*solved) return s;  // infeasible or no solution: s says why
    // Rows the answer breaks (a relative tolerance above CBC's own).
    int32_t last_round = o.max_memory_row_rounds - 1;
    std::vector<std::pair<double, size_t>> broken;  // (excess, row)
    for (size_t k = 0; k < all_rows.size(); ++k) {
      if (entered[k]) continue;
      double value = memory_row_value(r, all_rows[k], choice);
      if (value > all_rows[k].budget * (1 + 1e-9)) broken.push_back({value - all_rows[k].budget, k});
    }
    if (broken.empty()) break;
    // The most broken rows first, a few a round (rows of neighbouring time
    // points are near copies: one often settles the rest); past the round
    // limit, every broken row.
    std::stable_sort(broken.begin(), broken.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    size_t take = round >= last_round ? broken.size()
                                      : std::min(broken.size(), static_cast<size_t>(o.memory_rows_per_round));
    for (size_t i = 0; i < take; ++i) entered[broken[i].second] = 1;
    start_from.clear();  // the answer breaks a row: no longer a start
  }
  r.memory_rows = std::move(all_rows);
  s.assignment = expand(r, choice);
  fill_from_assignment(p, s);
  s.stats = stats;
  if (o.progress) report_progress(o.progress, "done", solve_start, s.objective, s.best_bound);
  return s;
}

Status dump_ilp(const Problem& p, const std::string& path) {
  if (Status valid = validate(p); !valid) return valid;
  ReducedProblem r = presolve(p);
  if (!r.infeasible.empty()) return make_error("planner: cannot dump the ILP: {}", r.infeasible);
  IlpModel m = build_ilp(r, IlpObjective::kCost, /*with_names=*/true);
  if (!std::string_view(path).ends_with(".lp")) return write_mps(m, path);
  return write_lp(m, path);
}

}  // namespace autopar::planner
