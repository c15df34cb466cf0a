// `autopar run` with a pipeline (3-D runs): --pipeline N [--schedule S]
// [--microbatches M] [--stages-per-rank V], or --plan FILE with a pipeline
// section (autopar plan --pipeline N --format json). The stages run along mesh
// dim 0, each stage group sharded by one plan on the sub-mesh
// (pipeline_runtime/grid_run.h).
#pragma once

#include <cstdint>
#include <string>

#include "graph_options.h"
#include "plan_options.h"
#include "runtime/mpi_comm.h"

namespace autopar {

struct RunPipelineOptions {
  std::string degree;        // --pipeline N ("" = not asked for)
  std::string schedule;      // "" = 1f1b
  std::string microbatches;  // "" = twice the degree
  int32_t stages_per_rank = 1;
};

struct RunGridInput {
  GraphOptions graph;
  PlanCliOptions plan;
  std::string plan_file;     // "" = plan here
  std::string plan_text;     // the file's text when given
  RunPipelineOptions pipeline;
  int64_t steps = 1;
  double lr = 1e-3;
  uint64_t seed = 0;
  bool check = false;
};

// Every rank calls it; refusals happen on every rank alike before any compute.
int run_grid(RunGridInput input, const Communicator& world);

}  // namespace autopar
