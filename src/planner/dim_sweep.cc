#include "planner/dim_sweep.h"

#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "planner/cbc_solver.h"
#include "planner/memory_bound.h"
#include "planner/relaxation_bound.h"
#include "planner/stopwatch.h"

namespace autopar::planner {
namespace {

using Clock = std::chrono::steady_clock;
using Allowed = std::function<bool(NodeIdx, StrategyIdx)>;

// The strategies each node may take before any restriction: its pins
// intersected, or nullopt for every strategy.
std::vector<std::optional<std::vector<StrategyIdx>>> pinned_domains(const Problem& p) {
  std::vector<std::optional<std::vector<StrategyIdx>>> domains(p.nodes.size());
  for (const Pin& pin : p.pins) {
    auto& d = domains[static_cast<size_t>(pin.node)];
    if (!d) {
      d = pin.allowed;
      continue;
    }
    std::erase_if(*d, [&](StrategyIdx s) {
      return std::find(pin.allowed.begin(), pin.allowed.end(), s) == pin.allowed.end();
    });
  }
  return domains;
}

// Pins restricting every node to the strategies `allowed` accepts, within its
// own pins; a node left with none keeps its pinned domain.
std::vector<Pin> restricted_pins(const Problem& p,
                                 const std::vector<std::optional<std::vector<StrategyIdx>>>& domains,
                                 const Allowed& allowed) {
  std::vector<Pin> pins;
  for (size_t v = 0; v < p.nodes.size(); ++v) {
    const auto node = static_cast<NodeIdx>(v);
    const auto n = static_cast<StrategyIdx>(p.nodes[v].costs.size());
    Pin pin{node, {}};
    if (domains[v]) {
      for (StrategyIdx s : *domains[v])
        if (allowed(node, s)) pin.allowed.push_back(s);
      if (pin.allowed.empty()) pin.allowed = *domains[v];
    } else {
      for (StrategyIdx s = 0; s < n; ++s)
        if (allowed(node, s)) pin.allowed.push_back(s);
      if (pin.allowed.empty() || static_cast<StrategyIdx>(pin.allowed.size()) == n) continue;
    }
    pins.push_back(std::move(pin));
  }
  return pins;
}

std::string dim_name(int32_t d) { return fmt::format("d{}", d); }

struct Neighbourhood {
  std::string name;
  Allowed allowed;
};

// Seeds: dims [0, split) tied to dim 0, dims [split, D) tied to dim split;
// split = 1 first (the outer dim alone, the inner, faster ones as one).
std::vector<Neighbourhood> seeds(const MeshDimClasses& c) {
  std::vector<Neighbourhood> out;
  for (int32_t split = 1; split < c.mesh_dims; ++split) {
    std::string name = "seed";
    for (int32_t d = 1; d < c.mesh_dims; ++d) {
      if (d == split) continue;
      int32_t head = d < split ? 0 : split;
      name += fmt::format(" {}={}", dim_name(head), dim_name(d));
    }
    out.push_back({name, [&c, split](NodeIdx v, StrategyIdx s) {
                     for (int32_t d = 1; d < c.mesh_dims; ++d) {
                       if (d == split) continue;
                       int32_t head = d < split ? 0 : split;
                       if (c.at(v, s, d) != c.at(v, s, head)) return false;
                     }
                     return true;
                   }});
  }
  return out;
}

// Every pair of dims free, the other dims as in `incumbent`.
std::vector<Neighbourhood> pair_moves(const MeshDimClasses& c, const Assignment& incumbent) {
  std::vector<Neighbourhood> out;
  for (int32_t a = 0; a < c.mesh_dims; ++a) {
    for (int32_t b = a + 1; b < c.mesh_dims; ++b) {
      out.push_back({fmt::format("free {},{}", dim_name(a), dim_name(b)),
                     [&c, &incumbent, a, b](NodeIdx v, StrategyIdx s) {
                       StrategyIdx now = incumbent[static_cast<size_t>(v)];
                       for (int32_t d = 0; d < c.mesh_dims; ++d) {
                         if (d != a && d != b && c.at(v, s, d) != c.at(v, now, d)) return false;
                       }
                       return true;
                     }});
    }
  }
  return out;
}

// Runs the steps and keeps their budget. The steps share the work limit
// (branch-and-bound nodes), not the clock, so the same problem takes the same
// steps on a busy machine; the time limit bounds them all as a safety valve.
class Sweeper {
 public:
  Sweeper(const Problem& p, const SolverOptions& o)
      : work_(p), domains_(pinned_domains(p)), options_(o), start_(Clock::now()),
        nodes_left_(o.max_nodes) {}

