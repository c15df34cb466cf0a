// StageWorker (see stage_worker.h).
#include "pipeline_runtime/stage_worker.h"

#include <algorithm>

#include <ATen/ops/empty.h>
#include <fmt/format.h>

#include "runtime/fault_injection.h"
#include "runtime/kernels.h"
#include "sharding/strategy.h"

namespace autopar::pipeline {
namespace {

// Tags of activation/gradient messages; setup uses tag 1, the check 1 << 14.
constexpr int kTensorTagBase = 16;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<NodeId> value_nodes(const std::vector<Value>& values) {
  std::vector<NodeId> nodes;
  for (const Value& v : values) nodes.push_back(v.node);
  return nodes;
}

}  // namespace

StageWorker::StageWorker(const Graph& micro, const PipelineSetup& setup, const Communicator& pipe,
                         NodeRunner& runner, std::vector<at::Tensor> placeholders,
                         std::vector<std::vector<at::Tensor>> microbatch_inputs,
                         std::vector<int32_t> send_release, const OptimizerConfig& optimizer)
    : graph_(micro),
      setup_(setup),
      pipe_(pipe),
      runner_(runner),
      rank_(pipe.rank()),
      own_(setup.lowered.stages_of(pipe.rank())),
      send_release_(std::move(send_release)),
      placeholders_(std::move(placeholders)),
      inputs_(std::move(microbatch_inputs)),
      optimizer_(optimizer),
      store_(micro, static_cast<int32_t>(own_.size()) * setup.lowered.num_microbatches, held_) {
  held_.add(placeholders_);
  for (const std::vector<at::Tensor>& mb : inputs_) held_.add(mb);
  std::vector<at::Tensor> params;
  for (StageIdx s : own_) {
    const StageProgram& p = setup.programs[static_cast<size_t>(s)];
    rules_.emplace(s, keep_rules(micro, p));
    for (size_t i = 0; i < p.params.size(); ++i) {
      const NodeId prm = p.params[i];
      grad_node_[prm] = p.param_grads[i];
      optimized_.push_back(prm);
      params.push_back(placeholders_[static_cast<size_t>(prm)]);
    }
  }
  optimizer_.allocate(params);  // before step 1, as the memory model counts it
  held_.add(optimizer_.state());
}

int32_t StageWorker::slot(StageIdx stage, MicrobatchIdx mb) const {
  auto it = std::find(own_.begin(), own_.end(), stage);
  return static_cast<int32_t>(it - own_.begin()) * setup_.lowered.num_microbatches + mb;
}

int StageWorker::tag(bool backward, StageIdx stage, MicrobatchIdx mb) const {
  return kTensorTagBase + 2 * (stage * setup_.lowered.num_microbatches + mb) + (backward ? 1 : 0);
}

bool StageWorker::on_this_rank(StageIdx stage) const {
  return stage >= 0 && stage < setup_.lowered.num_stages &&
         setup_.lowered.stage_to_rank[static_cast<size_t>(stage)] == rank_;
}

void StageWorker::reset_step() {
  release_grads();
  loss_sum_ = 0;
  busy_s_ = 0;
}

Status StageWorker::average_grads(int32_t microbatches) {
  for (auto& [prm, sum] : grad_sums_) {
    sum.div_(microbatches);
    Expected<at::Tensor> placed = runner_.to_param_placement(prm, grad_node_.at(prm), sum, held_);
    if (!placed) return make_error_like(placed.error(),
        "gradient of {}: {}", graph_.node(prm).name, placed.error().message);
    held_.add({*placed});
    held_.remove({sum});
    sum = std::move(*placed);
  }
  return ok_status();
}

Status StageWorker::optimizer_step() {
  if (Status s = enter_phase(JobPhase::kOptimizerStep); !s) return s;
  std::vector<at::Tensor> params, grads;
  for (NodeId prm : optimized_) {
    params.push_back(placeholders_[static_cast<size_t>(prm)]);
    grads.push_back(grad_sums_.at(prm));
  }
  optimizer_.step(params, grads);
  return enter_phase(JobPhase::kTraining);
}

void StageWorker::release_grads() {
  for (const auto& [prm, sum] : grad_sums_) held_.remove({sum});
  grad_sums_.clear();
}

Status StageWorker::run(size_t index, const Action& a) {
  if (first_forward_ && (a.kind == ActionKind::kB || a.kind == ActionKind::kI)) {
    first_forward_ = false;  // the first forward ends at this rank's first backward
    if (Status s = enter_phase(JobPhase::kTraining); !s) return s;
  }
  auto start = std::chrono::steady_clock::now();
  Status status = ok_status();
  switch (a.kind) {
    case ActionKind::kF: status = forward(a.stage, a.microbatch); break;
    case ActionKind::kB:
    case ActionKind::kI:
    case ActionKind::kW: status = backward(a.stage, a.microbatch, a.kind); break;
    case ActionKind::kSendF: status = send(index, a.stage, a.microbatch, /*backward=*/false); break;
    case ActionKind::kSendB: status = send(index, a.stage, a.microbatch, /*backward=*/true); break;
    case ActionKind::kRecvF: status = recv(a.stage, a.microbatch, /*backward=*/false); break;
    case ActionKind::kRecvB: status = recv(a.stage, a.microbatch, /*backward=*/true); break;
  }
  if (is_compute(a.kind)) busy_s_ += seconds_since(start);
  if (status) status = complete_sends(static_cast<int32_t>(index));
  if (!status) return make_error_like(status.error(),
      "rank {} action {}: {}", rank_, to_string(a), status.error().message);
  return status;
}

Status StageWorker::run_nodes(int32_t s, const std::vector<NodeId>& nodes,
                              const std::vector<bool>& keep) {
  const std::vector<int32_t> last = last_reads(graph_, nodes);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& node = graph_.node(nodes[i]);
    // A getitem reads one output of its producer; the runner still applies
    // what the plan does there (a sharded runner may redistribute it).
    std::vector<at::Tensor> inputs;
    for (int k = 0; k < static_cast<int>(node.inputs.size()); ++k) {
      const NodeId in = node.inputs[static_cast<size_t>(k)];
      const std::vector<at::Tensor>& v = store_.get(s, in);
      const size_t o = static_cast<size_t>(producer_output_index(graph_, nodes[i], k));
      if (o >= v.size() || (node.op != OpId::kGetItem && v.size() != 1)) {
        return make_error("node {} reads {}, which this rank does not hold", node.name, graph_.node(in).name);
      }
      inputs.push_back(v[o]);
    }
    Expected<std::vector<at::Tensor>> result = runner_.run(nodes[i], inputs, held_);
    if (!result) return make_error_like(result.error(),
        "node {} ({}): {}", node.name, node_op_name(node), result.error().message);
    std::vector<at::Tensor> out = std::move(*result);
    store_.put(s, nodes[i], std::move(out));
    for (NodeId in : node.inputs) {
      if (last[static_cast<size_t>(in)] == static_cast<int32_t>(i) && !keep[static_cast<size_t>(in)] &&
          !graph_.node(in).is_placeholder()) {
        store_.drop(s, in);
      }
    }
    if (last[static_cast<size_t>(nodes[i])] < 0 && !keep[static_cast<size_t>(nodes[i])]) {
      store_.drop(s, nodes[i]);
    }
  }
  return ok_status();
}

