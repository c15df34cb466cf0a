// A lower bound on a reduced problem's cost, memory rows aside, from the
// Lagrangian dual of its pairwise LP relaxation (the local polytope of MAP
// inference), raised by block coordinate ascent.
//
// For every edge e = (u, v) and each class a of u (b of v) a multiplier
// l_eu(a) (l_ev(b)) moves cost between the edge and its ends:
//   phi_g(i)  = c_g(i) + sum over g's edges of l_eg(class_e(i))
//   psi_e(ab) = C_e(a, b) - l_eu(a) - l_ev(b)
//   D(l)      = sum_g min_i phi_g(i) + sum_e min_ab psi_e(ab) + constant
// Any choice costs the same under every l (the multipliers cancel), and no
// term can be below its minimum, so D(l) bounds every assignment for every l;
// its maximum over l is the LP relaxation's optimum. Each step sets one
// edge's multipliers to their best given the rest (the MPLP edge update,
// Globerson & Jaakkola 2007), so D never falls. The ascent can stop below the
// LP optimum (coordinate ascent on a non-smooth dual), which costs tightness,
// never validity: the bound is recomputed from scratch from the final l.
//
// Memory rows are relaxed away, so the bound is weaker where memory binds.
// It needs no LP solver and touches each class pair once per sweep (llama3-
// 405b on 8x8x8: 1.4 M pairs, milliseconds a sweep).
#pragma once

#include <cstdint>
#include <vector>

#include "planner/presolve.h"

namespace autopar::planner {

struct DualBound {
  double bound = 0;       // seconds, constant_cost included
  int32_t sweeps = 0;     // over all edges, forward then backward
  bool converged = false; // the last sweep raised D by less than the tolerance
  // Per group and alive strategy: phi_g(i) - min phi_g, seconds. An
  // assignment taking i costs at least bound + that, so against an incumbent
  // of cost U a strategy with bound + slack > U is in no better assignment.
  std::vector<std::vector<double>> slack;
};

// Sweeps until one raises D by at most relative_tolerance * |D|, or
// max_sweeps (a work limit, so the bound is the same on any machine load).
DualBound pairwise_dual_bound(const ReducedProblem& reduced, int32_t max_sweeps = 500,
                              double relative_tolerance = 1e-9);

}  // namespace autopar::planner
