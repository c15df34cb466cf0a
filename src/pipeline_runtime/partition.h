// Backward partition: which nodes of the joint graph's backward each pipeline
// stage runs, and which gradients cross the stage boundaries.
//
// split_stages (pipeline/stages.h) cuts only the forward. The backward nodes
// are given to stages by the rule the autodiff makes possible: every backward
// node carries the scope of the forward node it differentiates (a gradient
// accumulation add carries its consumer's), so its layer unit names the stage
// that holds that forward node. A backward node whose scope names no unit
// (empty scope, as in an imported graph's backward) joins the stage of the
// forward values and params it reads, or, reading none, the latest stage
// among the backward nodes it reads.
// The rule is then verified, not trusted: every input of a stage's backward
// node must be the stage's own forward value, one of its inputs, its own
// param/buffer, its own backward value, the tangent (last stage only), or a
// gradient computed by the next stage (a boundary gradient, received by
// RECV_B). Anything else is an error naming the node and the input.
//
// Zero-bubble split: I is the part of a stage's backward that the boundary
// gradients it sends to the previous stage depend on (the input gradients);
// W is the rest (weight gradients), which nobody downstream waits for.
//
// The runtime also needs every activation of stage s to come from stage s-1
// (values skipping stages are not routed yet) and each param to be read by
// one stage (a param shared by two stages would need its partial gradients
// summed across ranks); both are checked here with a message.
#pragma once

#include <vector>

#include "ir/expected.h"
#include "ir/graph.h"
#include "pipeline/stages.h"

namespace autopar::pipeline {

struct StageProgram {
  StageIdx stage = 0;
  std::vector<NodeId> forward;       // Stage::nodes
  std::vector<NodeId> backward;      // all backward nodes of the stage, graph order
  std::vector<NodeId> input_grad;    // I: what grads_out needs, graph order
  std::vector<NodeId> weight_grad;   // W: the rest, graph order
  std::vector<Value> activations_in;   // forward values from stage - 1 (RECV_F), sorted
  std::vector<Value> activations_out;  // forward values for stage + 1 (SEND_F), sorted
  std::vector<NodeId> grads_in;      // backward nodes of stage + 1 read here (RECV_B), sorted
  std::vector<NodeId> grads_out;     // backward nodes read by stage - 1 (SEND_B), sorted
  std::vector<NodeId> params;        // param placeholders whose gradient this stage computes
  std::vector<NodeId> param_grads;   // the gradient node of each, same order
  NodeId loss = kNoNode;             // the loss node (last stage only)
  // Whole-layer recomputation (stage_recompute.h): forward nodes dropped
  // after F and re-run inside the backward lists above, sorted; else empty.
  std::vector<NodeId> rerun;
};

// One program per stage, in stage order. Errors name the stage, the node and
// the input that breaks the rule.
Expected<std::vector<StageProgram>> partition_stages(const Graph& graph,
                                                     const std::vector<Stage>& stages);

// The stage of every node (-1 for placeholders), as partition_stages assigns it.
Expected<std::vector<StageIdx>> node_stages(const Graph& graph, const std::vector<Stage>& stages);

}  // namespace autopar::pipeline
