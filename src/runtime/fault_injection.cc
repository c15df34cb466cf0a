// The phase record, its SIGTERM report and phase faults (see fault_injection.h).
#include "runtime/fault_injection.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <vector>

#include <fmt/format.h>

namespace autopar {
namespace {

constexpr int32_t kNoOperation = -1;

// Read by the SIGTERM handler: lock-free atomics and plain ints set before it
// is installed.
std::atomic<int32_t> g_period{static_cast<int32_t>(JobPhase::kStartup)};
std::atomic<int32_t> g_operation{kNoOperation};
int g_rank = 0;
int g_size = 1;
// The armed fault (main thread only); cleared when it fires.
std::optional<PhaseFault> g_fault;

// Async-signal-safe text building: no allocation, no locale.
struct SignalText {
  char text[256];
  size_t size = 0;
  void add(std::string_view s) {
    for (char c : s) {
      if (size < sizeof text) text[size++] = c;
    }
  }
  void add(int value) {
    char digits[12];
    size_t n = 0;
    unsigned v = value < 0 ? 0u : static_cast<unsigned>(value);
    do {
      digits[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v > 0 && n < sizeof digits);
    while (n > 0) add(std::string_view(&digits[--n], 1));
  }
};

void report_sigterm(int signal) {
  SignalText t;
  t.add("autopar: rank ");
  t.add(g_rank);
  t.add(" of ");
  t.add(g_size);
  t.add(": ended by SIGTERM (mpirun ends the job) in phase ");
  const int32_t operation = g_operation.load();
  if (operation != kNoOperation) {
    t.add(phase_name(static_cast<JobPhase>(operation)));
    t.add(", during ");
  }
  t.add(phase_name(static_cast<JobPhase>(g_period.load())));
  t.add("\n");
  [[maybe_unused]] ssize_t written = ::write(STDERR_FILENO, t.text, t.size);
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

bool is_training(JobPhase period) {
  return period == JobPhase::kFirstForward || period == JobPhase::kTraining ||
         period == JobPhase::kOptimizerStep;
}

// Fires the armed fault if it is for `phase` on this rank.
Status fire(JobPhase phase) {
  if (!g_fault || g_fault->phase != phase || g_fault->rank != g_rank) return ok_status();
  const PhaseFault fault = *g_fault;
  g_fault.reset();
  if (fault.kind == FaultKind::kKill) {
    std::string line = fmt::format("autopar: rank {} of {}: killed by SIGKILL in phase {} (--inject-fault {})\n",
                                   g_rank, g_size, phase_name(phase), to_string(fault));
    std::fflush(stdout);
    [[maybe_unused]] ssize_t written = ::write(STDERR_FILENO, line.data(), line.size());
    std::raise(SIGKILL);
  }
  return make_error_of(ErrorKind::kRuntime, "injected failure in phase {} (--inject-fault {})", phase_name(phase),
                       to_string(fault));
}

}  // namespace

std::string_view phase_name(JobPhase phase) {
  switch (phase) {
    case JobPhase::kStartup: return "startup";
    case JobPhase::kShapeInference: return "shape-inference";
    case JobPhase::kFirstForward: return "first-forward";
    case JobPhase::kCollective: return "collective";
    case JobPhase::kSend: return "send";
    case JobPhase::kOptimizerStep: return "optimizer-step";
    case JobPhase::kTraining: return "training";
    case JobPhase::kReceive: return "receive";
  }
  return "unknown";
}

Expected<PhaseFault> parse_phase_fault(std::string_view spec) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    size_t colon = spec.find(':', start);
    parts.push_back(spec.substr(start, colon == std::string_view::npos ? colon : colon - start));
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  std::vector<std::string> phases;
  for (int32_t p = 0; p < kInjectablePhases; ++p) phases.emplace_back(phase_name(static_cast<JobPhase>(p)));
  auto usage = [&] {
    return make_error_of(ErrorKind::kUsage, "--inject-fault {}: give KIND:PHASE[:RANK], KIND fail or kill, PHASE one of {}",
                         spec, fmt::join(phases, ", "));
  };
  if (parts.size() < 2 || parts.size() > 3) return usage();
  PhaseFault fault;
  if (parts[0] == "fail") fault.kind = FaultKind::kFail;
  else if (parts[0] == "kill") fault.kind = FaultKind::kKill;
  else return usage();
  auto phase = std::find(phases.begin(), phases.end(), parts[1]);
  if (phase == phases.end()) return usage();
  fault.phase = static_cast<JobPhase>(phase - phases.begin());
  if (parts.size() == 3) {
    const std::string_view r = parts[2];
    auto [end, error] = std::from_chars(r.data(), r.data() + r.size(), fault.rank);
    if (error != std::errc() || end != r.data() + r.size() || fault.rank < 0) return usage();
  }
  return fault;
}

std::string to_string(const PhaseFault& fault) {
  return fmt::format("{}:{}:{}", fault.kind == FaultKind::kKill ? "kill" : "fail", phase_name(fault.phase),
                     fault.rank);
}

Status start_job_phases(int rank, int size, const std::optional<PhaseFault>& fault) {
  g_rank = rank;
  g_size = size;
  g_period = static_cast<int32_t>(JobPhase::kStartup);
  g_operation = kNoOperation;
  g_fault = fault;
  struct sigaction action {};
  action.sa_handler = report_sigterm;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  return fire(JobPhase::kStartup);
}

Status enter_phase(JobPhase phase) {
  g_period = static_cast<int32_t>(phase);
  return fire(phase);
}

OperationPhase::OperationPhase(JobPhase operation) : previous_(g_operation.load()) {
  g_operation = static_cast<int32_t>(operation);
  if (is_training(static_cast<JobPhase>(g_period.load()))) fault_ = fire(operation);
}

OperationPhase::~OperationPhase() { g_operation = previous_; }

}  // namespace autopar