Status StageWorker::forward(StageIdx stage, MicrobatchIdx mb) {
  const int32_t s = slot(stage, mb);
  const Stage& st = setup_.stages[static_cast<size_t>(stage)];
  const StageProgram& p = setup_.programs[static_cast<size_t>(stage)];
  for (NodeId prm : st.params) store_.put(s, prm, {placeholders_[static_cast<size_t>(prm)]});
  for (const Value& v : st.inputs) {
    if (graph_.node(v.node).is_placeholder()) {
      store_.put(s, v.node, {inputs_[static_cast<size_t>(mb)][static_cast<size_t>(v.node)]});
    } else if (!store_.has(s, v.node)) {
      return make_error_of(ErrorKind::kInternal, "activation {} of microbatch {} was not received", graph_.node(v.node).name, mb);
    }
  }
  if (p.loss != kNoNode) {  // the tangent d loss / d loss, read by the backward
    for (NodeId id = 0; id < graph_.size(); ++id) {
      if (graph_.node(id).kind == PlaceholderKind::kTangent && graph_.node(id).is_placeholder()) {
        store_.put(s, id, {placeholders_[static_cast<size_t>(id)]});
      }
    }
  }
  if (Status ok = run_nodes(s, p.forward, rules_.at(stage).after_forward); !ok) return ok;
  if (p.loss != kNoNode) {
    Expected<double> loss = runner_.loss_value(p.loss, store_.get(s, p.loss).at(0));  // freed with the backward
    if (!loss) return loss.error();
    loss_sum_ += *loss;
  }
  if (on_this_rank(stage + 1)) hand_off(stage, stage + 1, mb, value_nodes(p.activations_out));
  return ok_status();
}

