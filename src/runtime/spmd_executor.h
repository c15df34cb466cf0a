// SPMD executor: one rank's part of a training step under a plan.
//
// Each rank holds the local shards of the placeholders (parameters, inputs,
// tangents) in their planned shardings, walks the joint graph in order and,
// per node, brings every input into the sharding the node's strategy requires
// (the plan's redistribution steps, on the mesh dims' communicators), then
// runs the node's kernel on local shards with the local output shapes.
// Tensors are freed after their last use. Each gradient is reduced into its
// parameter's sharding as soon as the node completing it has run (eager
// reduction, the plan's gradient pairing), and the unreduced copy freed; each
// buffer update is brought into its buffer's sharding the same way and
// replaces the buffer at the end of the step. What a rank holds, and when, is
// exactly memory/step_memory.h's model; the tracer's measured peak counts it
// (live_storages.h). A plan's recomputed activations (memory/recompute.h) are
// dropped after their last forward read and run again, with the views made
// of them, right before their first backward read. Every rank must call the
// same methods in the same order: collectives are matched across ranks by
// order.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "ir/expected.h"
#include "ir/graph.h"
#include "planner/auto_plan.h"
#include "runtime/fault_injection.h"
#include "runtime/live_storages.h"
#include "runtime/planned_node.h"
#include "runtime/spmd_mesh.h"
#include "runtime/trace.h"

namespace autopar {

struct SpmdStepResult {
  at::Tensor loss;                  // local shard of the loss, in its planned sharding
  std::vector<at::Tensor> grads;    // per graph gradient output, in its param's sharding
  std::vector<at::Tensor> buffers;  // per graph buffer output, the buffer's new local shard
};

// This rank's shard of a full tensor (Partial: the value on coordinate 0 of
// each partial mesh dim, zeros elsewhere).
Expected<at::Tensor> local_slice(const at::Tensor& full, const Sharding& sharding,
                                 const SpmdMesh& mesh);

class SpmdExecutor {
 public:
  SpmdExecutor(const Graph& graph, const Plan& plan, const SpmdMesh& mesh, Tracer& tracer);
  // account_ and context_ point into the executor.
  SpmdExecutor(const SpmdExecutor&) = delete;
  SpmdExecutor& operator=(const SpmdExecutor&) = delete;

  // Slices every placeholder's full value (indexed by NodeId; placeholders
  // only) into this rank's shard.
  Status load(const std::vector<at::Tensor>& full_placeholders);

  // Called on every rank, in graph order (node_check.h gathers and compares
  // what they are given): `input` with each input the plan redistributed, in
  // the node's input sharding, before the kernel runs; `outputs` with the
  // node's local outputs right after it ran.
  struct NodeObserver {
    std::function<Status(NodeId, int input, const at::Tensor&)> input;
    std::function<Status(NodeId, const std::vector<at::Tensor>&)> outputs;
  };
  void set_node_observer(NodeObserver observer) {
    observer_ = std::move(observer);
    context_.on_redistributed_input = observer_.input;
  }

  // Random ops draw from step_random_key(seed, step number) (counter_rng.h).
  void set_random_seed(uint64_t seed) { random_seed_ = seed; }
  Expected<SpmdStepResult> step(const FaultInjection& faults = {});

  // Local shards of the params with a gradient, in graph output order; the
  // optimizer updates them in place.
  std::vector<at::Tensor>& params() { return params_; }
  const std::vector<at::Tensor>& params() const { return params_; }
  const Sharding& output_sharding(NodeId v, int o = 0) const;
  // Per execution position, the most this rank held while that node ran in
  // the last step (tensor storages only: add what the caller holds besides,
  // e.g. optimizer state); placeholders: what was held as the step began.
  const std::vector<double>& node_peaks() const { return node_peaks_; }

 private:
  Status run_node(NodeId v, const FaultInjection& faults);
  void plan_recomputation();
  Status rerun_node(NodeId v);
  void release(NodeId v);
  // Counts values as held (their storages) or no longer held, in storages_
  // and the tracer.
  void hold(const std::vector<at::Tensor>& values);
  void drop(const std::vector<at::Tensor>& values);
  // Applies a change of storages_ to the tracer's held bytes.
  void track(int64_t bytes_before);
  Expected<SpmdStepResult> finish();
  // The output's value in its placeholder's sharding (the plan's pairing).
  Expected<at::Tensor> paired_output(const GraphOutput& g);
  // Eager reduction: the paired outputs node v completes, into reduced_.
  Status reduce_outputs_of(NodeId v);

  const Graph& graph_;
  const Plan& plan_;
  const SpmdMesh& mesh_;
  Tracer& tracer_;
  RedistributionIndex redist_;
  StorageAccount account_;                  // hold() / drop() for planned_node.h
  PlannedNodeContext context_;              // built once; the random key set per step
  std::vector<NodeId> last_use_;            // per node: last consumer position
  std::vector<std::vector<at::Tensor>> values_;
  std::vector<at::Tensor> params_;          // aliases values_ of gradient params
  std::vector<at::Tensor> reduced_;         // per graph output: its reduced copy (paired ones)
  std::vector<std::vector<size_t>> paired_at_;  // per node: the paired outputs it completes
  LiveStorages storages_;                   // placeholders and activations held
  uint64_t random_seed_ = 0;
  int64_t steps_run_ = 0;
  NodeObserver observer_;
  std::vector<double> node_peaks_;
  // Recomputation: per position, the re-run nodes dropped after it runs and
  // those run again (in graph order) before it runs.
  std::vector<std::vector<NodeId>> drop_after_, rerun_before_;
  double node_peak_ = 0;  // the running node's, updated by track()
};

}  // namespace autopar
