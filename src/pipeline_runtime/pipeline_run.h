// Pipeline training on MPI ranks: each rank runs its stages' share of one
// joint forward+backward graph, microbatch by microbatch, in the order its
// lowered schedule gives (F, B, I, W, SEND_*, RECV_*), with libtorch kernels.
//
// The model is built twice: at the full batch (its input placeholders give the
// real data, initialised from the seed and sliced along dim 0 into M equal
// microbatches) and at the microbatch size (the graph the stages run; view
// sizes are literal, see pipeline/stage_meta.h). Params are initialised from
// the same seed by name, so every rank holds exactly the values of the
// single-process model for its stages.
//
// Per step: F runs a stage's forward nodes, B its backward nodes (I: those the
// input gradients need, W: the rest; partition.h); SEND is MPI_Isend
// completed when the step ends, RECV a blocking receive into a buffer sized
// from the stage's inferred metadata. A stage's values stay in an activation
// store from F until its backward is done. The loss is the mean of the
// microbatch losses and each param's gradient is the sum over microbatches
// divided by M, which equal the full batch's mean loss and its gradient when
// every microbatch holds the same number of loss terms. Then the optimizer
// (SGD, or AdamW with its state allocated before step 1) on each rank's own
// params, in place.
//
// Memory: each rank counts every tensor it holds (params, optimizer state,
// input slices, gradient sums, activations, received and sent buffers) as
// distinct storages and keeps the peak; the peaks are all-gathered and set
// beside pipeline_memory.h's prediction for each rank. With --check a rank
// more than memory_tolerance off fails the run (memory/peak_check.h).
//
// --check: rank 0 runs the full-batch graph in one process (execute_nodes) on
// its own copy of all params, receives the pipeline's loss and gradients, and
// compares each with CheckTolerance (runtime/spmd_run.h): max |pipe - ref| <=
// atol + rtol * max |ref|. Both runs take the same optimizer step, so later
// steps are compared too. The verdict is broadcast: every rank exits alike.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/expected.h"
#include "ir/graph.h"
#include "memory/peak_check.h"
#include "pipeline_runtime/pipeline_memory.h"
#include "pipeline_runtime/stage_setup.h"
#include "runtime/mpi_comm.h"
#include "runtime/spmd_run.h"

namespace autopar::pipeline {

struct PipelineRunOptions {
  int64_t steps = 1;
  OptimizerConfig optimizer{.kind = Optimizer::kSgd};
  uint64_t seed = 0;
  bool check = false;
  CheckTolerance tolerance;
  // With check: every rank's measured peak within this fraction of its prediction.
  double memory_tolerance = kPeakMemoryTolerance;
};

struct StepTiming {
  double makespan_s = 0;  // slowest rank's step time
  double busy_s = 0;      // compute time summed over ranks
  int32_t ranks = 1;
  double bubble() const;  // idle / (makespan * ranks)
};

struct PipelineRunResult {
  std::vector<double> losses;          // per step (valid on rank 0)
  std::vector<StepTiming> steps;       // per step (valid on rank 0)
  std::vector<double> peak_bytes;       // per rank: measured, everything held (every rank)
  std::vector<RankMemory> predicted;   // per rank: pipeline_memory.h (every rank)
  PeakCheck memory;                    // measured against predicted
  bool check_ok = true;                // with check: numerics and memory
  double max_error = 0;                // worst |pipe - ref| over all steps (rank 0)
  double worst_ratio = 0;              // worst error / tolerance, every rank
};

// Errors are this rank's; the caller ends the job with them (Communicator::abort).
Expected<PipelineRunResult> run_pipeline_training(const Graph& full, const Graph& micro,
                                                  const PipelineSetup& setup,
                                                  const Communicator& world,
                                                  const PipelineRunOptions& options);

}  // namespace autopar::pipeline
