// Over 600 lines: the CBC driver (limits, logging, runs) and the steps after a
// fractional LP relaxation (incumbent, reduced-cost fixing, root pass) share
// the file-local run_cbc_reporting. The next step is to move the latter into
// relaxation_search.{h,cc} behind a declared run function; not done in the
// stop that added them, for want of time to test the move.
#include "planner/cbc_solver.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <thread>

#include <coin/Cbc_C_Interface.h>
#include <coin/Clp_C_Interface.h>

#include "planner/local_search.h"
#include "planner/memory_bound.h"
#include "planner/stopwatch.h"

namespace autopar::planner {
namespace {

// CbcMain prints a banner and statistics even at log level 0; keep stdout
// clean (the CLI prints plans there) unless the user asked for the log.
class QuietStdout {
 public:
  explicit QuietStdout(bool quiet) {
    if (!quiet) return;
    std::fflush(stdout);
    saved_ = dup(STDOUT_FILENO);
    int null_fd = open("/dev/null", O_WRONLY);
    if (saved_ >= 0 && null_fd >= 0) dup2(null_fd, STDOUT_FILENO);
    if (null_fd >= 0) close(null_fd);
  }
  ~QuietStdout() {
    if (saved_ < 0) return;
    std::fflush(stdout);
    dup2(saved_, STDOUT_FILENO);
    close(saved_);
  }
  QuietStdout(const QuietStdout&) = delete;
  QuietStdout& operator=(const QuietStdout&) = delete;

 private:
  int saved_ = -1;
};

// Model units -> seconds for progress reports (ilp_model.h scales the costs).
struct ObjectiveMap {
  double scale = 1;
  double constant = 0;
  double operator()(double v) const { return v / scale + constant; }
};

void report(const ProgressCallback& cb, const char* stage, std::chrono::steady_clock::time_point start,
            std::optional<double> objective, std::optional<double> bound) {
  SolveProgress p;
  p.stage = stage;
  p.elapsed_s = seconds_since(start);
  p.objective = objective;
  p.best_bound = bound;
  if (objective && bound) p.gap = std::max(0.0, (*objective - *bound) / std::max(std::abs(*objective), 1e-300));
  cb(p);
}

// While CBC runs with a progress callback, its log (stdout) goes into a pipe
// that a helper thread reads: the incumbent and bound come from its lines
// ("Integer solution of X", "After N nodes, ..., X best solution, best
// possible Y"), and a report goes out at most every kProgressPeriodMs even
// when CBC is silent. The C API's message callback never sees CBC's own
// branch-and-bound messages (only Clp's), hence the log.
class CbcLogProgress {
 public:
  static constexpr int kProgressPeriodMs = 250;

  CbcLogProgress(const ProgressCallback& cb, std::chrono::steady_clock::time_point start, ObjectiveMap map)
      : cb_(cb), start_(start), map_(map) {
    int fds[2];
    std::fflush(stdout);
    if (pipe(fds) != 0) return;
    saved_ = dup(STDOUT_FILENO);
    dup2(fds[1], STDOUT_FILENO);
    close(fds[1]);
    read_fd_ = fds[0];
    reader_ = std::thread([this] { read_log(); });
  }
  ~CbcLogProgress() {
    if (saved_ < 0) return;
    std::fflush(stdout);
    dup2(saved_, STDOUT_FILENO);  // closes the pipe's last write end: the reader sees EOF
    close(saved_);
    reader_.join();
    close(read_fd_);
  }
  CbcLogProgress(const CbcLogProgress&) = delete;
  CbcLogProgress& operator=(const CbcLogProgress&) = delete;

