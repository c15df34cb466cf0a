#include "pipeline_runtime/worker_setup.h"

#include <set>

#include "pipeline_runtime/send_release.h"
#include "runtime/init.h"
#include "runtime/local_executor.h"

namespace autopar::pipeline {

std::string param_name(const Node& n) { return n.target.empty() ? n.name : n.target; }

Expected<at::Tensor> microbatch_input(const Graph& graph, NodeId id, uint64_t seed, int32_t k) {
  // splitmix64's increment keeps the microbatches' streams apart; k = 0 is the seed itself.
  const uint64_t mixed = seed + static_cast<uint64_t>(k) * 0x9e3779b97f4a7c15ull;
  return init_placeholder(graph, id, InitOptions{.seed = mixed});
}

namespace {

// Microbatch slices of every graph input in `wanted`, each its own storage,
// cut to this rank's part.
Expected<std::vector<std::vector<at::Tensor>>> microbatch_inputs(const Graph& micro, const std::set<NodeId>& wanted,
                                                                 int32_t m, const NodeRunner& runner,
                                                                 const WorkerData& data) {
  std::vector<std::vector<at::Tensor>> inputs(static_cast<size_t>(m),
                                              std::vector<at::Tensor>(static_cast<size_t>(micro.size())));
  for (NodeId small : wanted) {
    at::Tensor whole;
    if (data.full != nullptr) {
      std::optional<NodeId> id = data.full->find(micro.node(small).name);
      if (!id) return make_error("input {} of the microbatch model is missing at full size", micro.node(small).name);
      Expected<at::Tensor> value = init_placeholder(*data.full, *id, InitOptions{.seed = data.seed});
      if (!value) return value.error();
      whole = std::move(*value);
    }
    for (int32_t mb = 0; mb < m; ++mb) {
      at::Tensor slice;
      if (data.full != nullptr) {
        const int64_t rows = whole.size(0) / m;
        slice = whole.narrow(0, mb * rows, rows);
      } else {
        Expected<at::Tensor> drawn = microbatch_input(micro, small, data.seed, mb);
        if (!drawn) return drawn.error();
        slice = std::move(*drawn);
      }
      Expected<at::Tensor> local = runner.local_value(small, slice.clone(at::MemoryFormat::Contiguous));
      if (!local) return make_error_like(local.error(), "input {}: {}", micro.node(small).name, local.error().message);
      inputs[static_cast<size_t>(mb)][static_cast<size_t>(small)] = std::move(*local);
    }
  }
  return inputs;
}

}  // namespace

Expected<std::unique_ptr<StageWorker>> make_stage_worker(const Graph& micro, const PipelineSetup& setup,
                                                         const Communicator& pipe, NodeRunner& runner,
                                                         const WorkerData& data, const OptimizerConfig& optimizer) {
  const int rank = pipe.rank();
  const InitOptions init{.seed = data.seed};
  std::vector<at::Tensor> placeholders(static_cast<size_t>(micro.size()));
  std::set<NodeId> inputs_read;
  bool loss_rank = false;
  auto place = [&](NodeId id) -> Status {
    Expected<at::Tensor> v = init_placeholder(micro, id, init);
    if (!v) return v.error();
    Expected<at::Tensor> local = runner.local_value(id, *v);
    if (!local) return make_error_like(local.error(), "{}: {}", micro.node(id).name, local.error().message);
    placeholders[static_cast<size_t>(id)] = std::move(*local);
    return ok_status();
  };
  for (StageIdx s : setup.lowered.stages_of(rank)) {
    loss_rank = loss_rank || setup.programs[static_cast<size_t>(s)].loss != kNoNode;
    for (NodeId prm : setup.stages[static_cast<size_t>(s)].params) {
      if (Status ok = place(prm); !ok) return ok.error();
    }
    for (const Value& v : setup.stages[static_cast<size_t>(s)].inputs) {
      if (micro.node(v.node).is_placeholder()) inputs_read.insert(v.node);
    }
  }
  for (NodeId id = 0; id < micro.size() && loss_rank; ++id) {
    if (micro.node(id).is_placeholder() && micro.node(id).kind == PlaceholderKind::kTangent) {
      if (Status ok = place(id); !ok) return ok.error();
    }
  }
  Expected<std::vector<std::vector<at::Tensor>>> inputs =
      microbatch_inputs(micro, inputs_read, setup.lowered.num_microbatches, runner, data);
  if (!inputs) return inputs.error();
  Expected<std::vector<std::vector<int32_t>>> release = send_release_points(setup.lowered);
  if (!release) return release.error();
  return std::make_unique<StageWorker>(micro, setup, pipe, runner, std::move(placeholders), std::move(*inputs),
                                       std::move((*release)[static_cast<size_t>(rank)]), optimizer);
}

Expected<Reference> make_reference(const Graph& graph, const WorkerData& data, const OptimizerConfig& optimizer) {
  Expected<std::vector<at::Tensor>> init = init_placeholders(graph, InitOptions{.seed = data.seed});
  if (!init) return init.error();
  return Reference{std::move(*init), OptimizerState(optimizer), 0, {}};
}

namespace {

// One run of `graph` on the reference's placeholders, `inputs` replacing the
// input placeholders that it holds; the loss and gradients added to `ref`,
// scaled by `weight`.
Status run_reference(const Graph& graph, const std::map<NodeId, at::Tensor>& inputs, double weight, Reference& ref) {
  NodeValues values(static_cast<size_t>(graph.size()));
  for (NodeId id = 0; id < graph.size(); ++id) {
    if (!graph.node(id).is_placeholder()) continue;
    auto given = inputs.find(id);
    values[static_cast<size_t>(id)] = {given != inputs.end() ? given->second : ref.placeholders[static_cast<size_t>(id)]};
  }
  Expected<ExecuteStats> stats = execute_nodes(graph, values);
  if (!stats) return make_error_like(stats.error(), "reference run: {}", stats.error().message);
  for (const GraphOutput& out : graph.outputs()) {
    const at::Tensor& v = values[static_cast<size_t>(out.node)].at(0);
    if (out.kind == OutputKind::kLoss) {
      ref.loss += weight * v.item<double>();
    } else if (out.kind == OutputKind::kGradient) {
      at::Tensor& sum = ref.grads[param_name(graph.node(out.param))];
      at::Tensor scaled = v.mul(weight);
      sum = sum.defined() ? sum.add(scaled) : scaled;
    }
  }
  return ok_status();
}

}  // namespace

Status reference_step(const Graph& graph, const WorkerData& data, int32_t microbatches, Reference& ref) {
  ref.loss = 0;
  ref.grads.clear();
  if (data.full != nullptr) return run_reference(graph, {}, 1.0, ref);
  for (int32_t k = 0; k < microbatches; ++k) {
    std::map<NodeId, at::Tensor> inputs;
    for (NodeId id = 0; id < graph.size(); ++id) {
      if (!graph.node(id).is_placeholder() || graph.node(id).kind != PlaceholderKind::kInput) continue;
      Expected<at::Tensor> v = microbatch_input(graph, id, data.seed, k);
      if (!v) return v.error();
      inputs.emplace(id, std::move(*v));
    }
    if (Status s = run_reference(graph, inputs, 1.0 / microbatches, ref); !s) return s;
  }
  return ok_status();
}

void reference_update(const Graph& graph, Reference& ref) {
  std::vector<at::Tensor> params, grads;
  for (NodeId id = 0; id < graph.size(); ++id) {
    const Node& n = graph.node(id);
    if (!n.is_placeholder() || n.kind != PlaceholderKind::kParam) continue;
    params.push_back(ref.placeholders[static_cast<size_t>(id)]);
    grads.push_back(ref.grads.at(param_name(n)));
  }
  ref.optimizer.step(params, grads);
}

}  // namespace autopar::pipeline
