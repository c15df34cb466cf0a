// Meshes of three or more dims: solving by mesh-dim neighbourhoods.
//
// On an N-D mesh a node has roughly k^N strategies (k per mesh dim) and an
// edge k^N x k^N resharding pairs, so the whole ILP of a 3-D mesh is ~25x the
// 2-D one (llama3-405b on 8x8x8: 1.4 M pair columns for a single shared layer)
// and CBC finds no plan in minutes. As XLA's auto-sharding does ("solve one
// mesh dim at a time"), this solver works on restrictions of the same Problem,
// each about the size of a 2-D one, and every answer is a plan of the whole
// mesh, costed exactly:
//
//   1. Seed: split the mesh dims into the outer dim and the inner block and
//      tie the inner dims (every tensor of a strategy placed alike on them),
//      so the block acts as one merged mesh dim: 8x8x8 is solved as 8x64
//      (within 5% of that restriction's optimum, a third of the time at most).
//      When it has no plan, the next split (64x8, ...) is tried.
//   2. Sweeps: for each pair of mesh dims, keep the incumbent's placements on
//      every other dim and let the pair change freely; a better answer becomes
//      the incumbent (CBC starts from it). Stop when a whole round of pairs
//      improves nothing, or when the steps have used up the node limit.
//
// The steps share options.max_nodes (the seed a third of it), not the clock, so
// the same problem takes the same steps however busy the machine is; the time
// limit bounds them all only as a safety valve.
//
// The result is a local optimum over these neighbourhoods. Then, with
// options.bound_sweeps, the whole problem's pairwise dual bound
// (relaxation_bound.h; memory rows relaxed, milliseconds a sweep) bounds it,
// giving best_bound and gap, and optimal when they meet; and with
// options.prove_sweeps the whole problem restricted to the strategies that
// bound leaves (those whose dual slack could still beat the answer; every
// cheaper assignment uses only them), memory rows included, is solved from
// the answer: when it completes, its optimum is the whole problem's, so the
// plan is proven optimal (or improved). Without either, best_bound and gap
// are NaN (unknown). Pins are kept: a pinned node keeps its pinned strategies
// when a neighbourhood would leave it none. If no seed has a plan (memory),
// the whole problem is solved, so infeasibility keeps its exact shortfall
// report.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/expected.h"
#include "planner/problem.h"
#include "planner/relaxation_bound.h"
#include "planner/solver.h"

namespace autopar::planner {

// For every node and strategy, one id per mesh dim naming the placements of
// all its tensors (outputs and inputs) on that dim. Ids are comparable across
// the dims of one node: equal ids, equal placements.
struct MeshDimClasses {
  int32_t mesh_dims = 0;
  std::vector<std::vector<int32_t>> of_node;  // [node][strategy * mesh_dims + dim]

  int32_t at(NodeIdx v, StrategyIdx s, int32_t dim) const {
    return of_node[static_cast<size_t>(v)][static_cast<size_t>(s * mesh_dims + dim)];
  }
};

struct SweepStep {
  std::string neighbourhood;  // "seed d0=d1", "free d0,d2"
  SolveStatus status = SolveStatus::kNoSolution;
  StopReason stopped_by = StopReason::kCompleted;
  double objective = 0;       // this step's own answer (when it has one)
  bool has_answer = false;
  bool improved = false;      // became the incumbent
  int32_t variables = 0;
  double seconds = 0;
};

// The whole problem restricted by dual fixing (dim_sweep.cc), solved to
// prove the sweeps' answer optimal or improve it.
struct SweepProof {
  int32_t strategies = 0, strategies_left = 0;
  SolveStatus status = SolveStatus::kNoSolution;
  StopReason stopped_by = StopReason::kCompleted;
  int32_t variables = 0;
  double seconds = 0;
};

struct SweepSolution {
  Solution solution;  // the incumbent, over the whole problem
  std::vector<SweepStep> steps;
  std::optional<RelaxationBound> bound;  // with options.bound_sweeps
  std::optional<SweepProof> proof;       // with options.prove_sweeps, unless the bound met the answer
};

// options.max_nodes and options.time_limit_s bound all steps together.
Expected<SweepSolution> solve_by_mesh_dim_sweeps(const Problem& problem,
                                                 const MeshDimClasses& classes,
                                                 const SolverOptions& options);

}  // namespace autopar::planner
