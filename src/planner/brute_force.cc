#include "planner/brute_force.h"

namespace autopar::planner {

Expected<Solution> solve_brute_force(const Problem& p, int64_t max_assignments) {
  if (Status valid = validate(p); !valid) return valid.error();
  double count = 1;
  for (size_t v = 0; v < p.nodes.size(); ++v) count *= static_cast<double>(p.strategy_count(static_cast<NodeIdx>(v)));
  if (count > static_cast<double>(max_assignments))
    return make_error("planner: brute force would enumerate {} assignments (limit {})", count,
                      max_assignments);
  Solution best;
  best.status = SolveStatus::kInfeasible;
  best.objective = kInfiniteCost;
  double least_peak = kInfiniteCost, least_static = kInfiniteCost;
  Assignment a(p.nodes.size(), 0);
  for (;;) {
    Evaluation eval = evaluate(p, a);
    if (eval.satisfies_constraints && eval.cost < kInfiniteCost) {
      least_peak = std::min(least_peak, eval.peak_bytes);
      least_static = std::min(least_static, eval.static_bytes);
    }
    if (is_feasible(p, eval) && eval.cost < best.objective) {
      best.status = SolveStatus::kOptimal;
      best.assignment = a;
      best.objective = best.best_bound = eval.cost;
      best.peak_bytes = eval.peak_bytes;
    }
    size_t v = 0;  // odometer increment
    while (v < a.size() && ++a[v] == static_cast<StrategyIdx>(p.strategy_count(static_cast<NodeIdx>(v)))) a[v++] = 0;
    if (v == a.size()) break;
  }
  // Mirrors memory_shortfall(): the static budget first, then the peak.
  if (best.status == SolveStatus::kInfeasible && least_static > p.static_budget)
    best.shortfall = MemoryShortfall{p.static_budget, least_static, true, true, -1, {}};
  else if (best.status == SolveStatus::kInfeasible && least_peak > p.memory_budget)
    best.shortfall = MemoryShortfall{p.memory_budget, least_peak, true, false, -1, {}};
  best.stats.nodes = static_cast<int32_t>(p.nodes.size());
  return best;
}

}  // namespace autopar::planner
