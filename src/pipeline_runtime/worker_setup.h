// What both pipeline runs (whole stages, and 3-D stage groups) start from: a
// rank's stage worker with its values from the seed, and the single-process
// reference the --check compares with.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "ir/expected.h"
#include "ir/graph.h"
#include "pipeline_runtime/stage_worker.h"
#include "runtime/optimizer.h"

namespace autopar::pipeline {

// A param's name across graphs built at different batches (target, else node name).
std::string param_name(const Node& n);

// Where a worker's data comes from. `full`: the model at the full batch (its
// input placeholders give the data, sliced along dim 0 into M microbatches);
// null for an imported graph, which is one microbatch: microbatch k's inputs
// are then drawn at the microbatch's shape from the seed mixed with k.
struct WorkerData {
  const Graph* full = nullptr;
  uint64_t seed = 0;
};

// The rank's params and buffers, the tangent (on the rank holding the loss),
// and each microbatch's slice of the inputs its stages read, each cut to this
// rank's part by the runner (its own storage); the worker allocates the
// optimizer state.
Expected<std::unique_ptr<StageWorker>> make_stage_worker(const Graph& micro, const PipelineSetup& setup,
                                                         const Communicator& pipe, NodeRunner& runner,
                                                         const WorkerData& data, const OptimizerConfig& optimizer);

// The single-process reference: every placeholder of its graph, the loss and
// each param's gradient (by name) of the last step.
struct Reference {
  std::vector<at::Tensor> placeholders;
  OptimizerState optimizer;
  double loss = 0;
  std::map<std::string, at::Tensor> grads;
};
Expected<Reference> make_reference(const Graph& graph, const WorkerData& data, const OptimizerConfig& optimizer);
// One step of the reference: the full batch's graph in one process, or (for
// an imported graph, data.full null) the microbatch graph on each of the M
// microbatches in turn, the loss and gradients averaged over them.
Status reference_step(const Graph& graph, const WorkerData& data, int32_t microbatches, Reference& ref);
// The reference's optimizer step on every param of its graph.
void reference_update(const Graph& graph, Reference& ref);
// Microbatch k's value of input placeholder `id` of `graph` (data.full null).
Expected<at::Tensor> microbatch_input(const Graph& graph, NodeId id, uint64_t seed, int32_t k);

}  // namespace autopar::pipeline
