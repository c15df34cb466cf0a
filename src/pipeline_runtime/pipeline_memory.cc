// The stage runtime's memory, walked action by action (see pipeline_memory.h).
// Each piece mirrors the StageWorker member of the same name; the drops
// follow keep_rules.h and the send releases send_release.h, which the
// runtime uses too.
#include "pipeline_runtime/pipeline_memory.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "memory/liveness.h"
#include "pipeline_runtime/keep_rules.h"
#include "pipeline_runtime/send_release.h"

namespace autopar::pipeline {
namespace {

using StorageId = int32_t;
using Storages = std::vector<StorageId>;
constexpr StorageId kNoStorage = -1;

size_t at(int64_t i) { return static_cast<size_t>(i); }

// Reference-counted storages, the running total and its peak (the model's
// runtime/live_storages.h).
class HeldStorages {
 public:
  StorageId make(int64_t bytes, PipelineMemoryKind kind) {
    storages_.push_back({bytes, kind, 0});
    return static_cast<StorageId>(storages_.size() - 1);
  }
  void add(const Storages& ids) {
    for (StorageId id : ids) {
      Storage& s = storages_[at(id)];
      if (s.refs++ > 0) continue;
      live_[at(static_cast<int>(s.kind))] += s.bytes;
      total_ += s.bytes;
      if (total_ > peak_.peak_bytes) {
        peak_.peak_bytes = total_;
        peak_.at_peak = live_;
        peak_.peak_action = action_;
      }
    }
  }
  void remove(const Storages& ids) {
    for (StorageId id : ids) {
      Storage& s = storages_[at(id)];
      if (--s.refs > 0) continue;
      live_[at(static_cast<int>(s.kind))] -= s.bytes;
      total_ -= s.bytes;
    }
  }
  void set_action(std::string text) { action_ = std::move(text); }
  int64_t total() const { return total_; }
  const RankMemory& peak() const { return peak_; }

 private:
  struct Storage {
    int64_t bytes = 0;
    PipelineMemoryKind kind = PipelineMemoryKind::kActivation;
    int32_t refs = 0;
  };
  std::vector<Storage> storages_;
  std::array<int64_t, kPipelineMemoryKinds> live_{};
  int64_t total_ = 0;
  RankMemory peak_;
  std::string action_ = "start";
};

// The values of each (stage, microbatch) slot (the model's ActivationStore).
class SlotValues {
 public:
  SlotValues(HeldStorages& held, int32_t slots, int32_t nodes)
      : held_(held), slots_(at(slots), std::vector<Storages>(at(nodes))) {}
  const Storages& get(int32_t slot, NodeId id) const { return slots_[at(slot)][at(id)]; }
  bool has(int32_t slot, NodeId id) const { return !get(slot, id).empty(); }
  void put(int32_t slot, NodeId id, Storages values) {
    drop(slot, id);
    held_.add(values);
    slots_[at(slot)][at(id)] = std::move(values);
  }
  void drop(int32_t slot, NodeId id) {
    held_.remove(slots_[at(slot)][at(id)]);
    slots_[at(slot)][at(id)].clear();
  }
  bool empty() const {
    for (const auto& slot : slots_) {
      for (const Storages& v : slot) {
        if (!v.empty()) return false;
      }
    }
    return true;
  }

 private:
  HeldStorages& held_;
  std::vector<std::vector<Storages>> slots_;
};

// Views the runtime sees as strided (libtorch's view keeps the input's
// strides permuted, broadcast or offset), so that a send must copy them.
bool strided_view(OpId op) {
  return op == OpId::kT || op == OpId::kTranspose || op == OpId::kPermute || op == OpId::kExpand ||
         op == OpId::kSliceTensor || op == OpId::kSelectInt;
}

std::vector<NodeId> value_nodes(const std::vector<Value>& values) {
  std::vector<NodeId> nodes;
  for (const Value& v : values) nodes.push_back(v.node);
  return nodes;
}

}  // namespace

std::string_view pipeline_memory_kind_name(PipelineMemoryKind kind) {
  switch (kind) {
    case PipelineMemoryKind::kParam: return "param";
    case PipelineMemoryKind::kOptimizer: return "optimizer";
    case PipelineMemoryKind::kInput: return "input";
    case PipelineMemoryKind::kGradSum: return "grad_sum";
    case PipelineMemoryKind::kActivation: return "activation";
    case PipelineMemoryKind::kReceived: return "received";
    case PipelineMemoryKind::kSendCopy: return "send_copy";
    case PipelineMemoryKind::kCommBuffer: return "comm_buffer";
  }
  return "?";
}

namespace {

// One rank's step, action by action.
class RankWalk {
 public:
  RankWalk(const PipelineMemoryInput& in, RankIdx rank, std::vector<int32_t> release_after);
  void hold_resident();
  Status run(size_t index, const Action& a);
  Status finish_step();

