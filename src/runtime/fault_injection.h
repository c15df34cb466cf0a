// Fault injection for tests, and the phase record every rank of an MPI job
// keeps, so that a job that ends early says which rank and which phase.
//
// Each rank of `autopar run` and `autopar pipeline` records the phase it is in
// (start_job_phases at start-up, enter_phase at each boundary, an
// OperationPhase around each collective, send and receive). When one rank
// dies, mpirun sends the others SIGCONT then SIGTERM (Open MPI 4.1; SIGKILL
// follows if they linger); the SIGTERM handler installed here writes
// "autopar: rank R of N: ended by SIGTERM in phase P" with async-signal-safe
// calls and lets the signal end the process.
//
// A hidden option `--inject-fault KIND:PHASE[:RANK]` arms one PhaseFault: the
// rank RANK (default 0) fails (returns an error: the job ends through
// MPI_Abort) or SIGKILLs itself (after writing "killed by SIGKILL in phase
// P") when it first reaches PHASE. Start-up, shape inference, the first
// forward and the optimizer step are periods entered once per step; a
// collective or a send fires at the rank's first one after step 1 begins
// (those of start-up and shape inference are not counted). The node-level
// faults of `autopar run` (--fail-at-node, ...) are the other half of
// FaultInjection; the executor applies those itself.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ir/expected.h"

namespace autopar {

enum class JobPhase : int32_t {
  // Where a fault can be injected, in job order.
  kStartup,         // MPI up, graph, plan or stages, values, optimizer state
  kShapeInference,  // pipeline stages' boundary shapes inferred over MPI
  kFirstForward,    // step 1 from its start to the loss (run) or the rank's first backward (pipeline)
  kCollective,      // inside a collective call (barrier, all-reduce, ...)
  kSend,            // inside a point-to-point send
  kOptimizerStep,   // the optimizer's update of this rank's parameters
  // Recorded only.
  kTraining,        // the rest of the steps: backward, later steps, checks, report
  kReceive,         // inside a point-to-point receive
};
inline constexpr int32_t kInjectablePhases = 6;  // kStartup .. kOptimizerStep

std::string_view phase_name(JobPhase phase);  // "startup", "shape-inference", ...

enum class FaultKind { kFail, kKill };

struct PhaseFault {
  FaultKind kind = FaultKind::kFail;
  JobPhase phase = JobPhase::kStartup;
  int rank = 0;
};
// "KIND:PHASE[:RANK]": fail|kill, an injectable phase name, a rank >= 0.
Expected<PhaseFault> parse_phase_fault(std::string_view spec);
std::string to_string(const PhaseFault& fault);  // "kill:collective:2"

// Hidden fault injection for tests: fail (return an error), SIGKILL this
// process, or add 1 to the first output (a wrong result) at the named node
// when running as `rank` (the SPMD executor's), and a fault at a phase.
struct FaultInjection {
  std::string fail_at_node;
  std::string kill_at_node;
  std::string corrupt_at_node;
  int rank = 0;
  std::optional<PhaseFault> at_phase;  // --inject-fault
};

// This process is rank `rank` of `size`: records kStartup, installs the
// SIGTERM report and arms `fault` (fired at once if it is for start-up).
Status start_job_phases(int rank, int size, const std::optional<PhaseFault>& fault);

// Records a period (kStartup, kShapeInference, kFirstForward, kTraining,
// kOptimizerStep) and fires the armed fault if it is for that period and
// this rank: a kill does not return; a failure is returned, once.
Status enter_phase(JobPhase phase);

// An operation (kCollective, kSend, kReceive) recorded for the guard's life,
// on top of the period; fault() is an injected failure the caller returns
// instead of calling MPI.
class OperationPhase {
 public:
  explicit OperationPhase(JobPhase operation);
  ~OperationPhase();
  OperationPhase(const OperationPhase&) = delete;
  OperationPhase& operator=(const OperationPhase&) = delete;
  const Status& fault() const { return fault_; }

 private:
  int32_t previous_;
  Status fault_ = ok_status();
};

}  // namespace autopar
