// Communication lowering: turns a compute-only schedule into one that also
// says when each rank sends and receives activations and gradients.
//
// Each send goes right after the compute that produces its value and each
// receive right before the compute that needs it. Sends are non-blocking
// (MPI_Isend; the runtime completes them before the step ends) and receives
// block, so a rank only ever waits for a value it is about to use: the lowered
// schedule can deadlock only if the compute order itself is infeasible, which
// simulate() reports. Stages that share a rank (V mapping, or two consecutive
// stages on one rank) hand their values over directly, without a message.
#pragma once

#include "pipeline/schedule.h"

namespace autopar::pipeline {

// The input must be a valid compute-only schedule (validate_schedule).
Schedule lower_communication(const Schedule& compute);

}  // namespace autopar::pipeline
