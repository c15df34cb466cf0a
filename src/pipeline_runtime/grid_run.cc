// 3-D training steps and their --check (see grid_run.h).
#include "pipeline_runtime/grid_run.h"

#include <chrono>
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "pipeline_runtime/worker_setup.h"
#include "runtime/planned_node.h"
#include "runtime/shard_compare.h"

namespace autopar::pipeline {
namespace {

// What one step's check saw on this rank (a group leader's figures; zeros elsewhere).
struct GridComparison {
  double max_error = 0;
  int32_t tensors = 0, failed = 0;
  std::string worst;
  void record(const ShardComparison& s, const std::string& what) {
    max_error = std::max(max_error, s.max_error);
    ++tensors;
    if (!s.ok) {
      ++failed;
      if (worst.empty()) worst = what;
    }
  }
};

struct Checker {
  const Graph& ref_graph;   // the full batch's, or the microbatch graph
  const Graph& micro;
  const Plan& plan;
  const ShardedRunner& runner;
  const Communicator& world;
  const WorkerData data;
  int32_t microbatches;
  std::unique_ptr<Reference> ref;  // group leaders only
  std::map<std::string, NodeId> ref_params;

  bool leader() const { return runner.mesh().world().rank() == 0; }

  // Every rank's block of `tensors` (this rank's gradient sums or params, by
  // param id) against the reference's `want` by name.
  Status compare(const std::map<NodeId, at::Tensor>& tensors, const std::map<std::string, at::Tensor>& want,
                 const CheckTolerance& tol, const std::string& suffix, GridComparison& c) const {
    for (const auto& [id, local] : tensors) {
      const std::string name = param_name(micro.node(id));
      at::Tensor expect = leader() ? want.at(name) : at::Tensor();
      Expected<ShardComparison> s = compare_every_shard(local, micro.node(id).meta(),
                                                        planned_output_sharding(plan, id), expect, runner.mesh(), tol);
      if (!s) return make_error_like(s.error(), "checking {}: {}", name, s.error().message);
      if (leader()) c.record(*s, name + suffix);
    }
    return ok_status();
  }

  std::map<std::string, at::Tensor> ref_param_values() const {
    std::map<std::string, at::Tensor> out;
    for (const auto& [name, id] : ref_params) out[name] = ref->placeholders[static_cast<size_t>(id)];
    return out;
  }

