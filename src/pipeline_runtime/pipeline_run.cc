// Pipeline training steps, the SGD update and the --check (see pipeline_run.h).
#include "pipeline_runtime/pipeline_run.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "pipeline_runtime/stage_worker.h"
#include "pipeline_runtime/worker_setup.h"

namespace autopar::pipeline {
namespace {

constexpr int kLossTag = 1 << 13;
constexpr int kGradTagBase = 1 << 14;

// Which rank computes each param's gradient, and its id in the microbatch graph.
struct ParamOwner {
  NodeId micro_id = kNoNode;
  int rank = 0;
};
std::map<std::string, ParamOwner> param_owners(const Graph& micro, const PipelineSetup& setup) {
  std::map<std::string, ParamOwner> owners;
  for (const StageProgram& p : setup.programs) {
    for (NodeId prm : p.params) {
      owners[param_name(micro.node(prm))] = {prm, setup.lowered.stage_to_rank[static_cast<size_t>(p.stage)]};
    }
  }
  return owners;
}

struct Comparison {
  double max_error = 0, worst_ratio = 0;
  int32_t tensors = 0;
  void add(double error, double ref_scale, const CheckTolerance& tol) {
    max_error = std::max(max_error, error);
    worst_ratio = std::max(worst_ratio, error / (tol.atol + tol.rtol * ref_scale));
    ++tensors;
  }
};

// Rank 0 receives every tensor of `mine` (by param name) it does not hold
// and compares it with `want` (rank 0 only), adding to c. `tag_base` keeps the
// messages of two comparisons apart.
Status compare_owned(const std::map<std::string, ParamOwner>& owners, const Communicator& world,
                     const std::map<std::string, at::Tensor>& mine,
                     const std::map<std::string, at::Tensor>* want, int tag_base,
                     const CheckTolerance& tol, Comparison& c) {
  int k = 0;
  for (const auto& [name, owner] : owners) {
    const int tag = tag_base + k++;
    if (world.rank() != 0) {
      if (owner.rank != world.rank()) continue;
      const at::Tensor t = mine.at(name).contiguous();  // both ends in row-major order
      if (Status s = send_bytes_blocking(world, t.data_ptr(), static_cast<int64_t>(t.nbytes()), 0, tag); !s) return s;
      continue;
    }
    const at::Tensor& ref = want->at(name);
    at::Tensor got = owner.rank == 0 ? mine.at(name) : at::Tensor(ref.clone(at::MemoryFormat::Contiguous));
    if (owner.rank != 0) {
      if (Status s = recv_bytes_exact(world, got.data_ptr(), static_cast<int64_t>(got.nbytes()), owner.rank, tag); !s) {
        return s;
      }
    }
    c.add(got.sub(ref).abs().max().item<double>(), ref.abs().max().item<double>(), tol);
  }
  return ok_status();
}

// The verdict (worst error / tolerance) broadcast from rank 0 to every rank.
Status broadcast_verdict(const Communicator& world, Comparison& c) {
  double verdict[2] = {c.max_error, c.worst_ratio};
  if (Status s = world.broadcast(verdict, 2, DType::f64, 0); !s) return s;
  c.max_error = verdict[0];
  c.worst_ratio = verdict[1];
  return ok_status();
}

// Step check, before the optimizer: the loss and every gradient.
Expected<Comparison> compare_step(const Graph& micro, const PipelineSetup& setup,
                                  const Communicator& world,
                                  const std::map<std::string, at::Tensor>& grads, double loss,
                                  const Reference* ref, const CheckTolerance& tol) {
  Comparison c;
  if (Status s = compare_owned(param_owners(micro, setup), world, grads, ref ? &ref->grads : nullptr,
                               kGradTagBase, tol, c);
      !s) {
    return s.error();
  }
  if (world.rank() == 0) c.add(std::abs(loss - ref->loss), std::abs(ref->loss), tol);
  if (Status s = broadcast_verdict(world, c); !s) return s.error();
  return c;
}

// Step check, after the optimizer: every parameter.
Expected<Comparison> compare_params(const Graph& full, const Graph& micro, const PipelineSetup& setup,
                                    const Communicator& world, StageWorker& worker,
                                    const Reference* ref, const CheckTolerance& tol) {
  std::map<std::string, ParamOwner> owners = param_owners(micro, setup);
  std::map<std::string, at::Tensor> mine, want;
  for (const auto& [id, sum] : worker.grad_sums()) mine[param_name(micro.node(id))] = worker.param(id);
  if (ref) {
    for (NodeId id = 0; id < full.size(); ++id) {
      const Node& n = full.node(id);
      if (n.is_placeholder() && n.kind == PlaceholderKind::kParam) {
        want[param_name(n)] = ref->placeholders[static_cast<size_t>(id)];
      }
    }
  }
  Comparison c;
  const int tag_base = kGradTagBase + static_cast<int>(owners.size());
  if (Status s = compare_owned(owners, world, mine, ref ? &want : nullptr, tag_base, tol, c); !s) {
    return s.error();
  }
  if (Status s = broadcast_verdict(world, c); !s) return s.error();
  return c;
}

}  // namespace

double StepTiming::bubble() const {
  return makespan_s > 0 ? 1 - busy_s / (makespan_s * ranks) : 0;
}

namespace {

// The loss summed over microbatches divided by M (the mean loss over the full
// batch), sent to rank 0.
Expected<double> step_loss(const PipelineSetup& setup, const Communicator& world,
                           const StageWorker& worker) {
  const int last = setup.lowered.stage_to_rank.back();
  double loss = worker.loss_sum() / setup.lowered.num_microbatches;
  if (last != 0 && world.rank() == last) {
    if (Status s = send_bytes_blocking(world, &loss, sizeof loss, 0, kLossTag); !s) return s.error();
  }
  if (last != 0 && world.rank() == 0) {
    if (Status s = recv_bytes_exact(world, &loss, sizeof loss, last, kLossTag); !s) return s.error();
  }
  return loss;
}

Expected<StepTiming> step_timing(const Communicator& world, double step_s, double busy_s) {
  StepTiming t;
  t.ranks = world.size();
  Expected<double> makespan = world.max_over_ranks(step_s);
  if (!makespan) return makespan.error();
  t.makespan_s = *makespan;
  t.busy_s = busy_s;
  if (Status s = world.all_reduce_sum(&t.busy_s, 1, DType::f64); !s) return s.error();
  return t;
}

void note(PipelineRunResult& result, const Comparison& c) {
  result.max_error = std::max(result.max_error, c.max_error);
  result.worst_ratio = std::max(result.worst_ratio, c.worst_ratio);
}

// --check of one step: the loss and gradients (the worker's sums, already
// divided by M) before the optimizer, every parameter after both optimizers
// (this runs the worker's optimizer step).
Status check_step(const Graph& full, const Graph& micro, const PipelineSetup& setup,
                  const Communicator& world, StageWorker& worker, double loss, Reference* ref,
                  int64_t step, const PipelineRunOptions& o, PipelineRunResult& result) {
  if (ref) {
    if (Status s = reference_step(full, WorkerData{&full, o.seed}, setup.lowered.num_microbatches, *ref); !s) return s;
  }
  std::map<std::string, at::Tensor> grads;
  for (const auto& [id, sum] : worker.grad_sums()) grads[param_name(micro.node(id))] = sum;
  Expected<Comparison> c = compare_step(micro, setup, world, grads, loss, ref, o.tolerance);
  if (!c) return c.error();
  note(result, *c);
  if (world.rank() == 0) {
    fmt::print("check: step {}: loss {:.6f} vs {:.6f}, {} tensors, max abs error {:.3g}, "
               "worst error/tolerance {:.3g} (tolerance {:g} x max|ref| + {:g}): {}\n",
               step, loss, ref->loss, c->tensors, c->max_error, c->worst_ratio, o.tolerance.rtol,
               o.tolerance.atol, c->worst_ratio <= 1 ? "OK" : "MISMATCH");
  }
  if (ref) reference_update(full, *ref);
  if (Status s = worker.optimizer_step(); !s) return s;
  const CheckTolerance param_tol = parameter_tolerance(o.tolerance, o.optimizer, step);
  c = compare_params(full, micro, setup, world, worker, ref, param_tol);
  if (!c) return c.error();
  note(result, *c);
  if (world.rank() == 0) {
    fmt::print("params check: step {}: {} parameters after the optimizer step, max abs error {:.3g}, "
               "worst error/tolerance {:.3g}: {}\n",
               step, c->tensors, c->max_error, c->worst_ratio, c->worst_ratio <= 1 ? "OK" : "MISMATCH");
  }
  return ok_status();
}

// Every rank's measured peak beside every rank's prediction (each rank
// computes all predictions: a pure function of what every rank agrees on).
Status compare_memory(const Graph& micro, const PipelineSetup& setup, const Communicator& world,
                      const StageWorker& worker, const PipelineRunOptions& o,
                      PipelineRunResult& result) {
  double mine = static_cast<double>(worker.peak_bytes());
  result.peak_bytes.assign(static_cast<size_t>(world.size()), 0);
  if (Status s = world.all_gather(&mine, result.peak_bytes.data(), 1, DType::f64); !s) return s;
  PipelineMemoryInput input{&micro, &setup.stages, &setup.programs, &setup.lowered,
                            optimizer_bytes_per_element(o.optimizer.kind)};
  Expected<std::vector<RankMemory>> predicted = predict_pipeline_memory(input);
  if (!predicted) return make_error_like(predicted.error(), "memory model: {}", predicted.error().message);
  result.predicted = std::move(*predicted);
  std::vector<double> want;
  for (const RankMemory& m : result.predicted) want.push_back(static_cast<double>(m.peak_bytes));
  result.memory = check_peaks(result.peak_bytes, want, o.memory_tolerance);
  return ok_status();
}

}  // namespace

Expected<PipelineRunResult> run_pipeline_training(const Graph& full, const Graph& micro,
                                                  const PipelineSetup& setup,
                                                  const Communicator& world,
                                                  const PipelineRunOptions& o) {
  const int rank = world.rank();
  WholeTensorRunner runner(micro);
  Expected<std::unique_ptr<StageWorker>> made =
      make_stage_worker(micro, setup, world, runner, WorkerData{&full, o.seed}, o.optimizer);
  if (!made) return made.error();
  std::unique_ptr<StageWorker>& worker = *made;
  std::unique_ptr<Reference> ref;
  if (o.check && rank == 0) {
    Expected<Reference> made_ref = make_reference(full, WorkerData{&full, o.seed}, o.optimizer);
    if (!made_ref) return made_ref.error();
    ref = std::make_unique<Reference>(std::move(*made_ref));
  }
  PipelineRunResult result;
  for (int64_t step = 1; step <= o.steps; ++step) {
    auto start = std::chrono::steady_clock::now();
    if (Status s = worker->run_step(); !s) return s.error();
    double step_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    Expected<StepTiming> timing = step_timing(world, step_s, worker->busy_s());
    if (!timing) return timing.error();
    Expected<double> loss = step_loss(setup, world, *worker);
    if (!loss) return loss.error();
    if (rank == 0) fmt::print("step {} loss {:.6f}\n", step, *loss);
    if (Status s = worker->average_grads(setup.lowered.num_microbatches); !s) return s.error();
    if (o.check) {
      if (Status s = check_step(full, micro, setup, world, *worker, *loss, ref.get(), step, o, result); !s) {
        return s.error();
      }
    } else if (Status s = worker->optimizer_step(); !s) {
      return s.error();
    }
    worker->release_grads();
    std::fflush(stdout);
    result.losses.push_back(*loss);
    result.steps.push_back(*timing);
  }
  if (Status s = compare_memory(micro, setup, world, *worker, o, result); !s) return s.error();
  result.check_ok = result.worst_ratio <= 1 && (!o.check || result.memory.ok);
  return result;
}

}  // namespace autopar::pipeline
