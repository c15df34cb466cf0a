#include "runtime/spmd_executor.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <limits>

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "memory/recompute.h"
#include "runtime/counter_rng.h"
#include "runtime/kernels.h"
#include "sharding/strategy.h"

namespace autopar {
namespace {

constexpr NodeId kKeptAllStep = std::numeric_limits<NodeId>::max();

}  // namespace

Expected<at::Tensor> local_slice(const at::Tensor& full, const Sharding& sharding,
                                 const SpmdMesh& mesh) {
  Expected<at::Tensor> shard = local_shard(full, sharding, mesh.mesh(), mesh.coordinate());
  if (!shard) return shard.error();
  return shard->contiguous().clone();  // own storage: the optimizer updates it in place
}

SpmdExecutor::SpmdExecutor(const Graph& graph, const Plan& plan, const SpmdMesh& mesh,
                           Tracer& tracer)
    : graph_(graph), plan_(plan), mesh_(mesh), tracer_(tracer), redist_(plan) {
  account_ = [this](const at::Tensor& x, bool held) {
    if (held) hold({x});
    else drop({x});
  };
  context_.graph = &graph_;
  context_.plan = &plan_;
  context_.redistributions = &redist_;
  context_.mesh = &mesh_;
  context_.tracer = &tracer_;
  context_.account = &account_;
  last_use_.assign(static_cast<size_t>(graph.size()), -1);
  for (NodeId v = 0; v < graph.size(); ++v) {
    for (NodeId u : graph.node(v).inputs) last_use_[static_cast<size_t>(u)] = v;
  }
  // The loss stays to the end; a gradient or buffer update until it is
  // reduced, right after its node (or its last reader, if later).
  paired_at_.resize(static_cast<size_t>(graph.size()));
  for (size_t k = 0; k < graph.outputs().size(); ++k) {
    const GraphOutput& g = graph.outputs()[k];
    NodeId& last = last_use_[static_cast<size_t>(g.node)];
    if (g.placeholder() == kNoNode || graph.node(g.node).is_placeholder()) {
      last = kKeptAllStep;
      continue;
    }
    if (last != kKeptAllStep) last = std::max(last, g.node);
    paired_at_[static_cast<size_t>(g.node)].push_back(k);
  }
  // A value nothing reads (and no output) goes right after its node runs, as
  // the memory model (liveness.h) lets it go; kept, it would be held, and
  // counted, until the next step overwrote it.
  for (NodeId v = 0; v < graph.size(); ++v) {
    if (last_use_[static_cast<size_t>(v)] < 0 && !graph.node(v).is_placeholder()) last_use_[static_cast<size_t>(v)] = v;
  }
  values_.resize(static_cast<size_t>(graph.size()));
  reduced_.resize(graph.outputs().size());
  plan_recomputation();
}

// Recomputation (memory/recompute.h): each recomputed root's re-run nodes are
// dropped after its window opens and run again before the node that closes it.
void SpmdExecutor::plan_recomputation() {
  drop_after_.assign(static_cast<size_t>(graph_.size()), {});
  rerun_before_.assign(static_cast<size_t>(graph_.size()), {});
  if (plan_.recompute.empty()) return;
  const RecomputeCandidates candidates = recompute_candidates_for(graph_, plan_.recompute);
  for (NodeId v = 0; v < graph_.size(); ++v) {
    if (!plan_.recompute[static_cast<size_t>(v)] || !candidates.is_candidate(v)) continue;
    const RecomputeWindow& w = candidates.window[static_cast<size_t>(v)];
    const std::vector<NodeId>& rerun = candidates.rerun[static_cast<size_t>(v)];
    auto& dropped = drop_after_[static_cast<size_t>(w.drop_after)];
    dropped.insert(dropped.end(), rerun.begin(), rerun.end());
    auto& restored = rerun_before_[static_cast<size_t>(w.restore_at)];
    restored.insert(restored.end(), rerun.begin(), rerun.end());
  }
  for (auto& list : rerun_before_) std::sort(list.begin(), list.end());  // producers first
}

// A re-run: the node's operands redistributed and its kernel run again, as in
// the forward, without the observer (node_check.h sees each node once).
Status SpmdExecutor::rerun_node(NodeId v) {
  const Node& node = graph_.node(v);
  std::vector<at::Tensor> held;
  for (int i = 0; i < static_cast<int>(node.inputs.size()); ++i) {
    NodeId u = node.inputs[static_cast<size_t>(i)];
    const std::vector<at::Tensor>& value = values_[static_cast<size_t>(u)];
    if (value.empty()) {
      return make_error_of(ErrorKind::kInternal, "recomputing {}: its input {} is no longer held", node.name,
                           graph_.node(u).name);
    }
    held.push_back(value[static_cast<size_t>(producer_output_index(graph_, v, i))]);
  }
  auto observer = std::move(context_.on_redistributed_input);
  context_.on_redistributed_input = nullptr;
  Expected<std::vector<at::Tensor>> outputs = run_planned_node(v, held, context_);
  context_.on_redistributed_input = std::move(observer);
  if (!outputs) return make_error_like(outputs.error(), "recomputing {}: {}", node.name, outputs.error().message);
  values_[static_cast<size_t>(v)] = std::move(*outputs);
  return ok_status();
}

const Sharding& SpmdExecutor::output_sharding(NodeId v, int o) const {
  return planned_output_sharding(plan_, v, o);
}

Status SpmdExecutor::load(const std::vector<at::Tensor>& full_placeholders) {
  for (NodeId v = 0; v < graph_.size(); ++v) {
    if (!graph_.node(v).is_placeholder()) continue;
    Expected<at::Tensor> shard =
        local_slice(full_placeholders[static_cast<size_t>(v)], output_sharding(v), mesh_);
    if (!shard) return make_error_like(shard.error(), "placeholder {}: {}", graph_.node(v).name, shard.error().message);
    values_[static_cast<size_t>(v)] = {std::move(*shard)};
    hold(values_[static_cast<size_t>(v)]);
  }
  params_.clear();
  for (const GraphOutput& g : graph_.outputs()) {
    if (g.kind == OutputKind::kGradient) params_.push_back(values_[static_cast<size_t>(g.param)][0]);
  }
  return ok_status();
}

Status SpmdExecutor::run_node(NodeId v, const FaultInjection& faults) {
  const Node& node = graph_.node(v);
  const int rank = mesh_.world().rank();
  if (rank == faults.rank && node.name == faults.kill_at_node) {
    fmt::print(stderr, "autopar: rank {} of {}: killed by SIGKILL at node {} (--kill-at-node)\n", rank,
               mesh_.world().size(), node.name);
    std::fflush(stderr);
    std::raise(SIGKILL);
  }
  if (rank == faults.rank && node.name == faults.fail_at_node) {
    return make_error_of(ErrorKind::kRuntime, "injected failure (--fail-at-node)");
  }
  std::vector<at::Tensor> held;
  for (int i = 0; i < static_cast<int>(node.inputs.size()); ++i) {
    NodeId u = node.inputs[static_cast<size_t>(i)];
    held.push_back(values_[static_cast<size_t>(u)][static_cast<size_t>(producer_output_index(graph_, v, i))]);
  }
  Expected<std::vector<at::Tensor>> outputs = run_planned_node(v, held, context_);
  if (!outputs) return outputs.error();
  if (rank == faults.rank && node.name == faults.corrupt_at_node) {
    at::Tensor wrong = (*outputs)[0] + 1;
    drop({(*outputs)[0]});
    hold({wrong});
    (*outputs)[0] = std::move(wrong);
  }
  values_[static_cast<size_t>(v)] = std::move(*outputs);
  if (observer_.outputs) {
    if (Status st = observer_.outputs(v, values_[static_cast<size_t>(v)]); !st) return st;
  }
  if (Status st = reduce_outputs_of(v); !st) return st;
  for (NodeId u : node.inputs) {
    if (last_use_[static_cast<size_t>(u)] == v && !graph_.node(u).is_placeholder()) release(u);
  }
  if (last_use_[static_cast<size_t>(v)] == v) release(v);  // reduced, and read by nothing
  return ok_status();
}

Status SpmdExecutor::reduce_outputs_of(NodeId v) {
  for (size_t k : paired_at_[static_cast<size_t>(v)]) {
    Expected<at::Tensor> reduced = paired_output(graph_.outputs()[k]);
    if (!reduced) return reduced.error();
    hold({*reduced});
    reduced_[k] = std::move(*reduced);
  }
  return ok_status();
}

void SpmdExecutor::release(NodeId v) {
  drop(values_[static_cast<size_t>(v)]);
  values_[static_cast<size_t>(v)].clear();
}

void SpmdExecutor::hold(const std::vector<at::Tensor>& values) {
  int64_t before = storages_.bytes();
  storages_.add(values);
  track(before);
}

void SpmdExecutor::drop(const std::vector<at::Tensor>& values) {
  int64_t before = storages_.bytes();
  storages_.remove(values);
  track(before);
}

void SpmdExecutor::track(int64_t bytes_before) {
  node_peak_ = std::max(node_peak_, static_cast<double>(storages_.bytes()));
  int64_t change = storages_.bytes() - bytes_before;
  if (change > 0) tracer_.hold(static_cast<double>(change));
  if (change < 0) tracer_.release(static_cast<double>(-change));
}

Expected<SpmdStepResult> SpmdExecutor::step(const FaultInjection& faults) {
  ++steps_run_;
  context_.random_key = step_random_key(random_seed_, steps_run_);
  node_peaks_.assign(static_cast<size_t>(graph_.size()), static_cast<double>(storages_.bytes()));
  // Step 1 is the first forward up to the loss (fault_injection.h).
  const bool first = steps_run_ == 1;
  const NodeId loss = loss_position(graph_);
  if (Status s = enter_phase(first ? JobPhase::kFirstForward : JobPhase::kTraining); !s) return s.error();
  for (NodeId v = 0; v < graph_.size(); ++v) {
    if (graph_.node(v).is_placeholder()) continue;
    node_peak_ = static_cast<double>(storages_.bytes());
    Status s = ok_status();
    for (NodeId x : rerun_before_[static_cast<size_t>(v)])
      if (s) s = rerun_node(x);
    if (s) s = run_node(v, faults);
    for (NodeId x : rerun_before_[static_cast<size_t>(v)])  // re-run only for what is made of it
      if (last_use_[static_cast<size_t>(x)] <= v && !values_[static_cast<size_t>(x)].empty()) release(x);
    for (NodeId x : drop_after_[static_cast<size_t>(v)])
      if (!values_[static_cast<size_t>(x)].empty()) release(x);
    node_peaks_[static_cast<size_t>(v)] = node_peak_;
    if (s && first && v == loss) s = enter_phase(JobPhase::kTraining);
    if (!s) {
      return make_error_like(s.error(), "node {} ({}): {}", graph_.node(v).name, node_op_name(graph_.node(v)),
                        s.error().message);
    }
  }
  return finish();
}

Expected<at::Tensor> SpmdExecutor::paired_output(const GraphOutput& g) {
  const at::Tensor& t = values_[static_cast<size_t>(g.node)][0];
  return redistribute_planned(t, g.placeholder(), -1, graph_.node(g.node).name, context_);
}

Expected<SpmdStepResult> SpmdExecutor::finish() {
  SpmdStepResult result;
  for (size_t k = 0; k < graph_.outputs().size(); ++k) {
    const GraphOutput& g = graph_.outputs()[k];
    if (g.kind == OutputKind::kLoss) {
      result.loss = values_[static_cast<size_t>(g.node)][0];
      continue;
    }
    if (!reduced_[k].defined()) {  // a placeholder passed through as an output
      Expected<at::Tensor> value = paired_output(g);
      if (!value) return value.error();
      reduced_[k] = std::move(*value);
    }
    (g.kind == OutputKind::kGradient ? result.grads : result.buffers).push_back(reduced_[k]);
  }
  // The buffers take their new values only now: a buffer may be read after
  // the node that computes its update.
  size_t b = 0;
  for (const GraphOutput& g : graph_.outputs()) {
    if (g.kind != OutputKind::kBuffer) continue;
    at::Tensor& buffer = values_[static_cast<size_t>(g.buffer)][0];
    buffer.copy_(result.buffers[b++]);
  }
  for (const GraphOutput& g : graph_.outputs()) {
    if (!values_[static_cast<size_t>(g.node)].empty() && !graph_.node(g.node).is_placeholder()) {
      release(g.node);
    }
  }
  // The reduced copies go to the optimizer; the step's accounting ends here.
  drop(reduced_);
  for (at::Tensor& t : reduced_) t = at::Tensor();
  return result;
}

}  // namespace autopar
