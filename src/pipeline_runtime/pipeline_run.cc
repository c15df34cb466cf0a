// Pipeline training steps, the SGD update and the --check (see pipeline_run.h).
#include "pipeline_runtime/pipeline_run.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include <fmt/format.h>

#include "pipeline_runtime/stage_worker.h"
#include "runtime/init.h"
#include "runtime/local_executor.h"

namespace autopar::pipeline {
namespace {

constexpr int kLossTag = 1 << 13;
constexpr int kGradTagBase = 1 << 14;

std::string param_name(const Node& n) { return n.target.empty() ? n.name : n.target; }

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

// The rank's params, buffers and tangent, and each microbatch's slice of the
// full batch's inputs, all from the seed.
Expected<StageWorker> make_worker(const Graph& full, const Graph& micro, const PipelineSetup& setup,
                                  int rank, uint64_t seed) {
  const InitOptions init{.seed = seed};
  std::vector<at::Tensor> placeholders(static_cast<size_t>(micro.size()));
  for (StageIdx s : setup.lowered.stages_of(rank)) {
    for (NodeId prm : setup.stages[static_cast<size_t>(s)].params) {
      Expected<at::Tensor> v = init_placeholder(micro, prm, init);
      if (!v) return v.error();
      placeholders[static_cast<size_t>(prm)] = *v;
    }
  }
  for (NodeId id = 0; id < micro.size(); ++id) {
    if (micro.node(id).is_placeholder() && micro.node(id).kind == PlaceholderKind::kTangent) {
      Expected<at::Tensor> v = init_placeholder(micro, id, init);
      if (!v) return v.error();
      placeholders[static_cast<size_t>(id)] = *v;
    }
  }
  const int32_t m = setup.lowered.num_microbatches;
  std::vector<std::vector<at::Tensor>> inputs(static_cast<size_t>(m),
                                              std::vector<at::Tensor>(static_cast<size_t>(micro.size())));
  for (NodeId id = 0; id < full.size(); ++id) {
    const Node& n = full.node(id);
    if (!n.is_placeholder() || n.kind != PlaceholderKind::kInput) continue;
    std::optional<NodeId> small = micro.find(n.name);
    if (!small) return make_error("input {} of the full model is missing at microbatch size", n.name);
    Expected<at::Tensor> whole = init_placeholder(full, id, init);
    if (!whole) return whole.error();
    const int64_t rows = whole->size(0) / m;
    for (int32_t mb = 0; mb < m; ++mb) {
      inputs[static_cast<size_t>(mb)][static_cast<size_t>(*small)] =
          whole->narrow(0, mb * rows, rows).contiguous();
    }
  }
  return StageWorker(micro, setup, rank, std::move(placeholders), std::move(inputs));
}

// The single-process reference on rank 0: every placeholder of the full graph.
struct Reference {
  std::vector<at::Tensor> placeholders;
  double loss = 0;
  std::map<std::string, at::Tensor> grads;
};

Status reference_step(const Graph& full, Reference& ref) {
  NodeValues values(static_cast<size_t>(full.size()));
  for (NodeId id = 0; id < full.size(); ++id) {
    if (full.node(id).is_placeholder()) values[static_cast<size_t>(id)] = {ref.placeholders[static_cast<size_t>(id)]};
  }
  Expected<ExecuteStats> stats = execute_nodes(full, values);
  if (!stats) return make_error("reference run: {}", stats.error().message);
  ref.grads.clear();
  for (const GraphOutput& out : full.outputs()) {
    const at::Tensor& v = values[static_cast<size_t>(out.node)].at(0);
    if (out.kind == OutputKind::kLoss) {
      ref.loss = v.item<double>();
    } else {
      ref.grads[param_name(full.node(out.param))] = v;
    }
  }
  return ok_status();
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
      const at::Tensor& t = mine.at(name);
      if (Status s = send_bytes_blocking(t.data_ptr(), static_cast<int64_t>(t.nbytes()), 0, tag); !s) return s;
      continue;
    }
    const at::Tensor& ref = want->at(name);
    at::Tensor got = owner.rank == 0 ? mine.at(name) : at::Tensor(ref.clone());
    if (owner.rank != 0) {
      if (Status s = recv_bytes_exact(got.data_ptr(), static_cast<int64_t>(got.nbytes()), owner.rank, tag); !s) {
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

// One step on this rank: the action list, then the sends completed.
Status run_actions(const PipelineSetup& setup, int rank, StageWorker& worker) {
  worker.reset_step();
  for (const Action& a : setup.lowered.ranks[static_cast<size_t>(rank)]) {
    if (Status s = worker.run(a); !s) return s;
  }
  return worker.finish_step();
}

// Gradients summed over microbatches divided by M (mean loss over the full
// batch), by param name; the loss likewise, sent to rank 0.
Expected<double> step_loss(const PipelineSetup& setup, const Communicator& world,
                           const StageWorker& worker) {
  const int last = setup.lowered.stage_to_rank.back();
  double loss = worker.loss_sum() / setup.lowered.num_microbatches;
  if (last != 0 && world.rank() == last) {
    if (Status s = send_bytes_blocking(&loss, sizeof loss, 0, kLossTag); !s) return s.error();
  }
  if (last != 0 && world.rank() == 0) {
    if (Status s = recv_bytes_exact(&loss, sizeof loss, last, kLossTag); !s) return s.error();
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

void sgd(at::Tensor& param, const at::Tensor& grad, double lr) { param.sub_(grad.mul(lr)); }

}  // namespace

Expected<PipelineRunResult> run_pipeline_training(const Graph& full, const Graph& micro,
                                                  const PipelineSetup& setup,
                                                  const Communicator& world,
                                                  const PipelineRunOptions& o) {
  const int rank = world.rank();
  Expected<StageWorker> worker = make_worker(full, micro, setup, rank, o.seed);
  if (!worker) return worker.error();
  std::unique_ptr<Reference> ref;
  if (o.check && rank == 0) {
    Expected<std::vector<at::Tensor>> init = init_placeholders(full, InitOptions{.seed = o.seed});
    if (!init) return init.error();
    ref = std::make_unique<Reference>(Reference{std::move(*init), 0, {}});
  }
  PipelineRunResult result;
  for (int64_t step = 1; step <= o.steps; ++step) {
    auto start = std::chrono::steady_clock::now();
    if (Status s = run_actions(setup, rank, *worker); !s) return s.error();
    double step_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    Expected<StepTiming> timing = step_timing(world, step_s, worker->busy_s());
    if (!timing) return timing.error();
    Expected<double> loss = step_loss(setup, world, *worker);
    if (!loss) return loss.error();
    std::map<std::string, at::Tensor> grads;
    for (const auto& [id, sum] : worker->grad_sums()) {
      grads[param_name(micro.node(id))] = sum.div(setup.lowered.num_microbatches);
    }
    if (rank == 0) fmt::print("step {} loss {:.6f}\n", step, *loss);
    if (o.check) {
      if (ref) {
        if (Status s = reference_step(full, *ref); !s) return s.error();
      }
      Expected<Comparison> c =
          compare_step(micro, setup, world, grads, *loss, ref.get(), o.tolerance);
      if (!c) return c.error();
      result.max_error = std::max(result.max_error, c->max_error);
      result.worst_ratio = std::max(result.worst_ratio, c->worst_ratio);
      if (rank == 0) {
        fmt::print("check: step {}: loss {:.6f} vs {:.6f}, {} tensors, max abs error {:.3g}, "
                   "worst error/tolerance {:.3g} (tolerance {:g} x max|ref| + {:g}): {}\n",
                   step, *loss, ref->loss, c->tensors, c->max_error, c->worst_ratio,
                   o.tolerance.rtol, o.tolerance.atol, c->worst_ratio <= 1 ? "OK" : "MISMATCH");
      }
      if (ref) {
        for (NodeId id = 0; id < full.size(); ++id) {
          const Node& n = full.node(id);
          if (n.is_placeholder() && n.kind == PlaceholderKind::kParam) {
            sgd(ref->placeholders[static_cast<size_t>(id)], ref->grads.at(param_name(n)), o.lr);
          }
        }
      }
    }
    for (const auto& [id, sum] : worker->grad_sums()) {
      sgd(worker->param(id), grads.at(param_name(micro.node(id))), o.lr);
    }
    if (o.check) {
      Expected<Comparison> c = compare_params(full, micro, setup, world, *worker, ref.get(), o.tolerance);
      if (!c) return c.error();
      result.max_error = std::max(result.max_error, c->max_error);
      result.worst_ratio = std::max(result.worst_ratio, c->worst_ratio);
      if (rank == 0) {
        fmt::print("params check: step {}: {} parameters after the optimizer step, max abs error {:.3g}, "
                   "worst error/tolerance {:.3g}: {}\n",
                   step, c->tensors, c->max_error, c->worst_ratio, c->worst_ratio <= 1 ? "OK" : "MISMATCH");
      }
    }
    std::fflush(stdout);
    result.losses.push_back(*loss);
    result.steps.push_back(*timing);
  }
  result.check_ok = result.worst_ratio <= 1;
  int64_t peak = worker->peak_activation_bytes();
  result.peak_activation_bytes.assign(static_cast<size_t>(world.size()), 0);
  if (Status s = world.all_gather(&peak, result.peak_activation_bytes.data(), 1, DType::i64); !s) {
    return s.error();
  }
  return result;
}

}  // namespace autopar::pipeline
