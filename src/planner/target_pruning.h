// Pruning against a target before any LP: with a dual bound D (dual_bound.h)
// every assignment that fits costs at least D plus the slack of each of its
// strategies and class pairs. So, for a target T, a strategy or pair whose
// least such sum exceeds T is in no assignment costing T or less, and the
// problem without them has the same optimum whenever that optimum is <= T:
//
//   - solved to optimality at a cost <= T, the pruned problem's optimum is
//     the whole problem's (anything cheaper would have survived the pruning);
//   - infeasible, or optimal above T, it proves only that the whole optimum
//     exceeds T: the caller tries a larger T, or the whole problem.
//
// The pruned problem is the reduced problem with those strategies removed and
// those class pairs forbidden, so the LP, the roundings, the local moves and
// CBC all run on it unchanged. A target a little above D (where the optimum
// usually is: the LP gap) typically leaves a quarter of the pair columns.
#pragma once

#include <cstdint>
#include <vector>

#include "planner/dual_bound.h"
#include "planner/presolve.h"

namespace autopar::planner {

struct PrunedProblem {
  ReducedProblem problem;
  // Per group: the pruned problem's alive index -> the original's.
  std::vector<std::vector<int32_t>> to_original;
  int64_t strategies = 0, strategies_left = 0;  // of groups with two or more
  int64_t pairs = 0, pairs_left = 0;            // finite class pairs
};

// `dual` must come from pairwise_dual_bound or memory_dual_bound of `r`
// (memory_dual_bound for slack on pairs: without edge_slack, pairs are pruned
// by their ends alone). A group keeps at least two strategies (the ILP
// builder takes a group of one as folded into the constant), the two of
// least slack when fewer pass.
PrunedProblem prune_to_target(const ReducedProblem& r, const DualBound& dual, double target);

// A choice of the pruned problem as a choice of the original.
std::vector<int32_t> unprune_choice(const PrunedProblem& pruned, const std::vector<int32_t>& choice);

}  // namespace autopar::planner
