// Turns a graph and its strategies into the solver's Problem (problem.h).
//
// Node v of the graph is node v of the Problem. Layer members follow their
// representative (equal strategy index); the edges of repeated layers are
// computed once and added once, scaled by how often they repeat, and presolve
// then merges each layer onto its representative. Memory is step_memory.h's
// model: what is held all step (parameters, optimizer state, inputs) is a
// node's static bytes; every other holding (activations, gradients until
// they are reduced, reduced gradients from then on) is its per-strategy bytes
// over one interval, listed at the time points where the peak can occur. The
// comm buffers of redistributions depend on both ends' placements and are
// not in the rows: make_plan checks the solved plan with them and re-solves
// with a tighter budget when they push it over (auto_plan.h).
#pragma once

#include <vector>

#include "ir/graph.h"
#include "memory/liveness.h"
#include "memory/step_memory.h"
#include "planner/layer_repeats.h"
#include "planner/problem.h"
#include "planner/recompute_choices.h"
#include "sharding/redistribute.h"
#include "sharding/strategy.h"

namespace autopar {

struct ProblemBuildOptions {
  double optimizer_bytes_per_element = 8;  // AdamW
  double memory_budget = planner::kNoBudget;
  // Each gradient link (Graph::gradient_links) becomes a hard edge: the
  // gradient takes a placement that pairs_as_gradient with its value's.
  bool pair_activation_grads = false;
  // Recomputation candidates get doubled strategy lists (recompute_choices.h);
  // null: none. Built on the same graph, strategies and representatives.
  const RecomputeChoices* recompute = nullptr;
};

struct BuiltProblem {
  planner::Problem problem;
  int32_t unreduced_edges = 0;
  int32_t activation_grad_pairs = 0;  // gradient links paired (0 when not asked)
  // The ILP with no reduction at all (no layer sharing, no presolve): one
  // variable per node strategy and per strategy pair of every edge; one row
  // per node, per strategy at each edge end, and per candidate peak point.
  int64_t unreduced_variables = 0;
  int64_t unreduced_constraints = 0;
  int32_t recompute_candidates = 0;  // recompute.h's candidates in the graph
  int32_t recomputable = 0;          // of those, nodes whose strategies are doubled
};

// representative: from find_layer_repeats (identity when not sharing).
// allowed: from resolve_pins (empty list = unpinned).
BuiltProblem build_problem(const Graph& graph, const StrategyGraph& strategies,
                           const std::vector<NodeId>& representative,
                           const std::vector<std::vector<StrategyIdx>>& allowed,
                           RedistributionCache& cache, const ProblemBuildOptions& options);

}  // namespace autopar
