// Liveness of tensor storage over a graph's execution order.
//
// The activation-memory constraint of the planner and the memory estimator both
// need to know which tensors occupy memory at each point of the step. A view
// (or getitem) owns no storage: it aliases its input's storage and extends its
// lifetime. A storage is live from the node that allocates it to the last node
// that reads it (or any alias of it); graph outputs stay live to the end, and
// tensors saved for backward are simply those read late, so they stay live
// across the forward/backward boundary without special cases.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace autopar {

// What a storage holds, for splitting the peak into its parts.
// Params, buffers and gradients are resident state; activations come and go.
enum class StorageRole : uint8_t { kParam, kBuffer, kGradient, kActivation };

struct Liveness {
  // For every node: the node that owns the storage its output lives in (itself
  // unless it is a view or getitem of something). A node with several outputs
  // owns one storage holding all of them.
  std::vector<NodeId> storage_root;
  // For storage roots: execution position where it is allocated and the last
  // position it is read (inclusive). Non-roots: -1.
  std::vector<int32_t> start;
  std::vector<int32_t> end;
  std::vector<StorageRole> role;

  bool owns_storage(NodeId id) const { return storage_root[static_cast<size_t>(id)] == id; }
};

Liveness analyze_liveness(const Graph& graph);

// The execution positions worth checking for peak memory: right before a
// storage dies, the live set is at a local maximum. Positions whose live set is
// a subset of another kept position's are dropped. Returned sorted.
std::vector<int32_t> peak_candidate_points(const Liveness& liveness);

// Storage roots live at position t (start <= t <= end), of the given role.
std::vector<NodeId> live_at(const Liveness& liveness, int32_t t, StorageRole role);

}  // namespace autopar
