// ActivationStore: the tensors a rank holds for each (stage, microbatch) in
// flight, with a running count of the distinct storage bytes they use, so the
// stage runtime can report its peak activation memory exactly (views share a
// storage and count once). Placeholders (params, buffers, tangent, input
// slices) are stored too but not counted: they are not activations.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include <ATen/core/Tensor.h>

#include "ir/graph.h"

namespace autopar::pipeline {

class ActivationStore {
 public:
  ActivationStore(const Graph& graph, int32_t slots);

  const std::vector<at::Tensor>& get(int32_t slot, NodeId id) const;
  bool has(int32_t slot, NodeId id) const;
  void put(int32_t slot, NodeId id, std::vector<at::Tensor> values);
  void drop(int32_t slot, NodeId id);
  void clear(int32_t slot);

  int64_t live_bytes() const { return live_bytes_; }
  int64_t peak_bytes() const { return peak_bytes_; }

 private:
  bool counted(NodeId id) const { return !graph_.node(id).is_placeholder(); }
  void add_ref(const at::Tensor& t);
  void remove_ref(const at::Tensor& t);

  const Graph& graph_;
  std::vector<std::vector<std::vector<at::Tensor>>> slots_;  // [slot][node] -> outputs
  std::unordered_map<const void*, int64_t> refs_;            // storage -> references held
  int64_t live_bytes_ = 0, peak_bytes_ = 0;
};

}  // namespace autopar::pipeline
