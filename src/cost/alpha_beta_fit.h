// Fitting a link's alpha (latency per step) and bandwidth from measured
// collective times, using the same ring formulas the planner costs with
// (comm_cost.h): t = steps(c, n) * alpha + sent_bytes(c, n, B) / bandwidth.
//
// Used by `autopar calibrate`; IR-free and MPI-free so it is testable with
// hand-made samples. The fit minimises relative error, so small (latency-bound)
// and large (bandwidth-bound) sizes weigh alike.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cost/comm_cost.h"
#include "cost/hardware.h"
#include "ir/expected.h"

namespace autopar {

struct CollectiveSample {
  Collective collective = Collective::kAllReduce;
  int64_t group_size = 2;
  double buffer_bytes = 0;  // B as in comm_cost.h
  double seconds = 0;       // measured time of one collective
};

// Least squares over all samples (any mix of collectives and group sizes).
// alpha is clamped at 0 (then the bandwidth is refit alone). Fails when fewer
// than two samples communicate, a time is not positive, or the times do not
// grow with the bytes sent (no bandwidth can be inferred).
Expected<LinkSpec> fit_link(std::span<const CollectiveSample> samples);

// What one rank count's job measured: a link over every collective, and one
// per collective.
struct LinkFit {
  int ranks = 0;
  LinkSpec all;  // over every collective
  std::vector<std::pair<std::string, LinkSpec>> per_collective;
  std::vector<std::string> warnings;  // fits that fell back to a rough estimate
};

// Fits all collectives together, then each one. On a loaded machine a fit can
// fail (the times do not grow with size); then that link is a rough estimate
// (the fastest call's time as latency, the largest call's rate as bandwidth)
// and a warning says so, so every collective measured gets a figure. Fails
// only when no sample moved any bytes.
Expected<LinkFit> fit_rank_count(int ranks, std::span<const CollectiveSample> samples);

}  // namespace autopar