// A value for a later (forward) or earlier (backward) stage on this rank: a
// reference moved between slots, no message. The producer keeps it only when
// its own backward reads it.
void StageWorker::hand_off(StageIdx from, StageIdx to, MicrobatchIdx mb,
                           const std::vector<NodeId>& values) {
  const int32_t a = slot(from, mb), b = slot(to, mb);
  const std::vector<bool>& bwd = rules_.at(from).read_by_backward;
  for (NodeId id : values) {
    store_.put(b, id, store_.get(a, id));
    if (to < from || !bwd[static_cast<size_t>(id)]) store_.drop(a, id);
  }
}

// The first gradient of a param in a step is copied into its sum (contiguous:
// it is sent as raw bytes by the check), later ones are added in place.
void StageWorker::accumulate(int32_t s, StageIdx stage) {
  const StageProgram& p = setup_.programs[static_cast<size_t>(stage)];
  for (size_t i = 0; i < p.params.size(); ++i) {
    if (!store_.has(s, p.param_grads[i])) continue;
    const at::Tensor& g = store_.get(s, p.param_grads[i]).at(0);
    at::Tensor& sum = grad_sums_[p.params[i]];
    if (sum.defined()) {
      sum.add_(g);
    } else {
      sum = g.clone(at::MemoryFormat::Contiguous);
      held_.add({sum});
    }
    store_.drop(s, p.param_grads[i]);
  }
}

Status StageWorker::backward(StageIdx stage, MicrobatchIdx mb, ActionKind kind) {
  const int32_t s = slot(stage, mb);
  const StageProgram& p = setup_.programs[static_cast<size_t>(stage)];
  const StageKeepRules& rules = rules_.at(stage);
  const std::vector<bool>& sent = rules.sent_grads;
  const std::vector<bool>& keep = kind == ActionKind::kI ? rules.after_input_grad : rules.after_backward;
  const std::vector<NodeId>& nodes = kind == ActionKind::kB   ? p.backward
                                     : kind == ActionKind::kI ? p.input_grad
                                                              : p.weight_grad;
  for (NodeId g : p.grads_in) {
    if (kind != ActionKind::kW && !store_.has(s, g)) {
      return make_error_of(ErrorKind::kInternal, "gradient {} of microbatch {} was not received", graph_.node(g).name, mb);
    }
  }
  if (Status ok = run_nodes(s, nodes, keep); !ok) return ok;
  accumulate(s, stage);
  if (kind != ActionKind::kW && on_this_rank(stage - 1)) hand_off(stage, stage - 1, mb, p.grads_out);
  // After B or W nothing of this microbatch is needed but unsent gradients;
  // after I, what W reads.
  for (NodeId id = 0; id < graph_.size(); ++id) {
    if (!store_.has(s, id) || sent[static_cast<size_t>(id)]) continue;
    if (kind == ActionKind::kI && keep[static_cast<size_t>(id)]) continue;
    store_.drop(s, id);
  }
  return ok_status();
}

