// Memory estimator: what one device holds over a training step of a plan.
//
// The planner keeps only the peak (evaluate_plan's MemoryBreakdown); the
// report and `autopar explain` need the whole timeline and the tensors behind
// the peak. Positions are execution positions: node ids in graph order, as in
// memory/liveness.h. Every device holds the same local shard sizes (shardings
// are even), so one number per position stands for every device.
//
// Accounting at position t, while node t runs (what the SPMD runtime holds;
// src/runtime/spmd_executor.cc):
//   params       parameter placeholders in their chosen sharding, all step,
//                plus the other placeholders (buffers, tokens, labels);
//   optimizer    per parameter element optimizer_bytes_per_element (AdamW: two
//                f32 moments), all step;
//   grads        gradient storages (graph outputs of kind gradient) in the
//                sharding their producer chose, from the node that allocates
//                them to the end of the step;
//   activations  every other storage root (memory/liveness.h: views and
//                getitems own no storage) from its allocation to its last read;
//   comm_buffers node t's redistributed operands: the local bytes of each
//                operand in the sharding node t reads it in, for the plan's
//                redistributions into node t (PlannedRedistribution), live
//                while node t runs. Gradient->parameter pairings are charged at
//                the last position (the runtime applies them after the step).
// All bytes are per device: local shard bytes of the chosen placement.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "planner/auto_plan.h"

namespace autopar::report {

enum class MemoryKind : uint8_t { kParam, kGrad, kOptimizer, kActivation, kCommBuffer };
std::string_view memory_kind_name(MemoryKind kind);  // "param", "grad", ...

struct MemoryParts {
  double params = 0;  // bytes per device
  double grads = 0;
  double optimizer = 0;
  double activations = 0;
  double comm_buffers = 0;

  double total() const { return params + grads + optimizer + activations + comm_buffers; }
};

// One tensor a device holds at some position, for "what drives the peak".
struct LiveTensor {
  NodeId node = kNoNode;
  std::string name;       // node name
  std::string op;         // op name, "placeholder" for inputs
  std::string shape;      // full (global) shape, e.g. "[2, 8192, 4096]"
  std::string placement;  // per mesh dim, e.g. "S(0)R"
  MemoryKind kind = MemoryKind::kActivation;
  double bytes = 0;       // per device; for kParam includes nothing else
  int32_t start = -1;     // first and last execution position it is held
  int32_t end = -1;
};

struct MemoryTimeline {
  std::vector<MemoryParts> positions;  // per execution position (graph.size())
  int32_t peak_position = -1;          // argmax of positions[t].total()
  NodeId peak_node = kNoNode;          // the node running at the peak
  double peak_bytes = 0;
  MemoryParts peak;                    // = positions[peak_position]
  // Everything held at the peak, largest first (optimizer state as one entry
  // per parameter, comm buffers one per redistributed operand).
  std::vector<LiveTensor> live_at_peak;
};

// The plan must have a choice (plan.choice.size() == graph.size()); a plan
// without one (nothing fits) gives an empty timeline.
MemoryTimeline estimate_memory(const Graph& graph, const Plan& plan);

}  // namespace autopar::report
