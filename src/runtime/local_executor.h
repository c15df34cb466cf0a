// Local executor: runs a whole joint graph in one process on full tensors,
// with placeholder values from init.h. It is the numerical reference the SPMD
// run is compared with, and the engine of the autodiff numerics tests.
//
// execute_nodes is the shared loop (also usable by the SPMD executor through
// its hooks): nodes in order, getitem picks a producer output, every other
// node runs its kernel; values are dropped after their last use and the peak
// of live tensor storage is tracked.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

#include "ir/expected.h"
#include "ir/graph.h"
#include "runtime/init.h"
#include "runtime/kernels.h"

namespace autopar {

// Per node, its outputs (one tensor for most nodes).
using NodeValues = std::vector<std::vector<at::Tensor>>;

struct ExecuteHooks {
  // The outputs a node must produce (default: the node's full metadata).
  std::function<std::vector<TensorMeta>(NodeId)> local_outputs;
  // The node's kernel context (default: empty, every tensor whole).
  std::function<KernelContext(NodeId)> context;
  // Called with a node's input tensors before its kernel runs (e.g. to
  // redistribute them); may replace them.
  std::function<Status(NodeId, std::vector<at::Tensor>&)> prepare_inputs;
  // Random ops' key for this step (KernelContext::random_key).
  uint64_t random_key = 0;
  // Called with each node's outputs right after its kernel ran (e.g. to keep
  // them: execute_nodes frees values after their last use).
  std::function<void(NodeId, const std::vector<at::Tensor>&)> after_node;
};

struct ExecuteStats {
  int64_t peak_live_bytes = 0;  // distinct live storages, after each node ran
  NodeId peak_node = kNoNode;   // the node after which the peak was reached
};

// Runs every non-placeholder node of `graph` in order. `values` holds the
// placeholders' values on entry (indexed by NodeId; resized to the graph) and
// the graph outputs' values on exit: other values are freed after their last
// use. Errors name the node.
Expected<ExecuteStats> execute_nodes(const Graph& graph, NodeValues& values,
                                     const ExecuteHooks& hooks = {});

struct LocalRunResult {
  at::Tensor loss;
  // (param target, gradient), in the graph's output order.
  std::vector<std::pair<std::string, at::Tensor>> grads;
  ExecuteStats stats;

  // The gradient of a param by target name; undefined when absent.
  at::Tensor grad(std::string_view param) const;
};

// One training step's loss and gradients with values from init_placeholders.
Expected<LocalRunResult> run_local(const Graph& graph, const InitOptions& options);
inline Expected<LocalRunResult> run_local(const Graph& graph, uint64_t seed) {
  return run_local(graph, InitOptions{.seed = seed});
}

}  // namespace autopar
