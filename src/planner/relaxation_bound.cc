#include "planner/relaxation_bound.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "planner/dual_bound.h"
#include "planner/ilp_model.h"
#include "planner/presolve.h"
#include "planner/stopwatch.h"

namespace autopar::planner {

namespace {

// Pricing the memory rows in needs presolve with them, which on the largest
// 3-D problems takes minutes and gigabytes (llama3-405b 8x8x8: 125 s and
// 11.6 GB in all, against 22 s): only up to this many ILP columns.
constexpr int32_t kMostColumnsToPrice = 300000;

// Whether the memory prices can raise the bound: not when the memory-free
// ascent's least-potential choice fits (then the prices' subgradient is
// nowhere positive and they stay 0), nor on problems too large to presolve
// with memory rows quickly.
bool prices_may_help(const Problem& p, const ReducedProblem& r, const DualBound& dual) {
  if (cost_ilp_columns(r) > kMostColumnsToPrice) return false;
  if (dual.fitting_choice.empty()) return true;
  return !is_feasible(p, evaluate(p, expand(r, dual.fitting_choice)));
}

}  // namespace

std::optional<RelaxationBound> relaxation_bound(const Problem& p, double incumbent) {
  auto begin = std::chrono::steady_clock::now();
  // First without memory rows (they are most of presolve's time).
  PresolveOptions options;
  options.memory_rows = false;
  ReducedProblem r = presolve(p, options);
  if (!r.infeasible.empty()) return std::nullopt;
  DualBound dual = pairwise_dual_bound(r);
  if (p.has_memory_limit() && prices_may_help(p, r, dual)) {
    options.memory_rows = true;
    ReducedProblem with_rows = presolve(p, options);
    if (!with_rows.infeasible.empty()) return std::nullopt;
    DualBound priced = memory_dual_bound(with_rows, incumbent);
    if (priced.bound > dual.bound) r = std::move(with_rows), dual = std::move(priced);
  }
  RelaxationBound out;
  out.bound = dual.bound;
  out.sweeps = dual.sweeps;
  out.converged = dual.converged;
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
