// StageWorker (see stage_worker.h).
#include "pipeline_runtime/stage_worker.h"

#include <algorithm>

#include <ATen/ops/empty.h>
#include <fmt/format.h>

#include "runtime/kernels.h"

namespace autopar::pipeline {
namespace {

// Tags of activation/gradient messages; setup uses tag 1, the check 1 << 14.
constexpr int kTensorTagBase = 16;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<bool> mark(const Graph& graph, const std::vector<NodeId>& nodes) {
  std::vector<bool> marked(static_cast<size_t>(graph.size()), false);
  for (NodeId id : nodes) marked[static_cast<size_t>(id)] = true;
  return marked;
}

std::vector<bool> inputs_of(const Graph& graph, const std::vector<NodeId>& nodes) {
  std::vector<bool> read(static_cast<size_t>(graph.size()), false);
  for (NodeId id : nodes) {
    for (NodeId in : graph.node(id).inputs) read[static_cast<size_t>(in)] = true;
  }
  return read;
}

std::vector<bool> either(std::vector<bool> a, const std::vector<bool>& b) {
  for (size_t i = 0; i < a.size(); ++i) a[i] = a[i] || b[i];
  return a;
}

std::vector<NodeId> value_nodes(const std::vector<Value>& values) {
  std::vector<NodeId> nodes;
  for (const Value& v : values) nodes.push_back(v.node);
  return nodes;
}

}  // namespace

StageWorker::StageWorker(const Graph& micro, const PipelineSetup& setup, int rank,
                         std::vector<at::Tensor> placeholders,
                         std::vector<std::vector<at::Tensor>> microbatch_inputs)
    : graph_(micro),
      setup_(setup),
      rank_(rank),
      own_(setup.lowered.stages_of(rank)),
      placeholders_(std::move(placeholders)),
      inputs_(std::move(microbatch_inputs)),
      store_(micro, static_cast<int32_t>(own_.size()) * setup.lowered.num_microbatches) {
  for (StageIdx s : own_) {
    const StageProgram& p = setup.programs[static_cast<size_t>(s)];
    std::vector<bool> sent = mark(micro, value_nodes(p.activations_out));
    if (p.loss != kNoNode) sent[static_cast<size_t>(p.loss)] = true;
    keep_after_f_[s] = either(inputs_of(micro, p.backward), sent);
    keep_after_i_[s] = either(inputs_of(micro, p.weight_grad),
                              either(mark(micro, p.grads_out), mark(micro, p.param_grads)));
  }
}

int32_t StageWorker::slot(StageIdx stage, MicrobatchIdx mb) const {
  auto it = std::find(own_.begin(), own_.end(), stage);
  return static_cast<int32_t>(it - own_.begin()) * setup_.lowered.num_microbatches + mb;
}

int StageWorker::tag(bool backward, StageIdx stage, MicrobatchIdx mb) const {
  return kTensorTagBase + 2 * (stage * setup_.lowered.num_microbatches + mb) + (backward ? 1 : 0);
}

void StageWorker::reset_step() {
  grad_sums_.clear();
  loss_sum_ = 0;
  busy_s_ = 0;
}

Status StageWorker::run(const Action& a) {
  auto start = std::chrono::steady_clock::now();
  Status status = ok_status();
  switch (a.kind) {
    case ActionKind::kF: status = forward(a.stage, a.microbatch); break;
    case ActionKind::kB:
    case ActionKind::kI:
    case ActionKind::kW: status = backward(a.stage, a.microbatch, a.kind); break;
    case ActionKind::kSendF: return send(a.stage, a.microbatch, /*backward=*/false);
    case ActionKind::kSendB: return send(a.stage, a.microbatch, /*backward=*/true);
    case ActionKind::kRecvF: return recv(a.stage, a.microbatch, /*backward=*/false);
    case ActionKind::kRecvB: return recv(a.stage, a.microbatch, /*backward=*/true);
  }
  busy_s_ += seconds_since(start);
  if (!status) return make_error("rank {} action {}: {}", rank_, to_string(a), status.error().message);
  return status;
}

Status StageWorker::run_nodes(int32_t s, const std::vector<NodeId>& nodes,
                              const std::vector<bool>& keep) {
  std::vector<int32_t> last(static_cast<size_t>(graph_.size()), -1);
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (NodeId in : graph_.node(nodes[i]).inputs) last[static_cast<size_t>(in)] = static_cast<int32_t>(i);
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& node = graph_.node(nodes[i]);
    std::vector<at::Tensor> out;
    if (node.op == OpId::kGetItem) {
      out = {store_.get(s, node.inputs[0]).at(static_cast<size_t>(node.attrs.get_int("index")))};
    } else {
      std::vector<at::Tensor> inputs;
      for (NodeId in : node.inputs) {
        const std::vector<at::Tensor>& v = store_.get(s, in);
        if (v.size() != 1) {
          return make_error("node {} reads {}, which this rank does not hold", node.name,
                            graph_.node(in).name);
        }
        inputs.push_back(v[0]);
      }
      Expected<std::vector<at::Tensor>> result = run_kernel(node, inputs, node.outputs);
      if (!result) return result.error();
      out = std::move(*result);
    }
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
      return make_error("activation {} of microbatch {} was not received", graph_.node(v.node).name, mb);
    }
  }
  if (p.loss != kNoNode) {  // the tangent d loss / d loss, read by the backward
    for (NodeId id = 0; id < graph_.size(); ++id) {
      if (graph_.node(id).kind == PlaceholderKind::kTangent && graph_.node(id).is_placeholder()) {
        store_.put(s, id, {placeholders_[static_cast<size_t>(id)]});
      }
    }
  }
  if (Status ok = run_nodes(s, p.forward, keep_after_f_.at(stage)); !ok) return ok;
  if (p.loss != kNoNode) {
    loss_sum_ += store_.get(s, p.loss).at(0).item<double>();  // freed with the backward
  }
  StageIdx next = stage + 1;
  if (next < setup_.lowered.num_stages &&
      setup_.lowered.stage_to_rank[static_cast<size_t>(next)] == rank_) {
    hand_off(stage, next, mb, value_nodes(p.activations_out));
  }
  return ok_status();
}

