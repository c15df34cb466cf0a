// Op-call calibration (see calibrate_ops.h).
#include "runtime/calibrate_ops.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <unordered_set>
#include <vector>

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "cost/compute_cost.h"
#include "runtime/kernels.h"
#include "runtime/optimizer.h"
#include "sharding/strategy.h"

namespace autopar {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct LocalCall {
  std::string key;
  NodeId node = kNoNode;
  std::optional<Optimizer> update;  // set: the optimizer's update of parameter `node`
  GradLayout grad = GradLayout::kContiguous;  // an update's gradient, as the runtime hands it over
  std::vector<TensorMeta> inputs, outputs;
  std::vector<double> times;  // one per round that ran it
  bool failed = false;
};

// The distinct local calls of every node's strategies, in node order.
Expected<std::vector<LocalCall>> distinct_calls(const Graph& graph, const DeviceMesh& mesh) {
  Expected<StrategyGraph> sg = build_strategy_graph(graph, mesh, HardwareProfile{});
  if (!sg) return sg.error();
  std::vector<LocalCall> calls;
  std::unordered_set<std::string> seen;
  for (NodeId v = 0; v < graph.size(); ++v) {
    const Node& node = graph.node(v);
    const NodeStrategies& ns = sg->nodes[static_cast<size_t>(v)];
    if (node.is_placeholder() && node.kind == PlaceholderKind::kParam) {
      GradLayout grad = gradient_layout(graph, v);
      for (StrategyIdx s = 0; s < ns.size(); ++s) {
        TensorMeta local{local_shape(node.outputs[0].shape, ns.output(s, 0), mesh), node.outputs[0].dtype};
        for (Optimizer optimizer : {Optimizer::kAdamW, Optimizer::kSgd}) {
          LocalCall call;
          call.node = v;
          call.update = optimizer;
          call.inputs = {local};
          call.grad = grad;
          call.key = update_key(optimizer, local, grad);
          if (seen.insert(call.key).second) calls.push_back(std::move(call));
        }
      }
    }
    if (op_def(node.op).has(kStructural)) continue;
    for (StrategyIdx s = 0; s < ns.size(); ++s) {
      LocalCall call;
      call.node = v;
      std::vector<std::vector<TensorMeta>> wrapped;
      for (int i = 0; i < static_cast<int>(node.inputs.size()); ++i) {
        const TensorMeta& full = input_meta(graph, v, i);
        call.inputs.push_back({local_shape(full.shape, ns.input(s, i), mesh), full.dtype});
        wrapped.push_back({call.inputs.back()});
      }
      for (size_t o = 0; o < node.outputs.size(); ++o) {
        call.outputs.push_back({local_shape(node.outputs[o].shape, ns.output(s, static_cast<int>(o)), mesh),
                                node.outputs[o].dtype});
      }
      std::vector<const std::vector<TensorMeta>*> in_ptrs;
      for (const auto& m : wrapped) in_ptrs.push_back(&m);
      call.key = op_call_key(node_op_name(node), OpCall{in_ptrs, node.attrs}, call.outputs);
      if (seen.insert(call.key).second) calls.push_back(std::move(call));
    }
  }
  return calls;
}

at::Tensor made_up_input(const TensorMeta& meta) {
  at::TensorOptions options = at::TensorOptions().dtype(to_scalar_type(meta.dtype));
  if (is_floating(meta.dtype) || is_complex(meta.dtype)) return at::randn(meta.shape, options);
  return at::zeros(meta.shape, options);
}

// What a call runs on: its made-up inputs; for an update, the parameter, its
// gradient and the optimizer's state.
struct CallData {
  std::vector<at::Tensor> inputs;
  std::vector<at::Tensor> param, grad;
  std::optional<OptimizerState> optimizer;
};

CallData prepare(const LocalCall& call) {
  CallData data;
  if (call.update) {
    data.param = {made_up_input(call.inputs[0])};
    if (call.grad == GradLayout::kTransposed) {  // the same shape, its dims stored in reverse order
      TensorMeta reversed = call.inputs[0];
      std::reverse(reversed.shape.begin(), reversed.shape.end());
      std::vector<int64_t> dims(reversed.shape.size());
      for (size_t d = 0; d < dims.size(); ++d) dims[d] = static_cast<int64_t>(dims.size() - 1 - d);
      data.grad = {made_up_input(reversed).permute(dims)};
    } else {
      data.grad = {made_up_input(call.inputs[0])};
    }
    OptimizerConfig config;
    config.kind = *call.update;
    data.optimizer.emplace(config);
    data.optimizer->allocate(data.param);
    return data;
  }
  for (const TensorMeta& m : call.inputs) data.inputs.push_back(made_up_input(m));
  return data;
}

// The call itself, untimed or timed.
Expected<std::vector<at::Tensor>> call_once(const Graph& graph, const LocalCall& call, CallData& data) {
  if (call.update) {
    data.optimizer->step(data.param, data.grad);
    return std::vector<at::Tensor>{};
  }
  KernelContext context;
  context.random_key = 1;
  return run_kernel(graph.node(call.node), data.inputs, call.outputs, context);
}

// Twice the core's own last private cache (L2), or 2 MiB when the system
// does not say: writing that much pushes a call's operands out of L1 and L2.
at::Tensor private_cache_evictor() {
  long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  const int64_t bytes = 2 * (l2 > 0 ? static_cast<int64_t>(l2) : int64_t{1} << 20);
  return at::empty({bytes / 4}, at::kFloat);
}

// One timed call, all ranks starting together; with warm inputs, after an
// untimed call on the same inputs and the core's private caches overwritten,
// so the operands wait in the last-level cache, as a step's do.
Status run_once(const Graph& graph, LocalCall& call, CallData& data, const Communicator& comm, OpInputs where,
                at::Tensor& evictor) {
  if (where == OpInputs::kWarm) {
    if (!call_once(graph, call, data)) call.failed = true;  // the same on every rank: it depends on the shapes alone
    evictor.fill_(1.0f);
    // Activations come straight from the ops before: read again, they are
    // back near the core; parameters wait in the last-level cache.
    if (!call.update) {
      const Node& node = graph.node(call.node);
      for (size_t i = 0; i < data.inputs.size() && i < node.inputs.size(); ++i) {
        const Node& producer = graph.node(node.inputs[i]);
        const bool weight = producer.is_placeholder() && (producer.kind == PlaceholderKind::kParam ||
                                                          producer.kind == PlaceholderKind::kBuffer);
        if (!weight && data.inputs[i].numel() > 0) data.inputs[i].sum();
      }
    }
  }
  if (Status s = comm.barrier(); !s) return s;
  if (call.failed) return ok_status();
  Clock::time_point start = Clock::now();
  Expected<std::vector<at::Tensor>> out = call_once(graph, call, data);
  double t = seconds_since(start);
  if (!out) {
    call.failed = true;  // the same on every rank: it depends on the inputs' shapes alone
    return ok_status();
  }
  call.times.push_back(t);
  return ok_status();
}

}  // namespace

