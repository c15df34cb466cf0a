// Pipeline memory: the predicted peak of the bytes one rank of the stage
// runtime (`autopar pipeline`) holds during a training step.
//
// Why here and not in src/memory: the walk needs the pipeline's types
// (Schedule/Action from src/pipeline, Stage, and StageProgram from
// partition.h), while src/memory sits below them and is read by the planner;
// memory depending on the pipeline would turn the layers upside down. So this
// libtorch-free library (autopar_pipeline_memory) sits above both and takes
// memory's conventions from it (memory/liveness.h: which ops alias their
// input), and the stage runtime links it to print the prediction beside
// what it measured.
//
// What a rank holds, counted as distinct storages (a view, a getitem, a value
// handed to another stage of the rank and a send without a copy share their
// value's storage and count once), in bytes of the microbatch graph's metas:
//   params      every param and buffer its stages read, and the tangent on
//               the rank holding the loss; all run;
//   optimizer   optimizer_bytes_per_element per element of the params its
//               stages compute gradients for (AdamW: two f32 moments), from
//               before step 1 (runtime/optimizer.h allocate);
//   inputs      each microbatch's slice of each graph input its stages read
//               (tokens, labels), all run;
//   grad sums   per param, the sum of its gradient over the step's
//               microbatches: allocated (a copy) when its first gradient is
//               added, the later ones added in place; freed after the
//               optimizer step (which, as the division by M, works in place);
//   activations each (stage, microbatch)'s values between its actions, by the
//               keep rules of keep_rules.h; inside an action a node's
//               outputs are allocated while its inputs are held, and an input
//               goes at its last read there;
//   received    RECV buffers, held like the stage's own values;
//   send copies a sent value the runtime must make contiguous is copied for
//               the send (a transposing, expanding or slicing view in the
//               value's view chain); any sent buffer lives until its send is
//               released (send_release.h);
//   comm buffers (3-D runs) the copies redistributions make (ShardedValues).
// In a 3-D run every size is one rank's block under the stage group's plan,
// and the gradient sums are in their producers' shardings until the end of
// the step, when each is reduced into its param's placement.
// The peak is the largest total after any allocation. Not counted: scratch
// inside one kernel or the optimizer, MPI's own buffers and the --check
// reference (rank 0's unsplit copy of the model).
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/expected.h"
#include "ir/graph.h"
#include "pipeline/schedule.h"
#include "pipeline/stages.h"
#include "pipeline_runtime/partition.h"

namespace autopar::pipeline {

enum class PipelineMemoryKind : uint8_t {
  kParam, kOptimizer, kInput, kGradSum, kActivation, kReceived, kSendCopy, kCommBuffer
};
inline constexpr size_t kPipelineMemoryKinds = 8;
std::string_view pipeline_memory_kind_name(PipelineMemoryKind kind);  // "param", "grad_sum", ...

struct RankMemory {
  int64_t peak_bytes = 0;
  // Bytes held at the peak by kind (indexed by PipelineMemoryKind); they sum to peak_bytes.
  std::array<int64_t, kPipelineMemoryKinds> at_peak{};
  // Where the peak is first reached: the action ("1F0", "0SEND_F1"), or
  // "start" (before the first action).
  std::string peak_action;
  int64_t resident_bytes = 0;  // held from the start: params, optimizer state, inputs
};

// Stage groups sharded by a plan (3-D runs, grid_run.h): what one rank holds
// of each value, and the copies the plan's redistributions make. Each copy a
// redistribution step makes is its own storage (comm_buffer), held until the
// next step's; an operand's final copy is held until the node's outputs
// exist (a view or getitem of it keeps it as its output), and a gradient
// sum's, made at the end of the step, until the step ends. Null: whole tensors.
struct ShardedValues {
  // Bytes of output `o` of node `v` on one rank.
  std::function<int64_t(NodeId v, int32_t o)> bytes;
  // The bytes after each step of the redistribution planned for operand
  // `input` of `consumer` (input -1: a gradient sum into param `consumer`'s
  // placement); nullopt when none is planned.
  std::function<std::optional<std::vector<int64_t>>(NodeId consumer, int32_t input)> copies;
};

struct PipelineMemoryInput {
  const Graph* micro = nullptr;                    // the graph the stages run
  const std::vector<Stage>* stages = nullptr;
  const std::vector<StageProgram>* programs = nullptr;
  const Schedule* lowered = nullptr;               // with SEND/RECV
  double optimizer_bytes_per_element = 0;          // 0: SGD, 8: AdamW in f32
  const ShardedValues* sharded = nullptr;          // 3-D runs
};

// The rank's predicted peak over one training step (every step is alike).
// Errors: a schedule the runtime could not run (a value read before it is
// made or received), named with the action.
Expected<RankMemory> predict_rank_memory(const PipelineMemoryInput& input, RankIdx rank);

// Every rank's prediction, in rank order.
Expected<std::vector<RankMemory>> predict_pipeline_memory(const PipelineMemoryInput& input);

// "param 1.953 MiB, input 128 B, grad_sum 1.953 MiB, ..." — the nonzero parts
// of a prediction at its peak.
std::string describe_parts(const RankMemory& memory);

}  // namespace autopar::pipeline