 private:
  void parse(const char* line) {
    if (const char* at = std::strstr(line, "Integer solution of ")) {
      objective_ = map_(std::strtod(at + std::strlen("Integer solution of "), nullptr));
    }
    double best = 0, possible = 0;
    if (const char* at = std::strstr(line, "After ");
        at && std::sscanf(at, "After %*d nodes, %*d on tree, %lf best solution, best possible %lf",
                          &best, &possible) == 2) {
      if (best < 1e49) objective_ = map_(best);
      bound_ = map_(possible);
    }
  }
  void read_log() {
    std::string pending;
    char buffer[4096];
    auto last = std::chrono::steady_clock::now();
    for (;;) {
      pollfd fd{read_fd_, POLLIN, 0};
      int ready = poll(&fd, 1, kProgressPeriodMs);
      if (ready > 0) {
        ssize_t n = read(read_fd_, buffer, sizeof(buffer));
        if (n <= 0) return;
        pending.append(buffer, static_cast<size_t>(n));
        for (size_t eol; (eol = pending.find('\n')) != std::string::npos; pending.erase(0, eol + 1)) {
          parse(pending.substr(0, eol).c_str());
        }
      }
      if (std::chrono::steady_clock::now() - last >= std::chrono::milliseconds(kProgressPeriodMs)) {
        report(cb_, "branch and bound", start_, objective_, bound_);
        last = std::chrono::steady_clock::now();
      }
    }
  }