// A value for a later (forward) or earlier (backward) stage on this rank: a
// reference moved between slots, no message. The producer keeps it only when
// its own backward reads it.
void StageWorker::hand_off(StageIdx from, StageIdx to, MicrobatchIdx mb,
                           const std::vector<NodeId>& values) {
  const int32_t a = slot(from, mb), b = slot(to, mb);
  const std::vector<bool> bwd = inputs_of(graph_, setup_.programs[static_cast<size_t>(from)].backward);
  for (NodeId id : values) {
    store_.put(b, id, store_.get(a, id));
    if (to < from || !bwd[static_cast<size_t>(id)]) store_.drop(a, id);
  }
}

void StageWorker::accumulate(int32_t s, StageIdx stage) {
  const StageProgram& p = setup_.programs[static_cast<size_t>(stage)];
  for (size_t i = 0; i < p.params.size(); ++i) {
    if (!store_.has(s, p.param_grads[i])) continue;
    const at::Tensor& g = store_.get(s, p.param_grads[i]).at(0);
    at::Tensor& sum = grad_sums_[p.params[i]];
    sum = sum.defined() ? sum.add(g) : g.clone();
    store_.drop(s, p.param_grads[i]);
  }
}

Status StageWorker::backward(StageIdx stage, MicrobatchIdx mb, ActionKind kind) {
  const int32_t s = slot(stage, mb);
  const StageProgram& p = setup_.programs[static_cast<size_t>(stage)];
  std::vector<bool> sent = mark(graph_, p.grads_out);
  std::vector<bool> keep = kind == ActionKind::kI ? keep_after_i_.at(stage)
                                                   : either(sent, mark(graph_, p.param_grads));
  const std::vector<NodeId>& nodes = kind == ActionKind::kB   ? p.backward
                                     : kind == ActionKind::kI ? p.input_grad
                                                              : p.weight_grad;
  for (NodeId g : p.grads_in) {
    if (kind != ActionKind::kW && !store_.has(s, g)) {
      return make_error("gradient {} of microbatch {} was not received", graph_.node(g).name, mb);
    }
  }
  if (Status ok = run_nodes(s, nodes, keep); !ok) return ok;
  accumulate(s, stage);
  if (kind != ActionKind::kW && stage > 0 &&
      setup_.lowered.stage_to_rank[static_cast<size_t>(stage - 1)] == rank_) {
    hand_off(stage, stage - 1, mb, p.grads_out);
  }
  // After B or W nothing of this microbatch is needed but unsent gradients;
  // after I, what W reads.
  for (NodeId id = 0; id < graph_.size(); ++id) {
    if (!store_.has(s, id) || sent[static_cast<size_t>(id)]) continue;
    if (kind == ActionKind::kI && keep[static_cast<size_t>(id)]) continue;
    store_.drop(s, id);
  }
  return ok_status();
}

