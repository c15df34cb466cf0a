// Schedule simulator: runs a lowered schedule on made-up action durations to
// measure its makespan, bubble and activation memory, and to prove it cannot
// deadlock.
//
// Every rank runs its actions in order. A compute action starts when the rank
// is free and its inputs are there: the previous stage's output (received, or
// computed on this rank), the next stage's gradient for B/I, the forward for
// B/I, I for W. SEND is non-blocking and its message arrives comm_s later;
// RECV blocks until the message has arrived. Start times follow from these
// rules alone, so the simulation computes each action's time as soon as its
// dependencies' times are known; if no rank can move while some still have
// actions, the schedule deadlocks and the report names each stuck rank, its
// position and action, and what it waits for.
#pragma once

#include <string>
#include <vector>

#include "ir/expected.h"
#include "pipeline/schedule.h"

namespace autopar::pipeline {

struct Durations {
  double f = 1, b = 2, i = 1, w = 1;  // per stage and microbatch
  double comm = 0;                    // message latency from SEND to arrival
  double of(ActionKind kind) const;
};

// "F=1,B=2,I=1,W=1,comm=0" (any subset, any order); errors quote the item.
Expected<Durations> parse_durations(std::string_view text);

struct TimedAction {
  Action action;
  double start = 0, end = 0;
};

struct SimulationResult {
  bool deadlocked = false;
  std::string deadlock;  // one line per stuck rank
  double makespan = 0;
  std::vector<double> busy;             // per rank, compute time
  std::vector<int32_t> peak_in_flight;  // per rank: forwards done whose B/I is not yet done
  std::vector<std::vector<TimedAction>> timeline;  // per rank, actions that ran

  // Idle compute time over all ranks / (ranks · makespan).
  double bubble_fraction() const;
};

// The schedule must hold its communication (lower_communication) where stages
// sit on different ranks; a missing receive shows as a deadlock.
SimulationResult simulate(const Schedule& lowered, const Durations& durations);
// Each stage with its own durations (per_stage[s] for stage s; a SEND takes
// the sending stage's comm): stages that cost differently, as a planned
// model's do. Fewer durations than stages is reported as a deadlock that says so.
SimulationResult simulate_stages(const Schedule& lowered, const std::vector<Durations>& per_stage);

// Chrome trace (chrome://tracing, Perfetto): one track per rank, one complete
// event per action; one duration unit is shown as one millisecond.
std::string to_chrome_trace(const SimulationResult& result);

// "makespan 33, bubble 27.3% (idle 36 of 132), peak in flight per rank 4 3 2 1"
std::string summary(const SimulationResult& result);

}  // namespace autopar::pipeline
