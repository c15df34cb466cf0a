// StageWorker: one rank's half of a pipeline step. It holds the rank's params,
// its optimizer state and the activations in flight, runs one action at a
// time (F, B, I, W, SEND_*, RECV_*), accumulates the param gradients over
// microbatches and takes the optimizer step on its params. Everything it holds
// is counted in one LiveStorages, whose peak is what pipeline_memory.h
// predicts. Used by pipeline_run.cc, which drives the steps and the check.
#pragma once

#include <chrono>
#include <map>
#include <vector>

#include <ATen/core/Tensor.h>
#include <mpi.h>

#include "ir/expected.h"
#include "ir/graph.h"
#include "pipeline_runtime/activation_store.h"
#include "pipeline_runtime/keep_rules.h"
#include "pipeline_runtime/node_runner.h"
#include "pipeline_runtime/stage_setup.h"
#include "runtime/live_storages.h"
#include "runtime/mpi_comm.h"
#include "runtime/optimizer.h"

namespace autopar::pipeline {

class StageWorker {
 public:
  // `placeholders`: the value of every placeholder this rank's stages read
  // (params and buffers whole, the tangent on the loss rank); inputs per
  // microbatch in `microbatch_inputs`. `send_release`: this rank's row of
  // send_release_points. The optimizer state is allocated here.
  // `pipe`: one rank per pipeline position (its rank is this worker's); the
  // activations and gradients travel on it. `runner` runs the nodes.
  StageWorker(const Graph& micro, const PipelineSetup& setup, const Communicator& pipe, NodeRunner& runner,
              std::vector<at::Tensor> placeholders,
              std::vector<std::vector<at::Tensor>> microbatch_inputs,
              std::vector<int32_t> send_release, const OptimizerConfig& optimizer);
  // The store counts into held_: a moved worker would leave it pointing at the old one.
  StageWorker(const StageWorker&) = delete;
  StageWorker& operator=(const StageWorker&) = delete;

  // Runs action `index` of this rank's list, then completes the sends
  // released after it.
  Status run(size_t index, const Action& action);
  // Completes this step's remaining sends; every value must be gone.
  Status finish_step();
  // One step: reset_step, every action of this rank's list in order, finish_step.
  Status run_step();

  // Sum over this step's microbatches of each held param's gradient (by
  // placeholder id), and of the loss (last stage's rank only).
  const std::map<NodeId, at::Tensor>& grad_sums() const { return grad_sums_; }
  double loss_sum() const { return loss_sum_; }
  void reset_step();
  // Divides each gradient sum by `microbatches`, in place (the mean loss's
  // gradient), then brings it into its param's placement (the runner's
  // gradient reduction; every rank of a stage group in the same order).
  Status average_grads(int32_t microbatches);
  // The optimizer updates this rank's params in place from the averaged sums
  // (the optimizer-step phase: an injected failure is returned).
  Status optimizer_step();
  // Frees the gradient sums (after the optimizer step and its check).
  void release_grads();
  at::Tensor& param(NodeId id) { return placeholders_[static_cast<size_t>(id)]; }

  double busy_s() const { return busy_s_; }
  int64_t peak_bytes() const { return held_.peak(); }  // everything held, distinct storages

 private:
  int32_t slot(StageIdx stage, MicrobatchIdx mb) const;
  int tag(bool backward, StageIdx stage, MicrobatchIdx mb) const;
  bool on_this_rank(StageIdx stage) const;
  Status forward(StageIdx stage, MicrobatchIdx mb);
  Status backward(StageIdx stage, MicrobatchIdx mb, ActionKind kind);
  Status run_nodes(int32_t slot, const std::vector<NodeId>& nodes, const std::vector<bool>& keep);
  void hand_off(StageIdx from, StageIdx to, MicrobatchIdx mb, const std::vector<NodeId>& values);
  Status send(size_t index, StageIdx stage, MicrobatchIdx mb, bool backward);
  Status recv(StageIdx stage, MicrobatchIdx mb, bool backward);
  Status complete_sends(int32_t released_after);
  void accumulate(int32_t slot, StageIdx stage);

  struct PendingSend {
    MPI_Request request;
    at::Tensor buffer;
    int32_t released_after;  // action index (send_release.h)
  };

  const Graph& graph_;
  const PipelineSetup& setup_;
  const Communicator& pipe_;
  NodeRunner& runner_;
  int rank_;
  std::vector<StageIdx> own_;  // this rank's stages, sorted
  std::vector<int32_t> send_release_;
  LiveStorages held_;          // everything below, each storage once
  std::vector<at::Tensor> placeholders_;
  std::vector<std::vector<at::Tensor>> inputs_;  // [mb][node] input placeholder slices
  std::vector<NodeId> optimized_;                // params with gradients here, in order
  OptimizerState optimizer_;
  ActivationStore store_;
  std::map<StageIdx, StageKeepRules> rules_;
  std::vector<PendingSend> pending_;
  std::map<NodeId, at::Tensor> grad_sums_;
  std::map<NodeId, NodeId> grad_node_;  // per optimized param: the node computing its gradient
  double loss_sum_ = 0, busy_s_ = 0;
  int64_t steps_run_ = 0;
  bool first_forward_ = false;  // step 1 until this rank's first backward (fault_injection.h)
};

}  // namespace autopar::pipeline
