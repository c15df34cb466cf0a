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
// pairwise_dual_bound relaxes the memory rows away, so its bound is weaker
// where memory binds; memory_dual_bound keeps them by Lagrangian relaxation
// (below). Neither needs an LP solver; a sweep touches each class pair once
// (llama3-405b on 8x8x8: 1.4 M pairs, milliseconds a sweep).
#pragma once

#include <cstdint>
#include <vector>

#include "planner/presolve.h"

namespace autopar::planner {

// The multipliers l_eu, l_ev of every edge, per class of its ends
// (ReducedEdge::u_class / v_class): where an ascent stopped, or a start for one.
struct EdgeMultipliers {
  std::vector<std::vector<double>> u, v;  // per edge, per class
};

struct DualBound {
  double bound = 0;       // seconds, constant_cost included
  int32_t sweeps = 0;     // over all edges, forward then backward
  bool converged = false; // the last sweep raised D by less than the tolerance
  // Per group and alive strategy: phi_g(i) - min phi_g, seconds. An
  // assignment taking i costs at least bound + that, so against an incumbent
  // of cost U a strategy with bound + slack > U is in no better assignment.
  std::vector<std::vector<double>> slack;
  // Per edge and class pair, psi_e(ab) - min psi_e.
  // Every assignment costs at least bound + the slack of each of its
  // strategies and class pairs, all summed.
  std::vector<std::vector<double>> edge_slack;
  // memory_dual_bound: the rounds of price updates run.
  int32_t memory_rounds = 0;
  // The cheapest least-potential choice seen (per group, an alive index)
  // that uses no forbidden pair and meets every memory row: an incumbent.
  // Empty when none did.
  std::vector<int32_t> fitting_choice;
  // pairwise_dual_bound: the multipliers of `bound`.
  EdgeMultipliers multipliers;
};

// Sweeps until one raises D by at most relative_tolerance * |D|, or
// max_sweeps (a work limit, so the bound is the same on any machine load).
// `start`: multipliers to begin from instead of zeros (any are valid; sized
// as the problem's edges and classes).
DualBound pairwise_dual_bound(const ReducedProblem& reduced, int32_t max_sweeps = 500,
                              double relative_tolerance = 1e-9, const EdgeMultipliers* start = nullptr);

// The memory rows kept, by Lagrangian relaxation. Each row t (value_t(x) <=
// budget_t) gets a price mu_t >= 0, seconds a byte, and its bytes join the
// costs: c'(x) = c(x) + sum_t mu_t (value_t(x) - budget_t). An assignment
// that meets every row costs at least c'(x), so D under c' (above) bounds
// every assignment that fits, for any prices; with prices 0 it is
// pairwise_dual_bound. The prices rise by projected subgradient steps
// (Polyak's, toward `target`: an incumbent's cost, or kInfiniteCost), the
// subgradient being the rows' excess at each group's least-potential
// strategy, with the edge multipliers carried from one price to the next.
// The best prices' bound is returned, recomputed, with its slack (which
// then bounds only the assignments that fit).
struct MemoryDualOptions {
  int32_t first_sweeps = 500;     // at prices 0, as pairwise_dual_bound
  int32_t rounds = 1000;          // price updates (work limits: the same bound on any machine)
  int32_t sweeps_per_round = 5;
  int32_t patience = 3;           // rounds without a better bound before the step halves
  double least_step = 1e-6;       // stop when the step's factor has halved below this
  double relative_tolerance = 1e-9;
};
DualBound memory_dual_bound(const ReducedProblem& reduced, double target, const MemoryDualOptions& options = {});

}  // namespace autopar::planner
