#include "planner/relaxation_bound.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "planner/dual_bound.h"
#include "planner/presolve.h"
#include "planner/stopwatch.h"

namespace autopar::planner {

std::optional<RelaxationBound> relaxation_bound(const Problem& p, double incumbent) {
  auto begin = std::chrono::steady_clock::now();
  // Without a budget, no memory rows (they are most of presolve's time).
  PresolveOptions options;
  options.memory_rows = p.has_memory_limit();
  ReducedProblem r = presolve(p, options);
  if (!r.infeasible.empty()) return std::nullopt;
  DualBound dual = r.memory_rows.empty() ? pairwise_dual_bound(r) : memory_dual_bound(r, incumbent);
  RelaxationBound out;
  out.bound = dual.bound;
  out.sweeps = dual.sweeps;
  out.converged = dual.converged;
  out.memory_rows = static_cast<int32_t>(r.memory_rows.size());
  out.memory_rounds = dual.memory_rounds;
  // Fix against the incumbent, with a margin above rounding in the bound.
  const double limit = incumbent - out.bound + 1e-9 * std::max(1.0, std::abs(incumbent));
  for (size_t g = 0; g < r.nodes.size(); ++g) {
    const std::vector<double>& slack = dual.slack[g];
    Pin pin{r.nodes[g].root, {}};
    for (size_t i = 0; i < slack.size(); ++i)
      if (slack[i] <= limit) pin.allowed.push_back(r.nodes[g].alive[i]);
    out.strategies += static_cast<int32_t>(slack.size());
    out.strategies_left += static_cast<int32_t>(pin.allowed.size());
    if (pin.allowed.size() < slack.size()) out.fixing_pins.push_back(std::move(pin));
  }
  out.seconds = seconds_since(begin);
  return out;
}

}  // namespace autopar::planner
