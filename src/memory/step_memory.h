// Step memory: what one device holds over a training step. This is the one
// memory model of autopar: the planner's memory rows, the plan summary and its
// `fits`, `autopar explain --memory`, the HTML report and the runtime's
// measured-against-predicted line all count with these functions, and the
// SPMD runtime (src/runtime/spmd_executor.cc) holds exactly this.
//
// Positions are execution positions: node ids in graph order; node v runs at
// position v. All bytes are per device: the local shard bytes of the chosen
// placement (shardings are even, so every device holds the same).
//
// Held all step (positions 0..last):
//   param       parameter placeholders in their sharding;
//   optimizer   optimizer_bytes_per_element per local parameter element
//               (AdamW: two f32 moments; the runtime allocates them up front);
//   input       the other placeholders: buffers, tokens, labels.
// Held over an interval (memory/liveness.h):
//   activation  every other storage root (views and getitems own none), from
//               the node that allocates it to its last read; the loss to the end;
//   grad        a gradient, in its producer's sharding, from the node that
//               completes it to that node (or its last read, if later) — it is
//               then reduced to the parameter's placement at once (eager
//               reduction, as FSDP and DDP do) and this copy is freed; the
//               reduced copy, in the parameter's sharding, from the next
//               position to the end of the step (the optimizer reads it). A
//               buffer update is reduced the same way (its copy is an
//               activation) and written into the buffer at the end.
// Held while one node runs (comm_buffer; they depend on both ends'
// placements, so they come with a chosen plan, not per strategy):
//   the copies a redistribution makes. (A view or getitem whose operand is
//   redistributed views the copy: the copy is its own storage, held over its
//   liveness, and the operand's storage is not extended by the view's readers.)
//   Node v's operands are redistributed one
//   after another before its kernel runs; each step of a redistribution holds
//   its input and output (its first input is the live operand itself), and
//   the result is held until the kernel ends. After the kernel, before node v's
//   inputs are freed, the gradients and buffer updates v completes are reduced
//   the same way. The value at position v is the largest of these phases:
//     operand i      pre(v) + copies of operands before i + transient(i)
//     kernel         pre(v) + v's outputs + every operand copy
//     reduction k    live(v) + reduced copies before k + transient(k)
//   where pre(v) is what is live at v except v's own outputs and live(v)
//   includes them.
// Not counted: scratch inside one kernel or one collective (the runtime's
// tracked bytes are the tensors held between operations, as PyTorch's
// allocator statistics see them at op boundaries).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "sharding/redistribute.h"
#include "sharding/strategy.h"

namespace autopar {

enum class MemoryKind : uint8_t { kParam, kOptimizer, kInput, kGrad, kActivation, kCommBuffer };
std::string_view memory_kind_name(MemoryKind kind);  // "param", "optimizer", ...

// Per-device bytes of a node's outputs under strategy s (all outputs summed).
double local_output_bytes(const Graph& graph, NodeId node, const NodeStrategies& ns,
                          StrategyIdx s, const DeviceMesh& mesh);
double local_tensor_bytes(const TensorMeta& meta, const Sharding& sharding, const DeviceMesh& mesh);

// The bytes one device holds after each step of a redistribution of `meta`
// from `from` (each step's result is its own storage); a plan without steps
// still copies once, into `to`'s bytes.
std::vector<double> redistribution_results(const TensorMeta& meta, const Sharding& from, const Sharding& to,
                                           const RedistPlan& plan, const DeviceMesh& mesh);

// Something a device holds whose size one node's strategy decides.
struct StepHolding {
  NodeId node = kNoNode;    // whose strategy sets the bytes
  NodeId tensor = kNoNode;  // the value held (for a reduced copy: the gradient)
  MemoryKind kind = MemoryKind::kActivation;
  int32_t start = 0;        // first and last position held, inclusive
  int32_t end = 0;
  std::vector<double> bytes;  // per strategy of `node`

  bool all_step(int32_t last) const { return start == 0 && end == last; }
};

// Every holding of the step except the comm buffers, in node order. Each
// node has at most one holding that is not held all step.
// own_storage (optional, per node): views whose operand is redistributed, so
// that they view the copy (liveness.h). reduced_in_place (optional, per graph
// output): gradients and buffer updates already in their placeholder's
// placement, so that the output is its own reduced copy, held from where its
// storage would have died. The planner's rows, which come before any
// redistribution is known, pass neither: a reduced copy then counts from the
// position after its node, beside an unreduced storage still read later (an
// over-count the rows allow; the plan's evaluation is exact).
// recompute (optional, per node): candidate roots chosen for recomputation
// (recompute.h); the storages of each one's re-run nodes are then held in two
// pieces, before the window and from its end (so a node may have two).
std::vector<StepHolding> step_holdings(const Graph& graph, const StrategyGraph& strategies,
                                       double optimizer_bytes_per_element,
                                       const std::vector<char>* own_storage = nullptr,
                                       const std::vector<char>* reduced_in_place = nullptr,
                                       const std::vector<char>* recompute = nullptr);

// One redistribution of a chosen plan.
struct StepRedistribution {
  NodeId producer = kNoNode;  // the value redistributed
  int32_t output_index = 0;
  NodeId consumer = kNoNode;  // the node reading it, or the placeholder a paired output ends in
  int32_t input = 0;          // operand index of consumer; -1: a gradient or buffer update
  Sharding from, to;
  const RedistPlan* plan = nullptr;
};

struct MemoryParts {
  double params = 0;  // bytes per device
  double optimizer = 0;
  double inputs = 0;
  double grads = 0;
  double activations = 0;
  double comm_buffers = 0;

  double total() const { return params + optimizer + inputs + grads + activations + comm_buffers; }
  void add(MemoryKind kind, double bytes);
};

// One tensor a device holds at some position, for "what drives the peak".
struct LiveTensor {
  NodeId node = kNoNode;
  std::string name;       // node name
  std::string op;         // op name, "placeholder" for inputs
  std::string shape;      // full (global) shape, e.g. "[2, 8192, 4096]"
  std::string placement;  // per mesh dim, e.g. "S(0)R", "P->S(0)" for a comm buffer
  MemoryKind kind = MemoryKind::kActivation;
  double bytes = 0;       // per device
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
  // per parameter, comm buffers one per redistribution step held).
  std::vector<LiveTensor> live_at_peak;
};

// The timeline of a chosen assignment (one strategy per node). Uneven
// shards (sharding/placement.h) count at their padded piece, the largest any
// device holds, unless `device` names one device by its mesh coordinate: then
// that device's own pieces count (what `autopar run` holds each rank to).
// recompute: as for step_holdings (null or empty: nothing recomputed); at a
// restore position the re-runs run before the node, each with its operand
// copies, and the largest moment among them is a phase of that position.
MemoryTimeline step_memory(const Graph& graph, const StrategyGraph& strategies,
                           std::span<const StrategyIdx> choice,
                           std::span<const StepRedistribution> redistributions,
                           double optimizer_bytes_per_element,
                           const std::vector<int64_t>* device = nullptr,
                           const std::vector<char>* recompute = nullptr);

}  // namespace autopar
