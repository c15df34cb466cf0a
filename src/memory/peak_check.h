// Peak check: a run's measured peak memory per rank against the model's
// prediction for that rank. `autopar run` (one prediction for every rank, the
// plan's) and `autopar pipeline` (one per rank: ranks hold different stages)
// both hold their memory model to it with the same tolerance.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace autopar {

// A rank whose measured peak is further than this fraction of its predicted
// peak from the prediction fails the memory check.
inline constexpr double kPeakMemoryTolerance = 0.05;

struct PeakCheck {
  bool ok = true;
  int32_t worst_rank = -1;  // the rank with the largest relative error (-1: no ranks)
  double measured = 0;      // that rank's figures, bytes
  double predicted = 0;
  double error = 0;         // |measured - predicted| / predicted (infinite when predicted is 0 and measured is not)
  double tolerance = kPeakMemoryTolerance;
};

// |measured - predicted| / predicted of one rank.
double peak_error(double measured, double predicted);

// Both spans per rank, the same length. ok when every rank's error is within tolerance.
PeakCheck check_peaks(std::span<const double> measured, std::span<const double> predicted,
                      double tolerance = kPeakMemoryTolerance);

// "rank 1 measured 0.214 MiB (224256 B), predicted 0.202 MiB (211562 B): +6.00%, tolerance 5%".
std::string describe_worst(const PeakCheck& check);

}  // namespace autopar