// The buffer shares the value's storage unless libtorch must make it
// contiguous (a strided view: a copy, counted as held); it lives until the
// send's release point (send_release.h).
Status StageWorker::send(size_t index, StageIdx stage, MicrobatchIdx mb, bool backward) {
  const int32_t s = slot(stage, mb);
  const StageProgram& p = setup_.programs[static_cast<size_t>(stage)];
  std::vector<NodeId> values = backward ? p.grads_out : value_nodes(p.activations_out);
  StageIdx peer = backward ? stage - 1 : stage + 1;
  int to = setup_.lowered.stage_to_rank[static_cast<size_t>(peer)];
  const std::vector<bool>& bwd = rules_.at(stage).read_by_backward;
  for (NodeId id : values) {
    if (!store_.has(s, id)) return make_error("{} to send is missing", graph_.node(id).name);
    at::Tensor t = store_.get(s, id).at(0).resolve_conj().contiguous();  // no lazy conjugate bit on the wire
    MPI_Request request;
    OperationPhase phase(JobPhase::kSend);
    if (!phase.fault()) return phase.fault();
    int code = MPI_Isend(t.data_ptr(), static_cast<int>(t.nbytes()), MPI_BYTE, to,
                         tag(backward, peer, mb), pipe_.native(), &request);
    if (code != MPI_SUCCESS) return make_error_of(ErrorKind::kRuntime, "MPI_Isend of {} to rank {} failed", graph_.node(id).name, to);
    held_.add({t});
    pending_.push_back({request, t, send_release_.at(index)});
    if (backward || !bwd[static_cast<size_t>(id)]) store_.drop(s, id);
  }
  return ok_status();
}

Status StageWorker::recv(StageIdx stage, MicrobatchIdx mb, bool backward) {
  const int32_t s = slot(stage, mb);
  const Stage& st = setup_.stages[static_cast<size_t>(stage)];
  const StageProgram& p = setup_.programs[static_cast<size_t>(stage)];
  const StageMeta& meta = setup_.metas.at(stage);
  StageIdx peer = backward ? stage + 1 : stage - 1;
  int from = setup_.lowered.stage_to_rank[static_cast<size_t>(peer)];
  std::vector<std::pair<Value, TensorMeta>> buffers;
  if (backward) {
    for (NodeId g : p.grads_in) buffers.emplace_back(Value{g, 0}, graph_.node(g).meta());
  } else {
    for (size_t i = 0; i < st.inputs.size(); ++i) {  // sized from the inferred metas
      if (!graph_.node(st.inputs[i].node).is_placeholder()) buffers.emplace_back(st.inputs[i], meta.inputs[i]);
    }
  }
  for (const auto& [value, m] : buffers) {
    const NodeId id = value.node;
    at::Tensor buffer = at::empty(runner_.held_shape(value.node, value.output, m.shape),
                                  at::TensorOptions().dtype(to_scalar_type(m.dtype)));
    if (Status ok = recv_bytes_exact(pipe_, buffer.data_ptr(), static_cast<int64_t>(buffer.nbytes()), from,
                                     tag(backward, stage, mb));
        !ok) {
      return make_error_like(ok.error(), "rank {} receiving {} of stage {} microbatch {}: {}", rank_,
                        graph_.node(id).name, stage, mb, ok.error().message);
    }
    store_.put(s, id, {buffer});
  }
  return ok_status();
}

// Waits for the sends released after action `released_after` (every pending
// send when it is the action count) and frees their buffers.
Status StageWorker::complete_sends(int32_t released_after) {
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->released_after != released_after) {
      ++it;
      continue;
    }
    OperationPhase phase(JobPhase::kSend);
    if (MPI_Wait(&it->request, MPI_STATUS_IGNORE) != MPI_SUCCESS) return make_error_of(ErrorKind::kRuntime, "MPI_Wait failed");
    held_.remove({it->buffer});
    it = pending_.erase(it);
  }
  return ok_status();
}

Status StageWorker::run_step() {
  reset_step();
  first_forward_ = ++steps_run_ == 1;
  if (Status s = enter_phase(first_forward_ ? JobPhase::kFirstForward : JobPhase::kTraining); !s) return s;
  const std::vector<Action>& actions = setup_.lowered.ranks[static_cast<size_t>(rank_)];
  for (size_t i = 0; i < actions.size(); ++i) {
    if (Status s = run(i, actions[i]); !s) return s;
  }
  return finish_step();
}

Status StageWorker::finish_step() {
  const auto actions = static_cast<int32_t>(setup_.lowered.ranks[static_cast<size_t>(rank_)].size());
  if (Status s = complete_sends(actions); !s) return s;
  if (!pending_.empty()) return make_error_of(ErrorKind::kInternal, "rank {}: {} sends never completed", rank_, pending_.size());
  if (store_.entries() != 0) {
    return make_error_of(ErrorKind::kInternal, "rank {}: {} values still held at the end of the step", rank_, store_.entries());
  }
  return ok_status();
}

}  // namespace autopar::pipeline