Expected<OpCallTimes> measure_op_calls(const Graph& graph, const DeviceMesh& mesh, const Communicator& comm,
                                       OpInputs inputs, bool quick) {
  Expected<std::vector<LocalCall>> calls = distinct_calls(graph, mesh);
  if (!calls) return calls.error();
  Clock::time_point start = Clock::now();
  // Every call's inputs are made once, before the rounds: by its turn (cold)
  // they have left the near caches, or (warm) an untimed call brings them back.
  std::vector<CallData> data;
  for (const LocalCall& call : *calls) data.push_back(prepare(call));
  at::Tensor evictor = private_cache_evictor();
  // At least 7 timed rounds, more while they take under a second (a small
  // graph's calls are short and their medians steadier over more rounds), at
  // most 41; every rank agrees through the slowest rank's clock. --quick
  // keeps a median of at least 3 (one round is one sample, and a busy
  // neighbour decides it).
  const int min_rounds = quick ? 3 : 7, max_rounds = quick ? 9 : 41;
  const double enough_s = quick ? 0.1 : 1.0;
  for (int round = 0;; ++round) {  // round 0 warms up
    Clock::time_point round_start = Clock::now();
    for (size_t c = 0; c < calls->size(); ++c) {
      if ((*calls)[c].failed) continue;
      if (Status s = run_once(graph, (*calls)[c], data[c], comm, inputs, evictor); !s) return s.error();
    }
    if (round == 0) {
      for (LocalCall& call : *calls) call.times.clear();
      start = Clock::now();
      continue;
    }
    Expected<double> elapsed = comm.max_over_ranks(seconds_since(start));
    if (!elapsed) return elapsed.error();
    if (comm.rank() == 0 && (round % 7 == 0 || seconds_since(round_start) > 0.5)) {
      fmt::print(stderr, "calibrate: ops: round {}: {} calls ({:.1f} s)\n", round, calls->size(), *elapsed);
    }
    if (round >= max_rounds || (round >= min_rounds && *elapsed >= enough_s)) break;
  }
  OpCallTimes result;
  for (LocalCall& call : *calls) {
    double median = 0, best = 0;
    if (!call.failed && !call.times.empty()) {
      std::nth_element(call.times.begin(), call.times.begin() + static_cast<ptrdiff_t>(call.times.size() / 2),
                       call.times.end());
      median = call.times[call.times.size() / 2];
      best = *std::min_element(call.times.begin(), call.times.end());
    }
    Expected<double> slowest = comm.max_over_ranks(median);
    if (!slowest) return slowest.error();
    Expected<double> slowest_best = comm.max_over_ranks(best);
    if (!slowest_best) return slowest_best.error();
    if (call.failed) {
      if (result.failed++ == 0) result.first_failure = call.key;
      continue;
    }
    result.seconds.emplace(call.key, *slowest);
    result.best_seconds.emplace(call.key, *slowest_best);
  }
  return result;
}

}  // namespace autopar
