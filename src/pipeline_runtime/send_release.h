// Send release: when the stage runtime may free a sent buffer.
//
// A SEND is MPI_Isend: its buffer must live until the send completes. Waiting
// for every send at the end of the step (as the runtime first did) holds each
// sent activation a whole step, even after its receiver has used it. Waiting
// at a point chosen by timing (MPI_Test) would make the peak depend on the
// race. Instead a send is completed at the first point where its completion is
// already known from the schedule alone: when the sender has received a
// message that the receiver sent after its matching RECV (directly or through
// other ranks: the receive happens-before the sender's current action). The
// receive has then finished, so MPI_Wait returns at once and cannot deadlock,
// and the point is the same on every run, so the memory model
// (pipeline_memory.h) counts the buffer exactly. Sends with no such point are
// completed at the end of the step.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/expected.h"
#include "pipeline/schedule.h"

namespace autopar::pipeline {

// For every rank and action index of a lowered schedule: for a SEND, the index
// of the action after which its buffers are released (always a RECV), or the
// rank's action count when they are released at the end of the step; -1 for
// every other action. An error when the schedule deadlocks or a message has
// no matching action.
Expected<std::vector<std::vector<int32_t>>> send_release_points(const Schedule& lowered);

}  // namespace autopar::pipeline