  double remaining() const { return options_.time_limit_s - seconds_since(start_); }
  // The limit that ends the sweeps now, or kCompleted while both are left.
  StopReason out_of_budget() const {
    if (remaining() <= 0) return StopReason::kTimeLimit;
    return nodes_left_ <= 0 ? StopReason::kNodeLimit : StopReason::kCompleted;
  }
  // Whether the clock cut any step short: the result then depends on load.
  bool clock_fired() const { return clock_fired_; }

  // Solves one neighbourhood; the answer becomes the incumbent when better.
  // `start`: a plan inside the neighbourhood for CBC to start from, or empty.
  // A seed only starts the sweeps: it stops within kSeedGap of its own
  // optimum and takes at most kSeedShare of the nodes left.
  static constexpr double kSeedGap = 0.05;
  static constexpr double kSeedShare = 1.0 / 3;

  Expected<bool> step(const Neighbourhood& n, const Assignment& start,
                      std::vector<SweepStep>& steps, bool seed = false) {
    auto step_start = Clock::now();
    work_.pins = restricted_pins(work_, domains_, n.allowed);
    SolverOptions o = options_;
    o.time_limit_s = std::max(remaining(), 1e-3);
    o.max_nodes = seed ? static_cast<int32_t>(nodes_left_ * kSeedShare) : nodes_left_;
    if (seed) o.relative_gap = std::max(o.relative_gap, kSeedGap);
    // A step with no plan only says "no plan here": the exact least budget
    // (a min-peak ILP over the step's strategies) would go unused, and on a
    // 3-D mesh it can take minutes and tens of GB.
    o.exact_memory_bound = false;
    // A step starts from the incumbent, which fixes most of its problem:
    // CBC from there beat pruning to a target (target_pruning.h) on
    // llama3-405b 8x8x8 (22 s against 30 s for the sweeps).
    o.target_pruning = false;
    // And CBC's root-only first run, which looks for a better incumbent to
    // fix against, repeats CBC's root for little (llama3-405b 8x8x8, one run
    // each, heuristics off: 20.6 s with it, 19.5 s without). CBC's primal
    // heuristics stay: without them llama3-8b --layers 4 on 4x4x4 at 3.24 GB
    // ran to the 60 s limit at 41.178 ms instead of a local optimum of
    // 40.931 ms in 13 s.
    o.root_first = false;
    if (options_.progress) {
      o.progress = [this, &n](const SolveProgress& p) {
        std::string stage = fmt::format("{}: {}", n.name, p.stage);
        SolveProgress q = p;
        q.stage = stage.c_str();
        q.elapsed_s = seconds_since(start_);
        q.best_bound.reset();
        q.gap.reset();
        if (best_ && (!q.objective || best_->objective < *q.objective)) q.objective = best_->objective;
        options_.progress(q);
      };
    }
    Expected<Solution> s = solve_validated_with_cbc(work_, o, start);
    if (!s) return s.error();
    nodes_left_ = std::max(nodes_left_ - s->stats.search_nodes, 0);
    search_nodes_ += s->stats.search_nodes;
    lp_iterations_ += s->stats.lp_iterations;
    clock_fired_ = clock_fired_ || s->stopped_by == StopReason::kTimeLimit;
    SweepStep st;
    st.neighbourhood = n.name;
    st.status = s->status;
    st.stopped_by = s->stopped_by;
    st.has_answer = !s->assignment.empty();
    st.objective = s->objective;
    st.variables = s->stats.variables;
    st.seconds = seconds_since(step_start);
    solve_s_ += s->stats.solve_s;
    const double tolerance = 1e-9 * std::max(1.0, best_ ? std::abs(best_->objective) : 0.0);
    st.improved = st.has_answer && (!best_ || s->objective < best_->objective - tolerance);
    if (st.improved) best_ = std::move(*s);
    steps.push_back(std::move(st));
    return steps.back().improved;
  }

  std::optional<Solution>& best() { return best_; }
  double solve_s() const { return solve_s_; }
  int32_t search_nodes() const { return search_nodes_; }
  int64_t lp_iterations() const { return lp_iterations_; }
  int32_t nodes_left() const { return nodes_left_; }

