// 3-D training on MPI ranks: pipeline stages along mesh dim 0, each stage run
// by a stage group of ranks under one SPMD plan of the microbatch graph on the
// group's sub-mesh (pipeline_plan/pipeline_plan.h).
//
// Ranks: with G devices per group, world rank w is device w of the mesh
// (row-major), in pipeline rank w / G at coordinate w % G of its group's
// sub-mesh, as the plan's "ranks"/"devices" say. Two communicators per rank:
//   group  the ranks of its pipeline rank: the SPMD collectives (SpmdMesh);
//   pipe   the ranks with its group coordinate, one per pipeline rank: the
//          activations and gradients between matching ranks of adjacent
//          stage groups, and the shape-inference messages.
// Each rank runs its pipeline rank's schedule (the same actions as the rest
// of its group, in the same order) with a stage worker whose nodes run
// sharded (sharded_runner.h). Boundary values travel as the producer's local
// block; the consumer's plan redistributes them like any input (one plan for
// every stage, so both sides agree on the block, and setup checks it: the
// metadata carries each value's placement and local shape).
//
// A step: the schedule; the gradient sums (in their producers' shardings,
// summed over microbatches) divided by M and reduced into their params'
// placements; the optimizer on local blocks. The loss is the microbatch
// losses' mean.
//
// --check: the rank at coordinate 0 of each group runs the single-process
// reference (the full batch's graph, or for an imported graph its microbatch
// graph on each microbatch, averaged), and every rank's block of each of its
// group's gradients, then of each parameter after both optimizer steps, is
// compared with the same block of it (runtime/shard_compare.h), the loss on
// the last group. The verdict is combined over the world: every rank exits
// alike, and each rank's measured peak is held to the memory model's
// prediction (pipeline_memory.h with the plan's local sizes).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/expected.h"
#include "ir/graph.h"
#include "memory/peak_check.h"
#include "pipeline_runtime/pipeline_memory.h"
#include "pipeline_runtime/pipeline_run.h"
#include "pipeline_runtime/sharded_runner.h"
#include "pipeline_runtime/stage_setup.h"
#include "runtime/spmd_run.h"

namespace autopar::pipeline {

struct GridRunOptions {
  int64_t steps = 1;
  OptimizerConfig optimizer{.kind = Optimizer::kSgd};
  uint64_t seed = 0;
  bool check = false;
  CheckTolerance tolerance;
  // The memory model's sizes for this plan (pipeline_plan.h sharded_values);
  // with check, every rank's measured peak within memory_tolerance of it.
  const ShardedValues* sizes = nullptr;
  double memory_tolerance = kPeakMemoryTolerance;
};

struct GridRunResult {
  std::vector<double> losses;      // per step (every rank)
  std::vector<StepTiming> steps;   // per step: slowest rank's time, compute summed over the world
  std::vector<double> peak_bytes;  // per world rank: everything it held (every rank)
  std::vector<RankMemory> predicted;  // per world rank: pipeline_memory.h's (every rank)
  PeakCheck memory;                // measured against predicted
  bool check_ok = true;            // with check: every block within tolerance and memory (every rank)
  double max_error = 0;            // largest |grid - reference| over all steps (rank 0)
};

// `full`: the model at the full batch, or null for an imported graph (one
// microbatch). `plan`: the microbatch graph's plan on `group`'s mesh. Errors
// are this rank's; the caller ends the job with them.
Expected<GridRunResult> run_grid_training(const Graph* full, const Graph& micro, const Plan& plan,
                                          const PipelineSetup& setup, const Communicator& world,
                                          const Communicator& pipe, ShardedRunner& runner,
                                          const GridRunOptions& options);

}  // namespace autopar::pipeline