Status StageWorker::send(StageIdx stage, MicrobatchIdx mb, bool backward) {
  const int32_t s = slot(stage, mb);
  const StageProgram& p = setup_.programs[static_cast<size_t>(stage)];
  std::vector<NodeId> values = backward ? p.grads_out : value_nodes(p.activations_out);
  StageIdx peer = backward ? stage - 1 : stage + 1;
  int to = setup_.lowered.stage_to_rank[static_cast<size_t>(peer)];
  const std::vector<bool> bwd = inputs_of(graph_, p.backward);
  for (NodeId id : values) {
    if (!store_.has(s, id)) return make_error("{} to send is missing", graph_.node(id).name);
    at::Tensor t = store_.get(s, id).at(0).resolve_conj().contiguous();  // no lazy conjugate bit on the wire
    MPI_Request request;
    int code = MPI_Isend(t.data_ptr(), static_cast<int>(t.nbytes()), MPI_BYTE, to,
                         tag(backward, peer, mb), MPI_COMM_WORLD, &request);
    if (code != MPI_SUCCESS) return make_error("MPI_Isend of {} to rank {} failed", graph_.node(id).name, to);
    pending_.emplace_back(request, t);
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
  std::vector<std::pair<NodeId, TensorMeta>> buffers;
  if (backward) {
    for (NodeId g : p.grads_in) buffers.emplace_back(g, graph_.node(g).meta());
  } else {
    for (size_t i = 0; i < st.inputs.size(); ++i) {  // sized from the inferred metas
      if (!graph_.node(st.inputs[i].node).is_placeholder()) buffers.emplace_back(st.inputs[i].node, meta.inputs[i]);
    }
  }
  for (const auto& [id, m] : buffers) {
    at::Tensor buffer = at::empty(m.shape, at::TensorOptions().dtype(to_scalar_type(m.dtype)));
    if (Status ok = recv_bytes_exact(buffer.data_ptr(), static_cast<int64_t>(buffer.nbytes()), from,
                                     tag(backward, stage, mb));
        !ok) {
      return make_error("rank {} receiving {} of stage {} microbatch {}: {}", rank_,
                        graph_.node(id).name, stage, mb, ok.error().message);
    }
    store_.put(s, id, {buffer});
  }
  return ok_status();
}

Status StageWorker::finish_step() {
  for (auto& [request, tensor] : pending_) {
    if (MPI_Wait(&request, MPI_STATUS_IGNORE) != MPI_SUCCESS) return make_error("MPI_Wait failed");
  }
  pending_.clear();
  if (store_.live_bytes() != 0) {
    return make_error("rank {}: {} activation bytes still held at the end of the step", rank_,
                      store_.live_bytes());
  }
  return ok_status();
}

}  // namespace autopar::pipeline
