// The CBC and Clp drivers: limits, seeds, quiet or parsed logs, one run.
#include "planner/cbc_run.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <coin/Cbc_C_Interface.h>
#include <coin/Clp_C_Interface.h>

#include "planner/stopwatch.h"

namespace autopar::planner {

void report_progress(const ProgressCallback& cb, const char* stage, std::chrono::steady_clock::time_point start,
            std::optional<double> objective, std::optional<double> bound) {
  SolveProgress p;
  p.stage = stage;
  p.elapsed_s = seconds_since(start);
  p.objective = objective;
  p.best_bound = bound;
  if (objective && bound) p.gap = relative_gap(*objective, *bound);
  cb(p);
}

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
        report_progress(cb_, "branch and bound", start_, objective_, bound_);
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

}  // namespace

CbcRun run_cbc_reporting(const IlpModel& m, const SolverOptions& o,
                         std::chrono::steady_clock::time_point progress_start, ObjectiveMap map,
                         const std::vector<int>& start_columns) {
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
      // Perturbed costs where asked (no memory row can bind): the relaxation is
      // degenerate (ties everywhere), and Clp's own test left it unperturbed
      // (llama3-debugmodel 2x4: 11,054 iterations in 1.0 s, was 9,497 in
      // 4.0 s). Where a row can bind, the perturbed vertex sent the search
      // after it elsewhere, better or worse by chance (llama3-debugmodel 4x4
      // at a tight budget: 500 nodes without a proof, against 8 nodes).
      if (o.perturb_relaxation) Clp_setPerturbation(clp, 50);
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

Status write_lp(const IlpModel& m, const std::string& path) {
  // CBC appends ".lp" itself; give it the stem.
  std::string stem = path.substr(0, path.size() - 3);
  Cbc_Model* cbc = load(m);
  Cbc_writeLp(cbc, stem.c_str());
  Cbc_deleteModel(cbc);
  if (access(path.c_str(), R_OK) != 0)
    return make_error_of(ErrorKind::kRuntime, "planner: CBC did not write the ILP to '{}'", path);
  return ok_status();
}

}  // namespace autopar::planner