  const HeldStorages& held() const { return held_; }

 private:
  const Stage& stage(StageIdx s) const { return (*in_.stages)[at(s)]; }
  const StageProgram& program(StageIdx s) const { return (*in_.programs)[at(s)]; }
  int32_t slot(StageIdx stage, MicrobatchIdx mb) const;
  bool on_this_rank(StageIdx s) const;
  Status forward(StageIdx s, MicrobatchIdx mb);
  Status backward(StageIdx s, MicrobatchIdx mb, ActionKind kind);
  Status run_nodes(int32_t slot, const std::vector<NodeId>& nodes, const std::vector<bool>& keep);
  void hand_off(StageIdx from, StageIdx to, MicrobatchIdx mb, const std::vector<NodeId>& values);
  void accumulate(int32_t slot, StageIdx s);
  Status send(size_t index, StageIdx s, MicrobatchIdx mb, bool backward);
  void recv(StageIdx s, MicrobatchIdx mb, bool backward);
  bool send_copies(StageIdx s, NodeId id) const;
  int64_t bytes(NodeId v, int32_t o = 0) const;
  // The copies of a planned redistribution, each step's held until the
  // next's; the last one's storage, or kNoStorage when none is planned.
  StorageId redistribute(NodeId consumer, int32_t input);

  const PipelineMemoryInput& in_;
  const Graph& g_;
  RankIdx rank_;
  std::vector<StageIdx> own_;
  std::vector<int32_t> release_after_;  // per action index (send_release.h)
  std::map<StageIdx, StageKeepRules> rules_;
  std::vector<StageIdx> stage_of_;       // per node: the own stage whose action makes it, -1
  HeldStorages held_;
  SlotValues store_;
  std::vector<StorageId> placeholder_;            // params, buffers, tangent
  std::vector<std::vector<StorageId>> input_;     // [microbatch][node]
  std::map<NodeId, StorageId> grad_sum_;          // by param
  std::vector<std::pair<int32_t, StorageId>> pending_;  // (released after, buffer)
};

RankWalk::RankWalk(const PipelineMemoryInput& in, RankIdx rank, std::vector<int32_t> release_after)
    : in_(in),
      g_(*in.micro),
      rank_(rank),
      own_(in.lowered->stages_of(rank)),
      release_after_(std::move(release_after)),
      stage_of_(at(in.micro->size()), -1),
      store_(held_, static_cast<int32_t>(own_.size()) * in.lowered->num_microbatches, in.micro->size()),
      placeholder_(at(in.micro->size()), kNoStorage),
      input_(at(in.lowered->num_microbatches), std::vector<StorageId>(at(in.micro->size()), kNoStorage)) {
  for (StageIdx s : own_) {
    rules_.emplace(s, keep_rules(g_, program(s)));
    for (NodeId id : program(s).forward) stage_of_[at(id)] = s;
    for (NodeId id : program(s).backward) stage_of_[at(id)] = s;
  }
}

int64_t RankWalk::bytes(NodeId v, int32_t o) const {
  if (in_.sharded != nullptr) return in_.sharded->bytes(v, o);
  return g_.node(v).outputs.at(at(o)).bytes();
}

StorageId RankWalk::redistribute(NodeId consumer, int32_t input) {
  if (in_.sharded == nullptr) return kNoStorage;
  std::optional<std::vector<int64_t>> steps = in_.sharded->copies(consumer, input);
  if (!steps) return kNoStorage;
  StorageId last = kNoStorage;
  for (int64_t b : *steps) {
    StorageId next = held_.make(b, PipelineMemoryKind::kCommBuffer);
    held_.add({next});
    if (last != kNoStorage) held_.remove({last});
    last = next;
  }
  return last;
}

int32_t RankWalk::slot(StageIdx stage, MicrobatchIdx mb) const {
  auto it = std::find(own_.begin(), own_.end(), stage);
  return static_cast<int32_t>(it - own_.begin()) * in_.lowered->num_microbatches + mb;
}

bool RankWalk::on_this_rank(StageIdx s) const {
  return s >= 0 && s < in_.lowered->num_stages && in_.lowered->stage_to_rank[at(s)] == rank_;
}

// Params and buffers, the tangent (loss rank), the input slices and the
// optimizer state: held from before the first step to the end of the run.
void RankWalk::hold_resident() {
  bool loss_rank = false;
  for (StageIdx s : own_) {
    loss_rank = loss_rank || program(s).loss != kNoNode;
    for (NodeId prm : stage(s).params) {
      if (placeholder_[at(prm)] != kNoStorage) continue;
      placeholder_[at(prm)] = held_.make(bytes(prm), PipelineMemoryKind::kParam);
      held_.add({placeholder_[at(prm)]});
    }
    for (const Value& v : stage(s).inputs) {
      if (!g_.node(v.node).is_placeholder()) continue;
      for (std::vector<StorageId>& mb : input_) {
        if (mb[at(v.node)] != kNoStorage) continue;
        mb[at(v.node)] = held_.make(bytes(v.node), PipelineMemoryKind::kInput);
        held_.add({mb[at(v.node)]});
      }
    }
    for (NodeId prm : program(s).params) {
      const double elements = static_cast<double>(bytes(prm)) / static_cast<double>(dtype_size(g_.node(prm).meta().dtype));
      auto state = static_cast<int64_t>(in_.optimizer_bytes_per_element * elements);
      if (state > 0) held_.add({held_.make(state, PipelineMemoryKind::kOptimizer)});
    }
  }
  for (NodeId id = 0; id < g_.size() && loss_rank; ++id) {
    if (g_.node(id).is_placeholder() && g_.node(id).kind == PlaceholderKind::kTangent) {
      placeholder_[at(id)] = held_.make(bytes(id), PipelineMemoryKind::kParam);
      held_.add({placeholder_[at(id)]});
    }
  }
}

Status RankWalk::run(size_t index, const Action& a) {
  held_.set_action(to_string(a));
  Status status = ok_status();
  switch (a.kind) {
    case ActionKind::kF: status = forward(a.stage, a.microbatch); break;
    case ActionKind::kB:
    case ActionKind::kI:
    case ActionKind::kW: status = backward(a.stage, a.microbatch, a.kind); break;
    case ActionKind::kSendF: status = send(index, a.stage, a.microbatch, /*backward=*/false); break;
    case ActionKind::kSendB: status = send(index, a.stage, a.microbatch, /*backward=*/true); break;
    case ActionKind::kRecvF: recv(a.stage, a.microbatch, /*backward=*/false); break;
    case ActionKind::kRecvB: recv(a.stage, a.microbatch, /*backward=*/true); break;
  }
  if (!status) {
    return make_error_like(status.error(), "rank {} action {}: {}", rank_, to_string(a), status.error().message);
  }
  // Sends whose receive is known to be done by now (send_release.h).
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->first != static_cast<int32_t>(index)) {
      ++it;
      continue;
    }
    held_.remove({it->second});
    it = pending_.erase(it);
  }
  return ok_status();
}