  // The world's verdict on one comparison; rank 0 prints it.
  Expected<bool> combine(const GridComparison& c, const std::string& line) const {
    Expected<double> failed = world.sum_over_ranks(c.failed);
    Expected<double> tensors = world.sum_over_ranks(c.tensors);
    Expected<double> error = world.max_over_ranks(c.max_error);
    if (!failed || !tensors || !error) return make_error_of(ErrorKind::kRuntime, "combining the check's verdict failed");
    if (world.rank() == 0) {
      fmt::print("{}: {:.0f} tensors, every rank's block, max abs error {:.3g}: {}\n", line, *tensors, *error,
                 *failed == 0 ? "OK" : fmt::format("MISMATCH in {:.0f} (first on rank 0's group: {})", *failed,
                                                   c.worst.empty() ? "another group" : c.worst));
    }
    return *failed == 0;
  }
};

// The loss (the microbatches' mean) on every rank: the last group's leader has it.
Expected<double> step_loss(const PipelineSetup& setup, const Communicator& world, const Communicator& pipe,
                           const ShardedRunner& runner, const StageWorker& worker) {
  const bool holder = pipe.rank() == setup.lowered.stage_to_rank.back() && runner.mesh().world().rank() == 0;
  return world.sum_over_ranks(holder ? worker.loss_sum() / setup.lowered.num_microbatches : 0.0);
}

// --check of one step: gradients and loss, then (taking both optimizer steps)
// every parameter. False when anything differs.
Expected<bool> check_step(Checker& k, StageWorker& worker, double loss, int64_t step, const GridRunOptions& o,
                          double& max_error) {
  if (k.leader()) {
    if (Status s = reference_step(k.ref_graph, k.data, k.microbatches, *k.ref); !s) return s.error();
  }
  GridComparison grads;
  if (Status s = k.compare(worker.grad_sums(), k.leader() ? k.ref->grads : std::map<std::string, at::Tensor>{},
                           o.tolerance, "", grads);
      !s) {
    return s.error();
  }
  double ref_loss = k.leader() ? k.ref->loss : 0;
  if (k.world.rank() == 0) {
    const double error = std::abs(loss - ref_loss);
    grads.max_error = std::max(grads.max_error, error);
    ++grads.tensors;
    if (!(error <= o.tolerance.atol + o.tolerance.rtol * std::abs(ref_loss))) {
      ++grads.failed;
      grads.worst = "loss";
    }
  }
  max_error = std::max(max_error, grads.max_error);
  Expected<bool> grads_ok = k.combine(grads, fmt::format("check: step {}: loss {:.6f} vs {:.6f}, loss and gradients", step,
                                                         loss, ref_loss));
  if (!grads_ok) return grads_ok.error();
  if (k.leader()) reference_update(k.ref_graph, *k.ref);
  if (Status s = worker.optimizer_step(); !s) return s.error();
  std::map<NodeId, at::Tensor> params;
  for (const auto& [id, sum] : worker.grad_sums()) params[id] = worker.param(id);
  GridComparison after;
  const CheckTolerance param_tol = parameter_tolerance(o.tolerance, o.optimizer, step);
  if (Status s = k.compare(params, k.leader() ? k.ref_param_values() : std::map<std::string, at::Tensor>{}, param_tol,
                           " after the step", after);
      !s) {
    return s.error();
  }
  max_error = std::max(max_error, after.max_error);
  Expected<bool> params_ok =
      k.combine(after, fmt::format("params check: step {}: parameters after the optimizer step", step));
  if (!params_ok) return params_ok.error();
  return *grads_ok && *params_ok;
}

Expected<std::unique_ptr<Checker>> make_checker(const Graph* full, const Graph& micro, const Plan& plan,
                                                const PipelineSetup& setup, const Communicator& world,
                                                const ShardedRunner& runner, const GridRunOptions& o) {
  const Graph& ref_graph = full != nullptr ? *full : micro;
  auto k = std::unique_ptr<Checker>(new Checker{ref_graph, micro, plan, runner, world, WorkerData{full, o.seed},
                                                setup.lowered.num_microbatches, nullptr, {}});
  if (!k->leader()) return k;
  Expected<Reference> ref = make_reference(ref_graph, k->data, o.optimizer);
  if (!ref) return ref.error();
  k->ref = std::make_unique<Reference>(std::move(*ref));
  for (NodeId id = 0; id < ref_graph.size(); ++id) {
    const Node& n = ref_graph.node(id);
    if (n.is_placeholder() && n.kind == PlaceholderKind::kParam) k->ref_params[param_name(n)] = id;
  }
  return k;
}

}  // namespace

Expected<GridRunResult> run_grid_training(const Graph* full, const Graph& micro, const Plan& plan,
                                          const PipelineSetup& setup, const Communicator& world,
                                          const Communicator& pipe, ShardedRunner& runner,
                                          const GridRunOptions& o) {
  Expected<std::unique_ptr<StageWorker>> made =
      make_stage_worker(micro, setup, pipe, runner, WorkerData{full, o.seed}, o.optimizer);
  if (!made) return made.error();
  StageWorker& worker = **made;
  std::unique_ptr<Checker> checker;
  if (o.check) {
    Expected<std::unique_ptr<Checker>> k = make_checker(full, micro, plan, setup, world, runner, o);
    if (!k) return k.error();
    checker = std::move(*k);
  }
  GridRunResult result;
  for (int64_t step = 1; step <= o.steps; ++step) {
    auto start = std::chrono::steady_clock::now();
    if (Status s = worker.run_step(); !s) return s.error();
    if (Status s = worker.average_grads(setup.lowered.num_microbatches); !s) return s.error();
    double step_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    StepTiming timing;
    timing.ranks = world.size();
    Expected<double> makespan = world.max_over_ranks(step_s);
    Expected<double> busy = world.sum_over_ranks(worker.busy_s());
    if (!makespan || !busy) return make_error_of(ErrorKind::kRuntime, "gathering the step's timing failed");
    timing.makespan_s = *makespan;
    timing.busy_s = *busy;
    Expected<double> loss = step_loss(setup, world, pipe, runner, worker);
    if (!loss) return loss.error();
    if (world.rank() == 0) fmt::print("step {} loss {:.6f}\n", step, *loss);
    if (checker) {
      Expected<bool> ok = check_step(*checker, worker, *loss, step, o, result.max_error);
      if (!ok) return ok.error();
      result.check_ok = result.check_ok && *ok;
    } else if (Status s = worker.optimizer_step(); !s) {
      return s.error();
    }
    worker.release_grads();
    std::fflush(stdout);
    result.losses.push_back(*loss);
    result.steps.push_back(timing);
  }
  double mine = static_cast<double>(worker.peak_bytes());
  result.peak_bytes.assign(static_cast<size_t>(world.size()), 0);
  if (Status s = world.all_gather(&mine, result.peak_bytes.data(), 1, DType::f64); !s) return s.error();
  if (o.sizes != nullptr) {
    PipelineMemoryInput input{&micro, &setup.stages, &setup.programs, &setup.lowered,
                              optimizer_bytes_per_element(o.optimizer.kind), o.sizes};
    Expected<std::vector<RankMemory>> by_pipeline_rank = predict_pipeline_memory(input);
    if (!by_pipeline_rank) return make_error_like(by_pipeline_rank.error(),
        "memory model: {}", by_pipeline_rank.error().message);
    const int group = world.size() / setup.lowered.num_ranks;
    std::vector<double> want;
    for (int w = 0; w < world.size(); ++w) {
      result.predicted.push_back((*by_pipeline_rank)[static_cast<size_t>(w / group)]);
      want.push_back(static_cast<double>(result.predicted.back().peak_bytes));
    }
    result.memory = check_peaks(result.peak_bytes, want, o.memory_tolerance);
    if (o.check) result.check_ok = result.check_ok && result.memory.ok;
  }
  return result;
}

}  // namespace autopar::pipeline
