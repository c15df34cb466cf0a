// Exact solver for tiny problems by enumerating every assignment; the ground
// truth tests check CBC (and presolve) against. Uses only evaluate().
#pragma once

#include <cstdint>

#include "ir/expected.h"
#include "planner/problem.h"
#include "planner/solver.h"

namespace autopar::planner {

// Errors when the problem is malformed or has more than max_assignments.
// Ties go to the first assignment in lexicographic order.
Expected<Solution> solve_brute_force(const Problem& problem,
                                     int64_t max_assignments = 1'000'000);

}  // namespace autopar::planner