Status RankWalk::forward(StageIdx s, MicrobatchIdx mb) {
  const int32_t k = slot(s, mb);
  for (NodeId prm : stage(s).params) store_.put(k, prm, {placeholder_[at(prm)]});
  for (const Value& v : stage(s).inputs) {
    if (g_.node(v.node).is_placeholder()) {
      store_.put(k, v.node, {input_[at(mb)][at(v.node)]});
    } else if (!store_.has(k, v.node)) {
      return make_error_of(ErrorKind::kInternal, "activation {} of microbatch {} was not received",
                           g_.node(v.node).name, mb);
    }
  }
  if (program(s).loss != kNoNode) {
    for (NodeId id = 0; id < g_.size(); ++id) {
      if (g_.node(id).is_placeholder() && g_.node(id).kind == PlaceholderKind::kTangent) {
        store_.put(k, id, {placeholder_[at(id)]});
      }
    }
  }
  if (Status ok = run_nodes(k, program(s).forward, rules_.at(s).after_forward); !ok) return ok;
  if (on_this_rank(s + 1)) hand_off(s, s + 1, mb, value_nodes(program(s).activations_out));
  return ok_status();
}

// A node's outputs: a getitem picks its producer's output, a view shares its
// input's storage, anything else allocates each output.
Status RankWalk::run_nodes(int32_t k, const std::vector<NodeId>& nodes, const std::vector<bool>& keep) {
  const std::vector<int32_t> last = last_reads(g_, nodes);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& node = g_.node(nodes[i]);
    for (NodeId in : node.inputs) {
      if (!store_.has(k, in)) return make_error("node {} reads {}, which is not held", node.name, g_.node(in).name);
    }
    // The operands' copies (3-D runs), made one after another and held until the outputs exist.
    Storages copies;
    for (size_t j = 0; j < node.inputs.size(); ++j) copies.push_back(redistribute(nodes[i], static_cast<int32_t>(j)));
    Storages out;
    if (node.op == OpId::kGetItem) {
      out = {copies[0] != kNoStorage ? copies[0] : store_.get(k, node.inputs[0]).at(at(node.attrs.get_int("index")))};
    } else if (aliases_input(node)) {
      out.assign(node.outputs.size(), copies[0] != kNoStorage ? copies[0] : store_.get(k, node.inputs[0]).at(0));
    } else {
      for (size_t o = 0; o < node.outputs.size(); ++o) {
        out.push_back(held_.make(bytes(nodes[i], static_cast<int32_t>(o)), PipelineMemoryKind::kActivation));
      }
    }
    store_.put(k, nodes[i], std::move(out));
    for (StorageId c : copies) {
      if (c != kNoStorage) held_.remove({c});
    }
    for (NodeId in : node.inputs) {
      if (last[at(in)] == static_cast<int32_t>(i) && !keep[at(in)] && !g_.node(in).is_placeholder()) {
        store_.drop(k, in);
      }
    }
    if (last[at(nodes[i])] < 0 && !keep[at(nodes[i])]) store_.drop(k, nodes[i]);
  }
  return ok_status();
}

