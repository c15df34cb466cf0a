#include "pipeline_runtime/node_runner.h"

#include "runtime/kernels.h"

namespace autopar::pipeline {

Expected<std::vector<at::Tensor>> WholeTensorRunner::run(NodeId v, const std::vector<at::Tensor>& inputs,
                                                         LiveStorages& /*held*/) {
  const Node& node = graph_.node(v);
  if (node.op == OpId::kGetItem) return std::vector<at::Tensor>{inputs.at(0)};
  return run_kernel(node, inputs, node.outputs);
}

Shape WholeTensorRunner::held_shape(NodeId /*v*/, int32_t /*o*/, const Shape& full) const { return full; }

Expected<at::Tensor> WholeTensorRunner::local_value(NodeId /*v*/, const at::Tensor& full) const {
  return full;
}

Expected<at::Tensor> WholeTensorRunner::to_param_placement(NodeId /*param*/, NodeId /*grad*/, const at::Tensor& sum,
                                                           LiveStorages& /*held*/) {
  return sum;
}

Expected<double> WholeTensorRunner::loss_value(NodeId /*loss*/, const at::Tensor& held) {
  return held.item<double>();
}

}  // namespace autopar::pipeline
