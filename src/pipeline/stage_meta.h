// Pipeline shape inference: each stage's input, output and gradient metadata
// (shape, dtype, strides) worked out from the first stage's real inputs
// without data and without compute, and checked against shapes a user gives.
//
// torch.distributed.pipelining infers shapes by running each stage on zero
// tensors and sending the resulting metadata on. Here the op table's shape
// rules (ir/op_def.h infer_outputs) do the work: infer_stage() is a pure
// function of a stage and its input metas, so a rank runs it for each of its
// stages in order. A stage's outputs go to a later stage on ANOTHER rank as a
// small JSON message (encode_metas / decode_metas); to a later stage on the
// SAME rank they are handed over as a return value, no message.
//
// Microbatching: the graph's view/expand nodes carry literal sizes, so a
// graph cannot be reshaped after the fact; it is built for the microbatch
// (--batch = batch / M). The user's full-batch inputs are split along dim 0
// by M (microbatch_metas), and inference then checks every node against the
// microbatch graph: a wrong split shows as a shape error naming the node.
//
// Agreement: ranks either all infer or all use given shapes. Each rank
// contributes one flag (all-gathered by the stage runtime) and calls the pure
// decide_inference() on the gathered flags, so a disagreement is the same
// error on every rank instead of one rank waiting for metadata forever.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/expected.h"
#include "ir/graph.h"
#include "pipeline/stages.h"

namespace autopar::pipeline {

struct StageMeta {
  StageIdx stage = 0;
  std::vector<TensorMeta> inputs;   // in Stage::inputs order
  std::vector<TensorMeta> outputs;  // in Stage::outputs order
  // Gradients flowing backward through the stage boundary: the gradient of a
  // value has that value's meta; integer values (tokens, labels) have none.
  std::vector<std::optional<TensorMeta>> input_grads;   // sent to earlier stages
  std::vector<std::optional<TensorMeta>> output_grads;  // received from later stages
};

// Pure: propagates the input metas through the stage's nodes. Errors name the
// stage, and the node whose shape rule failed (with its op's message), or the
// input count that does not match.
Expected<StageMeta> infer_stage(const Graph& graph, const Stage& stage,
                                std::span<const TensorMeta> input_metas);

// Full-batch input metas split along dim 0 into M microbatches; an input whose
// dim 0 is not a multiple of M is an error naming it.
Expected<std::map<std::string, TensorMeta>> microbatch_metas(
    const std::map<std::string, TensorMeta>& full_batch, int32_t microbatches);
// The microbatch size of a graph built at the full batch: every graph input's
// dim 0 divided by M (errors as microbatch_metas', or a graph without inputs).
Expected<int64_t> microbatch_rows(const Graph& full, int32_t microbatches);

// The metadata message between ranks:
//   {"from":0,"to":1,"metas":[{"dtype":"f32","shape":[4,32,256],"strides":[8192,256,1]}]}
// On a sharded boundary (3-D runs) each meta also carries how the sender
// holds the value: its placement per mesh dim of the stage group and the
// local shape of one rank's block:
//   {"dtype":"f32","shape":[4,32,256],"placement":"S(0)","local_shape":[2,32,256]}
struct BoundaryLayout {
  std::string placement;  // sharding/placement.h's text, e.g. "S(0)R"
  Shape local_shape;
  bool operator==(const BoundaryLayout&) const = default;
};
struct MetaMessage {
  StageIdx from = 0, to = 0;
  std::vector<TensorMeta> metas;
  std::vector<BoundaryLayout> layouts;  // empty, or one per meta
};
std::string encode_metas(const MetaMessage& message);
// Non-contiguous strides are an error: the IR's tensors are contiguous.
Expected<MetaMessage> decode_metas(std::string_view bytes);

// The whole protocol run in one process: for each stage in order, gather its
// input metas (graph inputs by placeholder name, microbatch-sized; activations
// from earlier stages, through a message when the producing stage is on
// another rank, as a return value when on the same one) and infer_stage().
struct PipelineMeta {
  std::vector<StageMeta> stages;
  std::vector<MetaMessage> messages;  // what crossed ranks, in send order
  int32_t direct_hand_offs = 0;       // same-rank producer -> consumer stage pairs
};
Expected<PipelineMeta> infer_pipeline(const Graph& graph, const std::vector<Stage>& stages,
                                      const std::vector<RankIdx>& stage_to_rank,
                                      const std::map<std::string, TensorMeta>& microbatch_inputs);

// User-given stage shapes (--stage-shapes FILE):
//   {"stages":[{"stage":0,"inputs":[{"dtype":"i64","shape":[4,32]}],
//               "outputs":[{"dtype":"f32","shape":[4,32,256],"strides":[8192,256,1]}]}]}
// "strides" is optional (contiguous when absent); so are "inputs" and
// "outputs" (not checked when absent). Values are in Stage::inputs/outputs
// order: graph nodes in execution order, so placeholders (labels) first.
struct GivenMeta {
  TensorMeta meta;
  std::vector<int64_t> strides;
};
struct GivenStageShapes {
  StageIdx stage = 0;
  std::optional<std::vector<GivenMeta>> inputs, outputs;  // absent: not checked
};
Expected<std::vector<GivenStageShapes>> parse_stage_shapes(std::string_view json_text);

// Compares given shapes with inferred ones. The first mismatch is an error
// naming the stage, "input"/"output" and the value index, and what differs:
//   "stage 1 input 0: shape [4, 32, 256] given, [2, 32, 256] inferred"
// (likewise dtype, strides, or the value count).
Status check_stage_shapes(const std::vector<StageMeta>& inferred,
                          const std::vector<GivenStageShapes>& given);

// One flag per rank (index = rank): whether that rank was given stage shapes.
// Returns whether to run shape inference (no rank has shapes); a mix is an
// error listing both groups of ranks, identical on every rank.
Expected<bool> decide_inference(std::span<const bool> has_given_shapes);

}  // namespace autopar::pipeline
