// When the memory budget cannot be met: the least budget that could fit, and
// the nodes that fill the tightest time point, as data for the CLI to print.
#pragma once

#include <optional>
#include <string>

#include "planner/presolve.h"
#include "planner/solver.h"

namespace autopar::planner {

// A lower bound on the budget: the largest per-row sum of per-node minimum
// bytes (cheap, from the presolved rows), raised to the min-peak-memory ILP's
// bound when options.exact_memory_bound. nullopt when memory is not what
// fails (the bound fits the budget).
std::optional<MemoryShortfall> memory_shortfall(const Problem& problem,
                                                const ReducedProblem& reduced,
                                                const SolverOptions& options);

// A lower bound from the problem alone: every node at its least bytes over
// all its strategies, pair holdings left out (no presolve, so cheap on any
// mesh). A shortfall (never exact) when even that exceeds a budget, else
// nullopt. Requires validate(problem) to have passed.
std::optional<MemoryShortfall> quick_memory_shortfall(const Problem& problem);

// "needs at least 12.5 GiB per device at time point 17 (budget 10 GiB); largest: ..."
std::string describe(const MemoryShortfall& shortfall);

std::string format_bytes(double bytes);

}  // namespace autopar::planner
