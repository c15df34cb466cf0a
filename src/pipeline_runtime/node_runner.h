// How a stage worker (stage_worker.h) runs a node and holds the values that
// cross a stage boundary:
//   WholeTensorRunner  one rank per stage (autopar pipeline): every value
//                      whole, kernels on full tensors;
//   ShardedRunner      a stage group per stage (3-D runs, sharded_runner.h):
//                      every value is this rank's block under the stage
//                      group's plan, nodes run as the SPMD executor runs them
//                      (runtime/planned_node.h), on the group's sub-mesh.
// The worker keeps its own bookkeeping (activation store, sends, gradient
// sums) the same in both.
#pragma once

#include <vector>

#include <ATen/core/Tensor.h>

#include "ir/expected.h"
#include "ir/graph.h"
#include "runtime/live_storages.h"

namespace autopar::pipeline {

class NodeRunner {
 public:
  virtual ~NodeRunner() = default;
  // Node v's outputs from its inputs as held. Temporaries (redistributed
  // operands) are counted in `held` while they live; the outputs come back
  // uncounted (the caller stores them).
  virtual Expected<std::vector<at::Tensor>> run(NodeId v, const std::vector<at::Tensor>& inputs,
                                                LiveStorages& held) = 0;
  // The shape this rank holds of output `o` of node v when its full shape is
  // `full` (whole: `full` itself).
  virtual Shape held_shape(NodeId v, int32_t o, const Shape& full) const = 0;
  // This rank's part of placeholder v's full value (a fresh storage).
  virtual Expected<at::Tensor> local_value(NodeId v, const at::Tensor& full) const = 0;
  // A param's gradient summed over the step's microbatches, as the gradient
  // node `grad` produced it, brought into the param's own placement (the
  // plan's gradient reduction; whole: itself). Temporaries counted in `held`;
  // the result comes back uncounted.
  virtual Expected<at::Tensor> to_param_placement(NodeId param, NodeId grad, const at::Tensor& sum,
                                                  LiveStorages& held) = 0;
  // The loss from this rank's value of it (a Partial loss summed over the group).
  virtual Expected<double> loss_value(NodeId loss, const at::Tensor& held) = 0;
};

class WholeTensorRunner final : public NodeRunner {
 public:
  explicit WholeTensorRunner(const Graph& graph) : graph_(graph) {}
  Expected<std::vector<at::Tensor>> run(NodeId v, const std::vector<at::Tensor>& inputs, LiveStorages& held) override;
  Shape held_shape(NodeId v, int32_t o, const Shape& full) const override;
  Expected<at::Tensor> local_value(NodeId v, const at::Tensor& full) const override;
  Expected<at::Tensor> to_param_placement(NodeId param, NodeId grad, const at::Tensor& sum, LiveStorages& held) override;
  Expected<double> loss_value(NodeId loss, const at::Tensor& held) override;

 private:
  const Graph& graph_;
};

}  // namespace autopar::pipeline
