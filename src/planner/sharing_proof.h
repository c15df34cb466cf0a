// Proof that layer sharing lost nothing (PlanOptions::prove_sharing).
//
// Shared layers tie every repeated layer to one set of variables, so the
// tied problem's optimum U is an upper bound on the unshared (untied) one:
// some untied plan might place layers differently and be cheaper. The proof
// solves the untied problem without its memory rows, a relaxation, from the
// tied plan as incumbent: its optimum V bounds every untied plan that fits.
// V = U proves the shared plan optimal for the untied problem; V < U with a
// plan that fits means that plan is the untied optimum, and it replaces the
// shared one; V < U with a plan over the budget leaves the optimum in [V, U].
//
// The untied problem is the tied one times the layer count (llama3-8b: 32),
// and its dual ascent from zero creeps along the chain of layers (8x8: 7.7 s
// for 500 sweeps, still 3.7e-4 below the optimum). It starts instead from
// the tied problem's multipliers, spread over the copies
// (tied_multipliers.h), so that pruning to U leaves a small problem.
// llama3-8b b32 s8192 on 8x8: 53 k of the untied problem's pair columns left,
// proven exact in about 2.5 s on this project's 2-core machines.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "planner/auto_plan.h"
#include "planner/problem_builder.h"

namespace autopar {

// `tied`: the problem `shared` solved (built with `build_options` and the
// layer-sharing representatives); `plan`: its decoded plan, which gets
// solver.sharing_proof and, when a cheaper untied plan fits, that plan. A
// plan with no shared layers, from mesh-dim sweeps, with recomputation or
// with folded followers gets the verdict "not run: <why>".
void prove_sharing(const Graph& graph, const planner::Problem& tied,
                   const std::vector<std::vector<StrategyIdx>>& allowed, RedistributionCache& cache,
                   const ProblemBuildOptions& build_options, const planner::SolverOptions& solver,
                   const planner::Solution& shared, Plan& plan);

}  // namespace autopar
