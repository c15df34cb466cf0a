// Liveness of tensor storage over a graph's execution order.
//
// The activation-memory constraint of the planner and the memory estimator both
// need to know which tensors occupy memory at each point of the step. A view
// (or getitem) owns no storage: it aliases its input's storage and extends its
// lifetime. Each output of a multi-output node is its own tensor, owned by its
// first getitem (claims_output_of). A storage is live from the node that allocates it to the last node
// that reads it (or any alias of it); the loss stays live to the end, a
// gradient or buffer update until its node has run (it is then reduced to its
// placeholder's placement, a copy step_memory.h counts), and
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
  // owns the storage of those no getitem claims (claims_output_of).
  std::vector<NodeId> storage_root;
  // For storage roots: execution position where it is allocated and the last
  // position it is read (inclusive). Non-roots: -1.
  std::vector<int32_t> start;
  std::vector<int32_t> end;
  std::vector<StorageRole> role;
  // For the first getitem of each output of a multi-output node: that node.
  // The getitem owns the output's storage, from the node's position to the
  // later of its own last read and the node's last getitem; the node's own
  // storage holds its other outputs (kNoNode elsewhere).
  std::vector<NodeId> claims_output_of;

  bool owns_storage(NodeId id) const { return storage_root[static_cast<size_t>(id)] == id; }
};

// Views and getitems: their output aliases their first input's storage.
bool aliases_input(const Node& node);

// own_storage (optional, per node): a view or getitem flagged there owns its
// storage instead of aliasing its input's: its operand was redistributed, so
// it views the copy (step_memory.h).
Liveness analyze_liveness(const Graph& graph, const std::vector<char>* own_storage = nullptr);

// The execution positions worth checking for peak memory: right before a
// storage dies, the live set is at a local maximum. Positions whose live set is
// a subset of another kept position's are dropped. Returned sorted.
std::vector<int32_t> peak_candidate_points(const Liveness& liveness);
// The same over any intervals [start[i], end[i]] on positions 0..positions-1
// (start -1: no interval); the Liveness overload passes its storages.
std::vector<int32_t> peak_candidate_points(const std::vector<int32_t>& start,
                                           const std::vector<int32_t>& end, int32_t positions);

// Storage roots live at position t (start <= t <= end), of the given role.
std::vector<NodeId> live_at(const Liveness& liveness, int32_t t, StorageRole role);

}  // namespace autopar