  const ProgressCallback& cb_;
  std::chrono::steady_clock::time_point start_;
  ObjectiveMap map_;
  int saved_ = -1;
  int read_fd_ = -1;
  std::thread reader_;
  std::optional<double> objective_, bound_;
};

Cbc_Model* load(const IlpModel& m) {
  std::vector<int> start, index;
  std::vector<double> value;
  m.to_columns(start, index, value);
  std::vector<double> lower(static_cast<size_t>(m.columns()), 0.0);
  Cbc_Model* cbc = Cbc_newModel();
  Cbc_loadProblem(cbc, m.columns(), m.rows(), start.data(), index.data(), value.data(),
                  lower.data(), m.upper.data(), m.objective.data(), m.row_lower.data(),
                  m.row_upper.data());
  for (int c = 0; c < m.columns(); ++c)
    if (m.integer[static_cast<size_t>(c)]) Cbc_setInteger(cbc, c);
  for (size_t c = 0; c < m.column_names.size(); ++c)
    Cbc_setColName(cbc, static_cast<int>(c), m.column_names[c].c_str());
  for (size_t r = 0; r < m.row_names.size(); ++r)
    Cbc_setRowName(cbc, static_cast<int>(r), m.row_names[r].c_str());
  return cbc;
}

SolveStatus status_of(Cbc_Model* cbc) {
  bool has_incumbent = Cbc_bestSolution(cbc) != nullptr;
  if (Cbc_isProvenOptimal(cbc) && has_incumbent) return SolveStatus::kOptimal;
  if (Cbc_isProvenInfeasible(cbc)) return SolveStatus::kInfeasible;
  return has_incumbent ? SolveStatus::kFeasible : SolveStatus::kNoSolution;
}

// CBC's secondary status says which limit stopped an unfinished search.
constexpr int kCbcStoppedOnNodes = 3;
constexpr int kCbcStoppedOnTime = 4;

StopReason stop_reason_of(Cbc_Model* cbc, SolveStatus status) {
  if (status == SolveStatus::kOptimal || status == SolveStatus::kInfeasible) return StopReason::kCompleted;
  const int secondary = Cbc_secondaryStatus(cbc);
  if (secondary == kCbcStoppedOnNodes) return StopReason::kNodeLimit;
  if (secondary == kCbcStoppedOnTime) return StopReason::kTimeLimit;
  // Anything else unfinished (a stop inside preprocessing): blame the clock,
  // the one limit that makes the answer depend on the machine's load.
  return StopReason::kTimeLimit;
}

// Fixed seeds (CBC's own defaults, written out so the search never depends on
// them changing): Clp's breaks ties in degenerate LPs, CBC's drives its
// randomized heuristics. 0 would mean "the time of day".
constexpr int kClpRandomSeed = 1234567;
constexpr int kCbcRandomSeed = 123456789;
// CBC's "threads" parameter: 100 + N runs N threads in its deterministic mode.
constexpr int kCbcDeterministicThreads = 100;

void set_limits(Cbc_Model* cbc, const SolverOptions& o) {
  Cbc_setParameter(cbc, "timeMode", "elapsed");  // "sec" is CPU time otherwise
  Cbc_setParameter(cbc, "sec", fmt::format("{}", o.time_limit_s).c_str());
  Cbc_setParameter(cbc, "maxNodes", fmt::format("{}", o.max_nodes).c_str());
  Cbc_setParameter(cbc, "randomSeed", fmt::format("{}", kClpRandomSeed).c_str());
  Cbc_setParameter(cbc, "randomCbcSeed", fmt::format("{}", kCbcRandomSeed).c_str());
  const int threads = o.threads > 1 ? kCbcDeterministicThreads + o.threads : 1;
  Cbc_setParameter(cbc, "threads", fmt::format("{}", threads).c_str());
  Cbc_setParameter(cbc, "ratioGap", fmt::format("{}", o.relative_gap).c_str());
}

CbcRun run_cbc_reporting(const IlpModel& m, const SolverOptions& o,
                         std::chrono::steady_clock::time_point progress_start, ObjectiveMap map,
                         const std::vector<int>& start_columns = {}) {
  auto start = std::chrono::steady_clock::now();
  CbcRun run;
  Cbc_Model* cbc = load(m);
  if (!start_columns.empty()) {
    std::vector<double> ones(start_columns.size(), 1.0);
    Cbc_setMIPStartI(cbc, static_cast<int>(start_columns.size()), start_columns.data(), ones.data());
  }
  const bool progress = o.progress && !o.verbose;
  Cbc_setLogLevel(cbc, o.verbose || progress ? 1 : 0);
  set_limits(cbc, o);
  for (const auto& [name, value] : o.cbc_parameters)
    Cbc_setParameter(cbc, name.c_str(), value.c_str());
  if (progress) {
    CbcLogProgress log(o.progress, progress_start, map);
    Cbc_solve(cbc);
  } else {
    QuietStdout quiet(!o.verbose);
    Cbc_solve(cbc);
  }
  run.status = status_of(cbc);
  run.stopped_by = stop_reason_of(cbc, run.status);
  run.nodes = Cbc_getNodeCount(cbc);
  if (const double* sol = Cbc_bestSolution(cbc)) {
    run.columns.assign(sol, sol + m.columns());
    run.objective = Cbc_getObjValue(cbc);
  }
  run.best_bound = Cbc_getBestPossibleObjValue(cbc);
  if (run.status == SolveStatus::kOptimal) run.best_bound = std::min(run.best_bound, run.objective);
  Cbc_deleteModel(cbc);
  run.seconds = seconds_since(start);
  return run;
}

}  // namespace

CbcRun run_cbc(const IlpModel& m, const SolverOptions& o) {
  return run_cbc_reporting(m, o, std::chrono::steady_clock::now(), ObjectiveMap{});
}

Relaxation solve_integral_relaxation(const IlpModel& m, const SolverOptions& o, CbcRun& run,
                                     LpSolution* fractional, const LpBasis* basis, LpBasis* final) {
  auto start = std::chrono::steady_clock::now();
  std::vector<int> col_start, index;
  std::vector<double> value;
  m.to_columns(col_start, index, value);
  std::vector<double> lower(static_cast<size_t>(m.columns()), 0.0);
  Clp_Simplex* clp = Clp_newModel();
  Clp_loadProblem(clp, m.columns(), m.rows(), col_start.data(), index.data(), value.data(),
                  lower.data(), m.upper.data(), m.objective.data(), m.row_lower.data(),
                  m.row_upper.data());
  Clp_setLogLevel(clp, o.verbose ? 1 : 0);
  Clp_setMaximumSeconds(clp, o.time_limit_s);
  Clp_setMaximumIterations(clp, o.max_lp_iterations);
  {
    QuietStdout quiet(!o.verbose);
    // Clp's presolve before the dual simplex: the relaxation is very
    // degenerate (many equal costs), and presolve removes most of it (6x on
    // llama3-debugmodel 2x2; neutral on llama3-8b), deterministically.
    if (basis != nullptr && basis->columns.size() == static_cast<size_t>(m.columns()) &&
        basis->rows.size() == static_cast<size_t>(m.rows())) {
      for (int c = 0; c < m.columns(); ++c) Clp_setColumnStatus(clp, c, basis->columns[static_cast<size_t>(c)]);
      for (int r = 0; r < m.rows(); ++r) Clp_setRowStatus(clp, r, basis->rows[static_cast<size_t>(r)]);
      Clp_dual(clp, 0);
    } else {
      Clp_initialDualSolve(clp);
    }
  }
  if (final != nullptr) {
    final->columns.resize(static_cast<size_t>(m.columns()));
    final->rows.resize(static_cast<size_t>(m.rows()));
    for (int c = 0; c < m.columns(); ++c) final->columns[static_cast<size_t>(c)] = Clp_getColumnStatus(clp, c);
    for (int r = 0; r < m.rows(); ++r) final->rows[static_cast<size_t>(r)] = Clp_getRowStatus(clp, r);
  }
  bool integral = Clp_isProvenOptimal(clp) != 0;
  bool stopped = !integral && Clp_status(clp) == 3;  // 3: stopped on iterations or time
  run.lp_iterations = Clp_numberIterations(clp);
  if (stopped) {
    run.stopped_by = run.lp_iterations >= o.max_lp_iterations ? StopReason::kIterationLimit
                                                              : StopReason::kTimeLimit;
  }
  const double* x = Clp_getColSolution(clp);
  for (int c = 0; integral && c < m.columns(); ++c) {
    double v = x[c];
    if (m.integer[static_cast<size_t>(c)] && std::min(v, 1 - v) > 1e-7) integral = false;
  }
  if (integral) {
    run.status = SolveStatus::kOptimal;
    run.columns.assign(x, x + m.columns());
    run.objective = run.best_bound = Clp_objectiveValue(clp);
  } else if (!stopped && fractional) {
    const double* d = Clp_getReducedCost(clp);
    fractional->columns.assign(x, x + m.columns());
    fractional->reduced_costs.assign(d, d + m.columns());
    fractional->objective = Clp_objectiveValue(clp);
  }
  Clp_deleteModel(clp);
  run.seconds = seconds_since(start);
  if (integral) return Relaxation::kIntegral;
  return stopped ? Relaxation::kStopped : Relaxation::kFractional;
}

namespace {

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
  double scale = std::max(std::abs(s.objective), 1e-300);
  s.gap = std::max(0.0, (s.objective - s.best_bound) / scale);  // > 0 with relative_gap
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
  CbcRun run = run_cbc(small, quiet);
  if (run.columns.empty()) return {};
  std::vector<double> x = expand_columns(run.columns, kept, m.columns());
  return decode_choice(r, m, x.data());
}

// The best of the LP rounded (where fractional, by a small ILP; and plainly)
// and the caller's start, each improved by single moves; empty when none is
// a feasible choice.
std::vector<int32_t> incumbent_choice(const ReducedProblem& r, const IlpModel& m, const LpSolution& lp,
                                      const SolverOptions& o, const std::vector<int>& start, double& cost) {
  std::vector<std::vector<int32_t>> candidates{round_fractional_groups(r, m, lp, o),
                                               decode_choice(r, m, lp.columns.data())};
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

// After a fractional LP relaxation: an incumbent from it, reduced-cost fixing
// against that incumbent, and CBC on the columns left
// (reduced_cost_fixing.h). CBC's root alone (cuts and heuristics, no
// branching) runs first: when it finds a better incumbent, fixing against
// that one drops more columns before the search. CBC on the whole model when
// there is no incumbent.
CbcRun solve_after_relaxation(const ReducedProblem& r, const IlpModel& m, const LpSolution& lp,
                              const SolverOptions& o, std::chrono::steady_clock::time_point progress_start,
                              ObjectiveMap map, const std::vector<int>& start, SolveStats& stats) {
  auto begin = std::chrono::steady_clock::now();
  double cost = kInfiniteCost;
  std::vector<int32_t> choice = o.reduced_cost_fixing ? incumbent_choice(r, m, lp, o, start, cost)
                                                      : std::vector<int32_t>{};
  if (choice.empty()) return run_cbc_reporting(m, o, progress_start, map, start);
  ++stats.relaxation_incumbents;
  double incumbent = cost * m.objective_scale;
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
  if (o.max_nodes > 0) {
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
      double better_cost = improve_by_single_moves(r, better) * m.objective_scale;
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
  run = run_cbc_reporting(*restricted, rest, progress_start, map, restricted_start);
  if (run.status == SolveStatus::kInfeasible || run.columns.empty()) {
    // Cannot be (the incumbent is feasible there) unless tolerances bit:
    // keep the incumbent rather than lose it.
    run.columns.assign(static_cast<size_t>(restricted->columns()), 0.0);
    for (int c : restricted_start) run.columns[static_cast<size_t>(c)] = 1;
    run.objective = incumbent;
    if (run.status == SolveStatus::kInfeasible) run.status = SolveStatus::kFeasible, run.best_bound = lp.objective;
  }
  run.columns = expand_columns(run.columns, kept, m.columns());
  // Solutions outside the restricted model cost more than the incumbent.
  run.best_bound = std::max(lp.objective, std::min(run.best_bound, incumbent));
  run.seconds = seconds_since(begin);
  return run;
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

// One solve of the reduced problem with the memory rows it holds now. Fills s
// (status, bound, message) and choice; false when there is no answer to go
// on with (infeasible or stopped without one: s says why). Stats add up over
// rounds; the time limit counts from solve_start.
Expected<bool> solve_round(const Problem& p, const ReducedProblem& r, const SolverOptions& o,
                           const Assignment& incumbent,
                           std::chrono::steady_clock::time_point solve_start, SolveStats& stats,
                           Solution& s, std::vector<int32_t>& choice, RoundBasis& basis) {
  auto start = std::chrono::steady_clock::now();
  IlpModel m = build_ilp(r, IlpObjective::kCost);
  // A non-finite coefficient aborts Clp (an assert, not an error): refuse it.
  for (size_t c = 0; c < m.objective.size(); ++c)
    if (!std::isfinite(m.objective[c]))
      return make_error("planner: internal error: ILP column {} has objective {} after presolve "
                        "(a forbidden cost was not removed); please report it with --dump-ilp",
                        c, m.objective[c]);
  stats.variables = m.columns();
  stats.integer_variables = m.integers();
  stats.constraints = m.rows();
  stats.nonzeros = static_cast<int64_t>(m.row_index.size());
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
  if (o.progress && o.lp_first) report(o.progress, "lp relaxation", solve_start, std::nullopt, std::nullopt);
  LpSolution relaxation;
  LpBasis start_basis = basis.for_model(m, r.memory_rows.size());
  Relaxation lp = o.lp_first ? solve_integral_relaxation(m, left, run, &relaxation,
                                                         &start_basis, &basis.last)
                             : Relaxation::kFractional;
  basis.last_static = m.static_sum_column >= 0;
  bool done = lp != Relaxation::kFractional;  // stopped: no CBC (see cbc_solver.h)
  double lp_s = run.seconds;
  stats.lp_iterations += run.lp_iterations;
  if (!done) {
    SolverOptions rest = left;  // the relaxation's time counts against the limit
    rest.time_limit_s = std::max(left.time_limit_s - lp_s, 1e-3);
    run = o.lp_first ? solve_after_relaxation(r, m, relaxation, rest, solve_start, map,
                                              start_columns(r, m, incumbent), stats)
                     : run_cbc_reporting(m, rest, solve_start, map, start_columns(r, m, incumbent));
  }
  stats.solve_s += run.seconds + (done ? 0 : lp_s);
  stats.search_nodes += run.nodes;
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

}  // namespace

Expected<Solution> solve_with_cbc(const Problem& p, const SolverOptions& o, const Assignment& incumbent) {
  if (Status valid = validate(p); !valid) return valid.error();
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
    Expected<bool> solved = solve_round(p, r, o, start_from, solve_start, stats, s, choice, basis);
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
  if (o.progress) report(o.progress, "done", solve_start, s.objective, s.best_bound);
  return s;
}

Status dump_ilp(const Problem& p, const std::string& path) {
  if (Status valid = validate(p); !valid) return valid;
  ReducedProblem r = presolve(p);
  if (!r.infeasible.empty()) return make_error("planner: cannot dump the ILP: {}", r.infeasible);
  IlpModel m = build_ilp(r, IlpObjective::kCost, /*with_names=*/true);
  if (!std::string_view(path).ends_with(".lp")) return write_mps(m, path);
  // CBC appends ".lp" itself; give it the stem.
  std::string stem = path.substr(0, path.size() - 3);
  Cbc_Model* cbc = load(m);
  Cbc_writeLp(cbc, stem.c_str());
  Cbc_deleteModel(cbc);
  if (access(path.c_str(), R_OK) != 0)
    return make_error("planner: CBC did not write the ILP to '{}'", path);
  return ok_status();
}

}  // namespace autopar::planner
