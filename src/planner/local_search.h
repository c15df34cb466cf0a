// A quick incumbent for the reduced problem: a choice (one alive strategy per
// group, e.g. rounded from the LP relaxation) improved by moving one group at
// a time to its best strategy given its neighbours, while every memory row of
// the reduced problem still holds. Deterministic: groups in index order,
// strategies in alive order, strict improvements only.
//
// It proves nothing by itself; the caller pairs its cost with the LP bound
// (reduced_cost_fixing.h) to prune the ILP, or to stop when the two meet.
#pragma once

#include <cstdint>
#include <vector>

#include "planner/presolve.h"

namespace autopar::planner {

// The reduced cost of `choice` (node costs and edge class costs, without
// constant_cost), in seconds; kInfiniteCost when it uses a forbidden pair.
double choice_cost(const ReducedProblem& reduced, const std::vector<int32_t>& choice);

// Whether every row of reduced.memory_rows holds under `choice`.
bool memory_rows_hold(const ReducedProblem& reduced, const std::vector<int32_t>& choice);

// Improves a choice whose cost is finite and whose memory rows hold, keeping
// both true, until no single-group move lowers the cost (or max_sweeps full
// sweeps). Returns the final cost (as choice_cost).
double improve_by_single_moves(const ReducedProblem& reduced, std::vector<int32_t>& choice,
                               int max_sweeps = 64);

}  // namespace autopar::planner
