// StageWorker: one rank's half of a pipeline step. It holds the rank's params
// and the activations in flight, runs one action at a time (F, B, I, W, SEND_*,
// RECV_*) and accumulates the param gradients over microbatches. Used by
// pipeline_run.cc, which drives the steps, the optimizer and the check.
#pragma once

#include <chrono>
#include <map>
#include <vector>

#include <ATen/core/Tensor.h>
#include <mpi.h>

#include "ir/expected.h"
#include "ir/graph.h"
#include "pipeline_runtime/activation_store.h"
#include "pipeline_runtime/stage_setup.h"

namespace autopar::pipeline {

class StageWorker {
 public:
  // `placeholders`: the value of every placeholder this rank's stages read
  // (params and buffers whole; inputs per microbatch in `inputs`).
  StageWorker(const Graph& micro, const PipelineSetup& setup, int rank,
              std::vector<at::Tensor> placeholders,
              std::vector<std::vector<at::Tensor>> microbatch_inputs);

  Status run(const Action& action);
  // Completes this step's sends; returns the time spent waiting.
  Status finish_step();

  // Sum over this step's microbatches of each held param's gradient (by
  // placeholder id), and of the loss (last stage's rank only).
  const std::map<NodeId, at::Tensor>& grad_sums() const { return grad_sums_; }
  double loss_sum() const { return loss_sum_; }
  void reset_step();
  at::Tensor& param(NodeId id) { return placeholders_[static_cast<size_t>(id)]; }

  double busy_s() const { return busy_s_; }
  int64_t peak_activation_bytes() const { return store_.peak_bytes(); }
  int64_t live_activation_bytes() const { return store_.live_bytes(); }

 private:
  int32_t slot(StageIdx stage, MicrobatchIdx mb) const;
  int tag(bool backward, StageIdx stage, MicrobatchIdx mb) const;
  Status forward(StageIdx stage, MicrobatchIdx mb);
  Status backward(StageIdx stage, MicrobatchIdx mb, ActionKind kind);
  Status run_nodes(int32_t slot, const std::vector<NodeId>& nodes, const std::vector<bool>& keep);
  void hand_off(StageIdx from, StageIdx to, MicrobatchIdx mb, const std::vector<NodeId>& values);
  Status send(StageIdx stage, MicrobatchIdx mb, bool backward);
  Status recv(StageIdx stage, MicrobatchIdx mb, bool backward);
  void accumulate(int32_t slot, StageIdx stage);

  const Graph& graph_;
  const PipelineSetup& setup_;
  int rank_;
  std::vector<StageIdx> own_;  // this rank's stages, sorted
  std::vector<at::Tensor> placeholders_;
  std::vector<std::vector<at::Tensor>> inputs_;  // [mb][node] input placeholder slices
  ActivationStore store_;
  // Per stage: values kept after F (read by its backward, or sent) and after I
  // (read by W).
  std::map<StageIdx, std::vector<bool>> keep_after_f_, keep_after_i_;
  std::vector<std::pair<MPI_Request, at::Tensor>> pending_;
  std::map<NodeId, at::Tensor> grad_sums_;
  double loss_sum_ = 0, busy_s_ = 0;
};

}  // namespace autopar::pipeline