 private:
  Problem work_;  // the whole problem; only its pins change from step to step
  std::vector<std::optional<std::vector<StrategyIdx>>> domains_;
  SolverOptions options_;
  Clock::time_point start_;
  std::optional<Solution> best_;
  double solve_s_ = 0;
  int32_t nodes_left_ = 0;
  int32_t search_nodes_ = 0;
  int64_t lp_iterations_ = 0;
  bool clock_fired_ = false;
};

// No seed has a plan (usually memory): the whole problem decides, with its
// exact shortfall when nothing fits, within what the seeds left of the budget.
Expected<Solution> solve_whole_instead(const Problem& p, const SolverOptions& options,
                                       const Sweeper& sweeper) {
  SolverOptions o = options;
  o.time_limit_s = std::max(sweeper.remaining(), 1e-3);
  o.max_nodes = sweeper.nodes_left();
  Expected<Solution> whole = solve_validated_with_cbc(p, o);
  if (!whole) return whole.error();
  whole->stats.search_nodes += sweeper.search_nodes();
  whole->stats.lp_iterations += sweeper.lp_iterations();
  if (sweeper.clock_fired()) whole->stopped_by = StopReason::kTimeLimit;
  whole->message = fmt::format("no tied-dims seed had a plan; whole problem: {}", whole->message);
  return whole;
}

// An answer within this relative gap of its bound is optimal (CBC's own
// tolerance is of this order).
constexpr double kProvenGap = 1e-9;

// Optimal whatever the node budget cut short; a clock that fired still
// says so (another optimum may come out on another run).
void proven(Solution& s) {
  s.status = SolveStatus::kOptimal;
  if (s.stopped_by == StopReason::kNodeLimit) s.stopped_by = StopReason::kCompleted;
}

// The relaxation's bound on the sweeps' answer: its gap, and optimal when
// the two meet.
void add_bound(const RelaxationBound& b, Solution& s) {
  s.best_bound = std::min(b.bound, s.objective);
  s.gap = relative_gap(s.objective, s.best_bound);
  s.stats.solve_s += b.seconds;
  if (s.gap <= kProvenGap) proven(s);
  s.message += fmt::format("; the whole problem's pairwise dual bound (memory relaxed, {} sweeps{}) "
                           "is {:.6g} s, gap {:.3g}%",
                           b.sweeps, b.converged ? "" : ", stopped at the sweep limit", b.bound, 100 * s.gap);
}

// Every assignment cheaper than the answer takes only strategies the dual
// fixing kept (relaxation_bound.h), so the whole problem restricted to them,
// memory rows included, solved from the answer, has the whole problem's
// optimum: proven when that solve completes.
Expected<SweepProof> prove_by_fixing(const Problem& p, const RelaxationBound& b, const SolverOptions& options,
                                     const Sweeper& sweeper, Solution& s) {
  auto start = Clock::now();
  Problem kept = p;
  kept.pins.insert(kept.pins.end(), b.fixing_pins.begin(), b.fixing_pins.end());
  SolverOptions o = options;
  o.time_limit_s = std::max(sweeper.remaining(), 1e-3);
  o.max_nodes = sweeper.nodes_left();
  const double answer = s.objective;
  if (options.progress) {
    o.progress = [&options, answer](const SolveProgress& p) {
      std::string stage = fmt::format("proof: {}", p.stage);
      SolveProgress q = p;
      q.stage = stage.c_str();
      if (!q.objective || answer < *q.objective) q.objective = answer;
      // Plans outside the restriction cost more than the answer.
      if (q.best_bound) {
        q.best_bound = std::min(*q.best_bound, answer);
        q.gap = relative_gap(*q.objective, *q.best_bound);
      }
      options.progress(q);
    };
  }
  Expected<Solution> fixed = solve_validated_with_cbc(kept, o, s.assignment);
  if (!fixed) return fixed.error();
  SweepProof proof;
  proof.strategies = b.strategies;
  proof.strategies_left = b.strategies_left;
  proof.status = fixed->status;
  proof.stopped_by = fixed->stopped_by;
  proof.variables = fixed->stats.variables;
  proof.seconds = seconds_since(start);
  s.stats.search_nodes += fixed->stats.search_nodes;
  s.stats.lp_iterations += fixed->stats.lp_iterations;
  s.stats.solve_s += fixed->stats.solve_s;
  const bool has_answer = !fixed->assignment.empty();
  if (has_answer && fixed->objective < s.objective) {
    s.assignment = fixed->assignment;
    s.objective = fixed->objective;
    s.peak_bytes = fixed->peak_bytes;
  }
  if (fixed->stopped_by == StopReason::kTimeLimit) s.stopped_by = StopReason::kTimeLimit;
  // Infeasible cannot be (the answer is in the restriction) unless
  // tolerances bit: then nothing is claimed beyond the dual bound.
  if (fixed->status == SolveStatus::kOptimal) {
    s.best_bound = s.objective;
  } else if (has_answer) {
    s.best_bound = std::max(s.best_bound, std::min(fixed->best_bound, s.objective));
  }
  s.gap = relative_gap(s.objective, s.best_bound);
  if (s.gap <= kProvenGap) proven(s);
  s.message += fmt::format("; restricted to the {} of {} strategies the dual bound leaves, the whole "
                           "problem {}", b.strategies_left, b.strategies,
                           s.status == SolveStatus::kOptimal ? "proves it optimal"
                               : fmt::format("leaves a gap of {:.3g}% ({})", 100 * s.gap,
                                             status_text(fixed->status, fixed->stopped_by)));
  return proof;
}

}  // namespace

Expected<SweepSolution> solve_by_mesh_dim_sweeps(const Problem& p, const MeshDimClasses& classes,
                                                 const SolverOptions& options) {
  if (Status valid = validate(p); !valid) return valid.error();
  if (classes.mesh_dims < 3 || classes.of_node.size() != p.nodes.size()) {
    return make_error_of(ErrorKind::kInternal,
                         "internal error: mesh-dim sweeps need 3+ mesh dims and classes for every "
                         "node ({} dims, {} of {} nodes)",
                         classes.mesh_dims, classes.of_node.size(), p.nodes.size());
  }
  SweepSolution out;
  Sweeper sweeper(p, options);
  // One seed is enough to start from (on llama3-405b 8x8x8 both end at the
  // same plan); the next is tried only when one has no plan.
  for (const Neighbourhood& seed : seeds(classes)) {
    if (sweeper.best() || sweeper.remaining() <= 0) break;
    Expected<bool> improved = sweeper.step(seed, {}, out.steps, /*seed=*/true);
    if (!improved) return improved.error();
  }
  if (!sweeper.best()) {
    // Proving it on the whole problem is costly on a 3-D mesh (llama3-405b
    // on 4x4x4: its memory rows alone need more than 20 GB), so a bound from
    // the nodes' least bytes settles it first when it can.
    if (std::optional<MemoryShortfall> short_of = quick_memory_shortfall(p)) {
      Solution& s = out.solution;
      s.status = SolveStatus::kInfeasible;
      s.shortfall = short_of;
      s.message = describe(*short_of);
      return out;
    }
    Expected<Solution> whole = solve_whole_instead(p, options, sweeper);
    if (!whole) return whole.error();
    out.solution = std::move(*whole);
    return out;
  }
  StopReason stopped_by = StopReason::kCompleted;
  size_t since_improvement = 0;
  // A limit that cut a step short since the last improvement (that one
  // included): then "no neighbourhood improves it" is not proven.
  StopReason round_cut_by = StopReason::kCompleted;
  // The moves read the incumbent through this reference as it improves.
  const Assignment& incumbent = sweeper.best()->assignment;
  std::vector<Neighbourhood> moves = pair_moves(classes, incumbent);
  for (size_t k = 0; since_improvement < moves.size(); k = (k + 1) % moves.size()) {
    stopped_by = sweeper.out_of_budget();
    if (stopped_by != StopReason::kCompleted) break;
    Expected<bool> improved = sweeper.step(moves[k], incumbent, out.steps);
    if (!improved) return improved.error();
    since_improvement = *improved ? 1 : since_improvement + 1;  // the move just made is done
    const StopReason step_stop = out.steps.back().stopped_by;
    if (*improved || step_stop != StopReason::kCompleted) round_cut_by = step_stop;
  }
  if (stopped_by == StopReason::kCompleted) stopped_by = round_cut_by;
  if (sweeper.clock_fired()) stopped_by = StopReason::kTimeLimit;
  out.solution = std::move(*sweeper.best());
  Solution& s = out.solution;
  const bool local_optimum =
      since_improvement >= moves.size() && round_cut_by == StopReason::kCompleted;
  s.status = local_optimum ? SolveStatus::kLocalOptimum : SolveStatus::kFeasible;
  s.stopped_by = stopped_by;
  s.best_bound = std::numeric_limits<double>::quiet_NaN();
  s.gap = std::numeric_limits<double>::quiet_NaN();
  s.stats.solve_s = sweeper.solve_s();
  s.stats.search_nodes = sweeper.search_nodes();
  s.stats.lp_iterations = sweeper.lp_iterations();
  s.message = fmt::format("mesh-dim sweeps: best of {} neighbourhood solves, {}", out.steps.size(),
                          local_optimum
                              ? std::string("a local optimum (no neighbourhood improves it)")
                              : fmt::format("stopped at the {}", stop_reason_words(stopped_by)));
  if (options.bound_sweeps) {
    out.bound = relaxation_bound(p, s.objective);
    if (out.bound) add_bound(*out.bound, s);
    if (out.bound && s.status != SolveStatus::kOptimal && options.prove_sweeps) {
      Expected<SweepProof> proof = prove_by_fixing(p, *out.bound, options, sweeper, s);
      if (!proof) return proof.error();
      out.proof = *proof;
    }
  }
  return out;
}

}  // namespace autopar::planner
