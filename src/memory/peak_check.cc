#include "memory/peak_check.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace autopar {

double peak_error(double measured, double predicted) {
  if (predicted == 0) return measured == 0 ? 0 : std::numeric_limits<double>::infinity();
  return std::abs(measured - predicted) / predicted;
}

PeakCheck check_peaks(std::span<const double> measured, std::span<const double> predicted,
                      double tolerance) {
  PeakCheck check;
  check.tolerance = tolerance;
  for (size_t r = 0; r < measured.size() && r < predicted.size(); ++r) {
    double error = peak_error(measured[r], predicted[r]);
    if (check.worst_rank >= 0 && error <= check.error) continue;
    check.worst_rank = static_cast<int32_t>(r);
    check.measured = measured[r];
    check.predicted = predicted[r];
    check.error = error;
  }
  check.ok = check.error <= tolerance;
  return check;
}

std::string describe_worst(const PeakCheck& check) {
  constexpr double kMiB = 1024.0 * 1024.0;
  double signed_pct = check.predicted > 0 ? (check.measured - check.predicted) / check.predicted * 100 : 0;
  return fmt::format("rank {} measured {:.3f} MiB ({:.0f} B), predicted {:.3f} MiB ({:.0f} B): {:+.2f}%, "
                     "tolerance {:g}%",
                     check.worst_rank, check.measured / kMiB, check.measured, check.predicted / kMiB,
                     check.predicted, signed_pct, check.tolerance * 100);
}

}  // namespace autopar
