// The solver's live progress line on stderr: "solving 12.3 s  best 1.234 ms
// bound 1.200 ms  gap 2.8%", rewritten in place with \r a few times a second
// while CBC runs, and erased when the solve ends so the output stays clean.
// Only on a terminal (isatty) and without --quiet: logs and pipes never see it.
#pragma once

#include <cstdio>
#include <string>

#include "planner/solver.h"

namespace autopar {

// "solving 12.3 s  best 1.234 ms  bound 1.200 ms  gap 2.8%" (parts that are
// unknown yet are left out).
std::string format_progress(const planner::SolveProgress& progress);

// A callback drawing the line on `out`, at most every period_s (the final
// "done" report erases it). Empty when `out` is not a terminal or quiet.
planner::ProgressCallback terminal_progress(std::FILE* out, bool quiet, double period_s = 0.25);

}  // namespace autopar