void RankWalk::hand_off(StageIdx from, StageIdx to, MicrobatchIdx mb, const std::vector<NodeId>& values) {
  const int32_t a = slot(from, mb), b = slot(to, mb);
  for (NodeId id : values) {
    store_.put(b, id, store_.get(a, id));
    if (to < from || !rules_.at(from).read_by_backward[at(id)]) store_.drop(a, id);
  }
}

void RankWalk::accumulate(int32_t k, StageIdx s) {
  const StageProgram& p = program(s);
  for (size_t i = 0; i < p.params.size(); ++i) {
    if (!store_.has(k, p.param_grads[i])) continue;
    if (!grad_sum_.contains(p.params[i])) {  // the first: a copy; later ones in place
      StorageId sum = held_.make(bytes(p.param_grads[i]), PipelineMemoryKind::kGradSum);
      grad_sum_.emplace(p.params[i], sum);
      held_.add({sum});
    }
    store_.drop(k, p.param_grads[i]);
  }
}

Status RankWalk::backward(StageIdx s, MicrobatchIdx mb, ActionKind kind) {
  const int32_t k = slot(s, mb);
  const StageProgram& p = program(s);
  const StageKeepRules& rules = rules_.at(s);
  const std::vector<bool>& keep = kind == ActionKind::kI ? rules.after_input_grad : rules.after_backward;
  const std::vector<NodeId>& nodes = kind == ActionKind::kB   ? p.backward
                                     : kind == ActionKind::kI ? p.input_grad
                                                              : p.weight_grad;
  if (Status ok = run_nodes(k, nodes, keep); !ok) return ok;
  accumulate(k, s);
  if (kind != ActionKind::kW && on_this_rank(s - 1)) hand_off(s, s - 1, mb, p.grads_out);
  for (NodeId id = 0; id < g_.size(); ++id) {
    if (!store_.has(k, id) || rules.sent_grads[at(id)]) continue;
    if (kind == ActionKind::kI && keep[at(id)]) continue;
    store_.drop(k, id);
  }
  return ok_status();
}

// Whether the runtime copies value `id` of stage s to send it: a strided view
// in its view chain within the stage (received values and placeholders are
// contiguous).
bool RankWalk::send_copies(StageIdx s, NodeId id) const {
  for (NodeId v = id; stage_of_[at(v)] == s;) {
    const Node& node = g_.node(v);
    if (node.op == OpId::kGetItem || !aliases_input(node)) return false;
    if (strided_view(node.op)) return true;
    v = node.inputs[0];
  }
  return false;
}

