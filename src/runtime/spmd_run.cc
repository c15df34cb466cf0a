#include "runtime/spmd_run.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "memory/recompute.h"
#include "runtime/counter_rng.h"
#include "runtime/init.h"
#include "runtime/local_executor.h"
#include "runtime/node_check.h"
#include "runtime/redistribute_exec.h"
#include "runtime/shard_compare.h"
#include "runtime/spmd_report.h"
#include "runtime/torch_values.h"

namespace autopar {
namespace {

// The unsplit model on rank 0: full parameters and its own optimizer.
struct Reference {
  std::vector<at::Tensor> placeholders;  // by NodeId
  std::vector<at::Tensor> params;        // aliases, in graph gradient order
  OptimizerState optimizer;
  uint64_t seed = 0;  // random ops draw as the ranks do
  int64_t steps_run = 0;
};

struct Comparison {
  double max_error = 0;
  bool ok = true;
  double loss = 0;
  double ref_loss = 0;
  std::string worst;  // what had the largest error
};

void compare(const at::Tensor& got, const at::Tensor& want, const std::string& what,
             const CheckTolerance& tol, Comparison& c) {
  at::Tensor a = got.to(at::kDouble);
  at::Tensor b = want.to(at::kDouble);
  if (a.sizes() != b.sizes()) {
    c.ok = false;
    c.worst = fmt::format("{}: shape mismatch", what);
    return;
  }
  double err = (a - b).abs().max().item<double>();
  // Relative to the tensor's scale: elementwise relative error is meaningless
  // for gradients near zero, which AdamW's normalised update also amplifies.
  double scale = b.abs().max().item<double>();
  bool ok = err <= tol.atol + tol.rtol * scale;
  if (err > c.max_error) {
    c.max_error = err;
    c.worst = what;
  }
  if (!ok) {
    c.ok = false;
    c.worst = what;
  }
}

std::vector<const GraphOutput*> outputs_of_kind(const Graph& graph, OutputKind kind) {
  std::vector<const GraphOutput*> out;
  for (const GraphOutput& g : graph.outputs()) {
    if (g.kind == kind) out.push_back(&g);
  }
  return out;
}

std::vector<const GraphOutput*> gradient_outputs(const Graph& graph) {
  return outputs_of_kind(graph, OutputKind::kGradient);
}

// The outputs checked besides the loss: gradients, then buffer updates.
std::vector<const GraphOutput*> checked_outputs(const Graph& graph) {
  std::vector<const GraphOutput*> out = gradient_outputs(graph);
  for (const GraphOutput* g : outputs_of_kind(graph, OutputKind::kBuffer)) out.push_back(g);
  return out;
}

std::string output_label(const Graph& graph, const GraphOutput& g) {
  const Node& p = graph.node(g.placeholder());
  return fmt::format("{} of {}", g.kind == OutputKind::kGradient ? "gradient" : "update",
                     p.target.empty() ? p.name : p.target);
}

// Rank 0: one reference step on full tensors (with the ranks' random draws):
// its loss and its checked outputs (checked_outputs' order).
struct ReferenceStep {
  double loss = 0;
  std::vector<at::Tensor> outputs;
};

Expected<ReferenceStep> run_reference(const Graph& graph, Reference& ref) {
  NodeValues values(static_cast<size_t>(graph.size()));
  for (NodeId v = 0; v < graph.size(); ++v) {
    if (graph.node(v).is_placeholder()) values[static_cast<size_t>(v)] = {ref.placeholders[static_cast<size_t>(v)]};
  }
  ++ref.steps_run;
  ExecuteHooks hooks;
  hooks.random_key = step_random_key(ref.seed, ref.steps_run);  // the ranks' draws
  Expected<ExecuteStats> run = execute_nodes(graph, values, hooks);
  if (!run) return make_error_like(run.error(), "reference (single process): {}", run.error().message);
  ReferenceStep r;
  r.loss = values[static_cast<size_t>(loss_position(graph))][0].item<double>();
  for (const GraphOutput* g : checked_outputs(graph)) r.outputs.push_back(values[static_cast<size_t>(g->node)][0]);
  return r;
}

// Rank 0: the reference's buffer updates and optimizer step.
void update_reference(const Graph& graph, Reference& ref, const ReferenceStep& step) {
  std::vector<at::Tensor> grads;
  std::vector<const GraphOutput*> outs = checked_outputs(graph);
  for (size_t i = 0; i < outs.size(); ++i) {
    if (outs[i]->kind == OutputKind::kGradient) {
      grads.push_back(step.outputs[i]);
    } else {
      ref.placeholders[static_cast<size_t>(outs[i]->buffer)] = step.outputs[i];
    }
  }
  ref.optimizer.step(ref.params, grads);
}

void record(const ShardComparison& s, const std::string& what, Comparison& c) {
  if (s.max_error > c.max_error) {
    c.max_error = s.max_error;
    if (c.ok) c.worst = what;
  }
  if (!s.ok && c.ok) {
    c.ok = false;
    c.worst = fmt::format("{} (rank {})", what, s.worst_rank);
  }
}

// One step's check, after the ranks' optimizer step: rank 0 runs the unsplit
// step, then the loss, every gradient and buffer update, and every parameter
// after both optimizer steps are compared block by block on every rank
// (shard_compare.h). The reference then adopts the ranks' parameters, so each
// step is checked from the same inputs: AdamW's update lr * g / (|g| + eps)
// turns rounding noise in a near-zero gradient into a change of up to lr,
// which would otherwise grow into the next step's gradients. Returns the
// verdict broadcast from rank 0.
Expected<bool> check_step(const Graph& graph, const SpmdExecutor& exec, const SpmdStepResult& step,
                          double loss, const SpmdMesh& mesh, std::optional<Reference>& ref,
                          const SpmdRunOptions& options, Comparison& total) {
  const CheckTolerance& tol = options.tolerance;
  std::optional<ReferenceStep> want;
  if (ref) {
    Expected<ReferenceStep> r = run_reference(graph, *ref);
    if (!r) return r.error();
    want = std::move(*r);
  }
  Comparison c;
  if (want) {
    c.loss = loss;
    c.ref_loss = want->loss;
    compare(at::scalar_tensor(loss, at::kDouble), at::scalar_tensor(want->loss, at::kDouble), "loss",
            tol, c);
  }
  std::vector<const GraphOutput*> outs = checked_outputs(graph);
  const size_t grads = step.grads.size();
  for (size_t i = 0; i < outs.size(); ++i) {
    NodeId target = outs[i]->placeholder();
    const at::Tensor& local = i < grads ? step.grads[i] : step.buffers[i - grads];
    Expected<ShardComparison> s =
        compare_every_shard(local, graph.node(target).meta(), exec.output_sharding(target),
                            want ? want->outputs[i] : at::Tensor(), mesh, tol);
    if (!s) return s.error();
    if (want) record(*s, output_label(graph, *outs[i]), c);
  }
  if (want) update_reference(graph, *ref, *want);
  const CheckTolerance param_tol = parameter_tolerance(tol, options.optimizer, ref ? ref->steps_run : 0);
  std::vector<const GraphOutput*> params = gradient_outputs(graph);
  for (size_t k = 0; k < params.size(); ++k) {
    NodeId p = params[k]->param;
    Expected<ShardComparison> s =
        compare_every_shard(exec.params()[k], graph.node(p).meta(), exec.output_sharding(p),
                            ref ? ref->params[k] : at::Tensor(), mesh, param_tol,
                            ref ? &ref->params[k] : nullptr);
    if (!s) return s.error();
    const Node& node = graph.node(p);
    if (ref) record(*s, fmt::format("{} after the step", node.target.empty() ? node.name : node.target), c);
  }
  int32_t ok = c.ok ? 1 : 0;
  if (ref) {
    if (c.max_error >= total.max_error || !c.ok) {
      total.max_error = std::max(total.max_error, c.max_error);
      total.worst = c.worst;
    }
    total.loss = c.loss;
    total.ref_loss = c.ref_loss;
    if (!c.ok && total.ok) {
      total.ok = false;
      total.worst = c.worst;
    }
  }
  if (Status s = mesh.world().broadcast(&ok, 1, DType::i32, 0); !s) return s.error();
  return ok == 1;
}

// Step 1's loss, and every rank's block of each gradient and buffer update,
// against PyTorch's own (read on rank 0). Returns the verdict broadcast from rank 0.
Expected<bool> check_against_torch(const Graph& graph, const SpmdExecutor& exec,
                                   const SpmdStepResult& step, double loss, const SpmdMesh& mesh,
                                   const TorchValues* torch, const CheckTolerance& tol) {
  Comparison c;
  if (torch != nullptr) compare(at::scalar_tensor(loss, at::kDouble), torch->loss, "loss", tol, c);
  std::vector<const GraphOutput*> outs = checked_outputs(graph);
  const size_t grads = step.grads.size();
  for (size_t i = 0; i < outs.size(); ++i) {
    NodeId target = outs[i]->placeholder();
    at::Tensor want;
    if (torch != nullptr) {
      bool grad = outs[i]->kind == OutputKind::kGradient;
      const std::string& name = graph.node(target).target;
      const auto& table = grad ? torch->grads : torch->buffers;
      auto it = table.find(name);
      if (it == table.end()) {
        return make_error("the exporter wrote no {} of {}", grad ? "gradient" : "buffer", name);
      }
      want = it->second;
    }
    const at::Tensor& local = i < grads ? step.grads[i] : step.buffers[i - grads];
    Expected<ShardComparison> s = compare_every_shard(local, graph.node(target).meta(),
                                                      exec.output_sharding(target), want, mesh, tol);
    if (!s) return s.error();
    if (torch != nullptr) record(*s, output_label(graph, *outs[i]), c);
  }
  int32_t ok = c.ok ? 1 : 0;
  if (torch != nullptr) {
    size_t buffers = outs.size() - grads;
    std::string buffer_text = buffers == 0 ? "" : fmt::format(", {} buffer updates", buffers);
    fmt::print("torch check: max abs error {:.3g} (loss {:.6f} vs PyTorch {:.6f}), {} gradients{}, "
               "every rank's block: {}\n",
               c.max_error, loss, torch->loss.item<double>(), grads, buffer_text,
               c.ok ? "OK" : fmt::format("MISMATCH in {}", c.worst));
  }
  if (Status s = mesh.world().broadcast(&ok, 1, DType::i32, 0); !s) return s.error();
  return ok == 1;
}

void print_check_line(const Comparison& c, const CheckTolerance& tol) {
  fmt::print("check: max abs error {:.3g} (loss {:.6f} vs {:.6f}), tolerance {:g} x max|ref| + {:g}: {}\n",
             c.max_error, c.loss, c.ref_loss, tol.rtol, tol.atol,
             c.ok ? "OK" : fmt::format("MISMATCH in {}", c.worst));
}

// position,node,op,predicted_bytes,measured_bytes: where the memory model and
// this rank disagree, node by node.
Status write_memory_by_node(const Graph& graph, const Plan& plan, const SpmdMesh& mesh, const SpmdExecutor& exec,
                            const Tracer& tracer, const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return make_error_of(ErrorKind::kRuntime, "cannot write {}", path);
  MemoryTimeline predicted = plan_memory(graph, plan, &mesh.coordinate());
  // Between steps a rank holds its placeholders (node_peaks' placeholder
  // entries) and what the tracer holds besides them: the optimizer state.
  double besides = tracer.live_bytes() - exec.node_peaks().front();
  fmt::print(f, "position,node,op,predicted_bytes,measured_bytes\n");
  double worst = 0;
  NodeId worst_node = 0;
  for (NodeId v = 0; v < graph.size(); ++v) {
    double want = predicted.positions[static_cast<size_t>(v)].total();
    double got = exec.node_peaks()[static_cast<size_t>(v)] + besides;
    fmt::print(f, "{},{},{},{:.0f},{:.0f}\n", v, graph.node(v).name, node_op_name(graph.node(v)), want, got);
    if (std::abs(got - want) > std::abs(worst)) worst = got - want, worst_node = v;
  }
  std::fclose(f);
  fmt::print("memory by node: {} (largest difference {:+.0f} B measured - predicted, at {})\n", path,
             worst, graph.node(worst_node).name);
  return ok_status();
}

}  // namespace

CheckTolerance parameter_tolerance(const CheckTolerance& tol, const OptimizerConfig& optimizer,
                                   int64_t steps) {
  double per_step = optimizer.kind == Optimizer::kAdamW ? 2 * optimizer.lr : optimizer.lr * tol.atol;
  return CheckTolerance{tol.rtol, tol.atol + per_step * static_cast<double>(steps)};
}

Expected<SpmdRunResult> run_spmd_training(const Graph& graph, const Plan& plan,
                                          const SpmdMesh& mesh, const SpmdRunOptions& options) {
  const bool root = mesh.world().rank() == 0;
  const NodeId loss_id = loss_position(graph);
  if (loss_id == kNoNode) return make_error("the graph has no loss output");
  std::optional<TorchValues> torch;
  if (!options.torch_values_dir.empty()) {
    Expected<TorchValues> read = read_torch_values(options.torch_values_dir);
    if (!read) return read.error();
    torch = std::move(*read);
  }
  Expected<std::vector<at::Tensor>> full = torch ? torch_placeholders(graph, *torch)
                                                 : init_placeholders(graph, InitOptions{.seed = options.seed});
  if (!full) return full.error();
  Tracer tracer;
  SpmdExecutor exec(graph, plan, mesh, tracer);
  exec.set_random_seed(options.seed);
  if (Status s = exec.load(*full); !s) return s.error();
  OptimizerState optimizer(options.optimizer);
  optimizer.allocate(exec.params());
  tracer.hold(optimizer.state_bytes());
  std::optional<Reference> ref;
  if (options.check && root) {
    ref.emplace(Reference{*full, {}, OptimizerState(options.optimizer), options.seed, 0});
    for (const GraphOutput* g : gradient_outputs(graph)) {
      ref->params.push_back(ref->placeholders[static_cast<size_t>(g->param)]);
    }
  }
  std::optional<NodeCheck> node_check;
  if (options.check_nodes) {
    Expected<NodeCheck> prepared = NodeCheck::prepare(graph, *full, mesh,
                                                      step_random_key(options.seed, 1), options.tolerance);
    if (!prepared) return prepared.error();
    node_check.emplace(std::move(*prepared));
    node_check->observe(exec, plan);
  }
  full->clear();
  SpmdRunResult result;
  Comparison total;
  for (int64_t k = 1; k <= options.steps; ++k) {
    double start = tracer.now_us();
    Expected<SpmdStepResult> step = exec.step(options.faults);
    if (!step) return step.error();
    if (node_check && k == 1) {
      exec.set_node_observer({});
      Expected<bool> ok = node_check->finish(plan);
      if (!ok) return ok.error();
      result.check_ok = result.check_ok && *ok;
    }
    double update_start = tracer.now_us();
    if (Status s = enter_phase(JobPhase::kOptimizerStep); !s) return s.error();
    optimizer.step(exec.params(), step->grads);
    tracer.compute("optimizer", kOptimizerStepOp, update_start, tracer.now_us());
    if (Status s = enter_phase(JobPhase::kTraining); !s) return s.error();
    tracer.step(k, start, tracer.now_us());
    tracer.set_counting(false);
    Expected<at::Tensor> loss =
        gather_full(step->loss, graph.node(loss_id).meta(), exec.output_sharding(loss_id), mesh);
    if (!loss) return loss.error();
    double loss_value = loss->item<double>();
    if (root) fmt::print("step {} loss {:.6f}\n", k, loss_value);
    std::fflush(stdout);
    if (options.check) {
      Expected<bool> ok = check_step(graph, exec, *step, loss_value, mesh, ref, options, total);
      if (!ok) return ok.error();
      result.check_ok = result.check_ok && *ok;
    }
    if (torch && k == 1) {
      Expected<bool> ok = check_against_torch(graph, exec, *step, loss_value, mesh,
                                              root ? &*torch : nullptr, options.tolerance);
      if (!ok) return ok.error();
      result.check_ok = result.check_ok && *ok;
    }
    tracer.set_counting(true);
    // The first step warms caches, allocators and libtorch's kernels: the
    // per-op and per-collective tables, like the step time, leave it out.
    if (k == 1 && options.steps > 1) tracer.reset_tallies();
  }
  if (!options.memory_by_node_path.empty()) {
    // Rank 0 writes FILE, rank r FILE.rank<r>: uneven shards differ by rank.
    const std::string path =
        options.memory_by_node_path + (root ? "" : fmt::format(".rank{}", mesh.world().rank()));
    if (Status s = write_memory_by_node(graph, plan, mesh, exec, tracer, path); !s) {
      return s.error();
    }
  }
  result.max_error = total.max_error;
  if (options.check && root) print_check_line(total, options.tolerance);
  if (Status s = finish_report(graph, plan, mesh, tracer, options, result); !s) return s.error();
  return result;
}

}  // namespace autopar
