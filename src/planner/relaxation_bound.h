// A lower bound on a whole problem, for answers found without one (the
// mesh-dim sweeps of dim_sweep.h): presolve, then the pairwise dual bound of
// dual_bound.h, with the memory rows priced in by Lagrangian relaxation when
// the problem has a budget (memory_dual_bound), else without them.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "planner/problem.h"

namespace autopar::planner {

struct RelaxationBound {
  double bound = 0;        // seconds: no assignment of the problem costs less
  int32_t sweeps = 0;      // of the dual ascent
  bool converged = false;  // the ascent stopped rising (else its sweep limit)
  double seconds = 0;
  // With an incumbent: pins on the group leaders keeping only the strategies
  // whose dual slack (dual_bound.h) lets them beat it; every assignment
  // cheaper than the incumbent obeys them. Empty pins are not listed.
  std::vector<Pin> fixing_pins;
  int32_t strategies = 0, strategies_left = 0;
};

// nullopt when presolve finds the problem infeasible. Requires
// validate(problem) to have passed.
// `incumbent`: the cost of a feasible assignment (seconds), or kInfiniteCost.
std::optional<RelaxationBound> relaxation_bound(const Problem& problem, double incumbent = kInfiniteCost);

}  // namespace autopar::planner
