// Reduced-cost fixing: with an optimal LP relaxation (objective z, reduced
// costs d) and an incumbent of cost U, every feasible point x satisfies
// cost(x) >= z + sum_c d_c (x_c - x*_c), where each term is >= 0 for a
// dual-feasible d. So a column at its lower bound 0 with z + d_c > U is 0 in
// every solution better than the incumbent, and the ILP may drop it. What is
// left is usually a small fraction of the columns, which CBC proves optimal
// far faster than the whole model (its root LP, preprocessing and heuristics
// all scale with the columns). Exact: the optimum is the better of the
// incumbent and the restricted model's optimum, and the restricted model's
// bound, capped by the incumbent, bounds the whole model.
#pragma once

#include <vector>

#include "planner/ilp_model.h"

namespace autopar::planner {

struct LpSolution {
  std::vector<double> columns;        // x*
  std::vector<double> reduced_costs;  // d = c - A^T y
  double objective = 0;               // z, in model units
};

// keep[c] = 0 for the columns no solution costing less than `incumbent`
// (model units) can use. Reduced costs of the wrong sign (Clp's tolerances)
// weaken the bound by their total, so fixing stays safe.
std::vector<char> columns_that_may_improve(const IlpModel& model, const LpSolution& lp,
                                           double incumbent);

// The model over the kept columns only (the others fixed at 0); kept[c'] is
// the original index of new column c'. Decoding maps (first_column) are not
// carried: expand a solution back with expand_columns first.
IlpModel restrict_columns(const IlpModel& model, const std::vector<char>& keep,
                          std::vector<int>& kept);

// A restricted solution as a solution of the original model (zeros elsewhere).
std::vector<double> expand_columns(const std::vector<double>& restricted, const std::vector<int>& kept,
                                   int original_columns);

}  // namespace autopar::planner
