// Keep rules: which values a pipeline stage holds between its actions, and
// when a node's value may be dropped inside one action. The stage runtime
// (stage_worker.cc) drops by these rules and the memory model
// (pipeline_memory.h) counts by them, so the two cannot drift apart.
//
//   after F     what the stage's backward reads (with whole-layer
//               recomputation, what its re-runs read, but not the re-run
//               nodes themselves: stage_recompute.h), what it sends or hands
//               to the next stage, and the loss;
//   after I     what W reads, the input gradients it sends, and the param
//               gradients (until they are added to the step's sums);
//   after B, W  the input gradients it sends (until SEND_B) and the param
//               gradients (until added); everything else of the microbatch
//               goes.
// Inside an action a node's value goes at its last read there unless the
// action's keep set holds it; a value nobody reads there goes right after it
// is made. Placeholders are never dropped inside an action.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "pipeline_runtime/partition.h"

namespace autopar::pipeline {

// Per-node flags (indexed by NodeId) of one stage.
struct StageKeepRules {
  std::vector<bool> read_by_backward;  // inputs of any backward node of the stage
  std::vector<bool> after_forward;
  std::vector<bool> after_input_grad;
  std::vector<bool> after_backward;    // after B or W
  std::vector<bool> sent_grads;        // grads_out: dropped by SEND_B or the hand-off
};

StageKeepRules keep_rules(const Graph& graph, const StageProgram& program);

// For every node: the index in `nodes` of the last node there that reads it,
// -1 when none does.
std::vector<int32_t> last_reads(const Graph& graph, const std::vector<NodeId>& nodes);

}  // namespace autopar::pipeline