Status RankWalk::send(size_t index, StageIdx s, MicrobatchIdx mb, bool backward) {
  const int32_t k = slot(s, mb);
  const StageProgram& p = program(s);
  const std::vector<NodeId> values = backward ? p.grads_out : value_nodes(p.activations_out);
  for (NodeId id : values) {
    if (!store_.has(k, id)) return make_error("{} to send is missing", g_.node(id).name);
    StorageId buffer = send_copies(s, id)
                           ? held_.make(bytes(id), PipelineMemoryKind::kSendCopy)
                           : store_.get(k, id).at(0);
    held_.add({buffer});
    pending_.emplace_back(release_after_[index], buffer);
    if (backward || !rules_.at(s).read_by_backward[at(id)]) store_.drop(k, id);
  }
  return ok_status();
}

void RankWalk::recv(StageIdx s, MicrobatchIdx mb, bool backward) {
  const int32_t k = slot(s, mb);
  std::vector<std::pair<NodeId, int64_t>> buffers;
  if (backward) {
    for (NodeId grad : program(s).grads_in) buffers.emplace_back(grad, bytes(grad));
  } else {
    for (const Value& v : stage(s).inputs) {
      if (!g_.node(v.node).is_placeholder()) buffers.emplace_back(v.node, bytes(v.node, v.output));
    }
  }
  for (const auto& [id, bytes] : buffers) store_.put(k, id, {held_.make(bytes, PipelineMemoryKind::kReceived)});
}

// The sends still pending complete; the optimizer then runs in place and the
// gradient sums go.
Status RankWalk::finish_step() {
  held_.set_action("end of step");
  for (const auto& [after, buffer] : pending_) held_.remove({buffer});
  pending_.clear();
  if (!store_.empty()) {
    return make_error_of(ErrorKind::kInternal, "rank {}: values still held at the end of the step", rank_);
  }
  // Each sum into its param's placement (the runtime's average_grads), held
  // with the others until the optimizer has run.
  Storages placed;
  for (const auto& [param, sum] : grad_sum_) {
    StorageId copy = redistribute(param, -1);
    placed.push_back(copy != kNoStorage ? copy : sum);
    if (copy != kNoStorage) held_.remove({sum});
  }
  held_.remove(placed);
  grad_sum_.clear();
  return ok_status();
}

}  // namespace

Expected<RankMemory> predict_rank_memory(const PipelineMemoryInput& in, RankIdx rank) {
  Expected<std::vector<std::vector<int32_t>>> release = send_release_points(*in.lowered);
  if (!release) return release.error();
  RankWalk walk(in, rank, (*release)[at(rank)]);
  walk.hold_resident();
  const int64_t resident = walk.held().total();
  const std::vector<Action>& actions = in.lowered->ranks[at(rank)];
  for (size_t i = 0; i < actions.size(); ++i) {
    if (Status s = walk.run(i, actions[i]); !s) return s.error();
  }
  if (Status s = walk.finish_step(); !s) return s.error();
  RankMemory memory = walk.held().peak();
  memory.resident_bytes = resident;
  return memory;
}

Expected<std::vector<RankMemory>> predict_pipeline_memory(const PipelineMemoryInput& in) {
  std::vector<RankMemory> ranks;
  for (RankIdx r = 0; r < in.lowered->num_ranks; ++r) {
    Expected<RankMemory> m = predict_rank_memory(in, r);
    if (!m) return m.error();
    ranks.push_back(std::move(*m));
  }
  return ranks;
}

std::string describe_parts(const RankMemory& memory) {
  auto size_text = [](int64_t bytes) {
    const auto b = static_cast<double>(bytes);
    if (bytes < 1024) return fmt::format("{} B", bytes);
    if (bytes < 1024 * 1024) return fmt::format("{:.1f} KiB", b / 1024);
    return fmt::format("{:.3f} MiB", b / (1024.0 * 1024.0));
  };
  std::string text;
  for (size_t k = 0; k < kPipelineMemoryKinds; ++k) {
    if (memory.at_peak[k] == 0) continue;
    text += fmt::format("{}{} {}", text.empty() ? "" : ", ",
                        pipeline_memory_kind_name(static_cast<PipelineMemoryKind>(k)),
                        size_text(memory.at_peak[k]));
  }
  return text.empty() ? "nothing" : text;
}

}  // namespace autopar::pipeline
