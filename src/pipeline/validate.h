// Schedule validation: the checks a schedule must pass before it is lowered or
// run, each failure pointing at the offending action as
// "rank R position I (ACTION): what is wrong".
//
// Checked: every stage sits on one rank and each action is on its stage's
// rank; each (stage, microbatch) has exactly one F and either one B or one I
// and one W; F comes before B/I and I before W on that rank. Compute-only
// schedules may hold F, B, I, W only; lowered schedules also SEND/RECV, each
// exactly once where a message crosses ranks. Whether the ranks can make
// progress together (no deadlock) is the simulator's question (simulate.h).
#pragma once

#include "ir/expected.h"
#include "pipeline/schedule.h"

namespace autopar::pipeline {

Status validate_schedule(const Schedule& schedule, bool allow_communication = false);

}  // namespace autopar::pipeline
