// ActivationStore: the tensors a rank holds for each (stage, microbatch) in
// flight: its activations, received buffers, gradients, and references to the
// params and input slices its nodes read. Every tensor put here is counted in
// the rank's LiveStorages (runtime/live_storages.h), shared with everything
// else the rank holds (params, optimizer state, gradient sums, send buffers),
// so each storage counts once however many values view it.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

#include "ir/graph.h"
#include "runtime/live_storages.h"

namespace autopar::pipeline {

class ActivationStore {
 public:
  ActivationStore(const Graph& graph, int32_t slots, LiveStorages& held);

  const std::vector<at::Tensor>& get(int32_t slot, NodeId id) const;
  bool has(int32_t slot, NodeId id) const;
  void put(int32_t slot, NodeId id, std::vector<at::Tensor> values);
  void drop(int32_t slot, NodeId id);
  int64_t entries() const { return entries_; }  // (slot, node) pairs holding values

 private:
  std::vector<std::vector<std::vector<at::Tensor>>> slots_;  // [slot][node] -> outputs
  LiveStorages& held_;
  int64_t entries_ = 0;
};

}  // namespace autopar::pipeline
