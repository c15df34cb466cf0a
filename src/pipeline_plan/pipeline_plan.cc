#include "pipeline_plan/pipeline_plan.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "pipeline/lower.h"
#include "pipeline/stages.h"
#include "pipeline_runtime/partition.h"
#include "pipeline_runtime/stage_recompute.h"
#include "planner/baselines.h"
#include "memory/step_memory.h"
#include "planner/memory_bound.h"
#include "sharding/placement.h"

namespace autopar {
namespace {

// A value's bytes on one device under its planned sharding.
double local_bytes(const Plan& plan, NodeId node, int32_t output, const Graph& graph) {
  const TensorMeta& meta = graph.node(node).outputs[static_cast<size_t>(output)];
  return local_tensor_bytes(meta, planned_output_sharding(plan, node, output), plan.mesh);
}

double all_outputs_bytes(const Plan& plan, NodeId node, const Graph& graph) {
  double bytes = 0;
  for (size_t o = 0; o < graph.node(node).outputs.size(); ++o) {
    bytes += local_bytes(plan, node, static_cast<int32_t>(o), graph);
  }
  return bytes;
}

// Seconds per microbatch of each node as planned, its inputs' redistributions
// included; and per step, each gradient's reduction to its parameter's
// placement, by the node that completes the gradient.
struct NodeTimes {
  std::vector<double> per_microbatch;
  std::vector<double> grad_sync;
};

NodeTimes node_times(const Plan& plan) {
  NodeTimes t;
  size_t n = plan.strategies.nodes.size();
  t.per_microbatch.assign(n, 0.0);
  t.grad_sync.assign(n, 0.0);
  for (size_t v = 0; v < n; ++v) {
    const NodeStrategies& ns = plan.strategies.nodes[v];
    if (ns.compute_s.empty()) continue;
    size_t c = static_cast<size_t>(plan.choice[v]);
    t.per_microbatch[v] = ns.compute_s[c] + (ns.sync_s.empty() ? 0.0 : ns.sync_s[c]);
  }
  for (const PlannedRedistribution& r : plan.redistributions) {
    if (r.input < 0) {
      t.grad_sync[static_cast<size_t>(r.producer)] += r.plan.time_s;
    } else {
      t.per_microbatch[static_cast<size_t>(r.consumer)] += r.plan.time_s;
    }
  }
  return t;
}

double sum_over(const std::vector<NodeId>& nodes, const std::vector<double>& times) {
  double total = 0;
  for (NodeId v : nodes) total += times[static_cast<size_t>(v)];
  return total;
}

// What a stage keeps from its forward for its backward: every forward value
// and received input its backward nodes read, at planned local sizes.
double saved_bytes(const Graph& graph, const Plan& plan, const pipeline::StageProgram& program) {
  std::set<NodeId> kept_from;
  for (NodeId v : program.forward) kept_from.insert(v);
  for (const pipeline::Value& in : program.activations_in) kept_from.insert(in.node);
  for (NodeId v : program.rerun) kept_from.erase(v);  // made again in the backward
  std::set<NodeId> saved;
  for (NodeId u : program.backward) {
    for (NodeId x : graph.node(u).inputs) {
      if (kept_from.count(x)) saved.insert(x);
    }
  }
  double bytes = 0;
  for (NodeId v : saved) bytes += all_outputs_bytes(plan, v, graph);
  return bytes;
}

}  // namespace

Expected<PipelinePlan> price_for_footprint(const Graph& graph, const PlanOptions& options, const PipelinePlan& plan) {
  double largest = 0;
  for (int32_t r = 0; r < plan.options.degree; ++r) {
    double state = 0, saved = 0;
    for (pipeline::StageIdx st : plan.schedule.stages_of(r)) {
      const PipelineStageCost& c = plan.stages[static_cast<size_t>(st)];
      state += c.param_bytes + c.grad_bytes;
      saved = std::max(saved, c.saved_bytes);
    }
    largest = std::max(largest, state + saved);
  }
  PlanOptions warm = options;
  warm.hardware = operands_for_footprint(options.hardware, largest);
  if (warm.hardware.op_times == options.hardware.op_times) return plan;
  Expected<Plan> repriced = reprice_plan(graph, plan.spmd, warm.hardware);
  if (!repriced) return repriced.error();
  PipelineOptions same = plan.options;
  same.stage_units.clear();
  for (const PipelineStageCost& s : plan.stages) same.stage_units.push_back(s.units);
  return make_pipeline_plan(graph, warm, same, &*repriced);
}

pipeline::ShardedValues sharded_values(const Graph& graph, const Plan& plan) {
  auto index = std::make_shared<RedistributionIndex>(plan);
  pipeline::ShardedValues values;
  values.bytes = [&graph, &plan](NodeId v, int32_t o) {
    return static_cast<int64_t>(local_bytes(plan, v, o, graph));
  };
  values.copies = [&graph, &plan, index](NodeId consumer, int32_t input) -> std::optional<std::vector<int64_t>> {
    const PlannedRedistribution* found = index->find(consumer, input);
    if (found == nullptr) return std::nullopt;
    const PlannedRedistribution& r = *found;
    const TensorMeta& meta = graph.node(r.producer).outputs[static_cast<size_t>(r.output_index)];
    std::vector<int64_t> out;
    for (double b : redistribution_results(meta, r.from, r.to, r.plan, plan.mesh)) out.push_back(static_cast<int64_t>(b));
    return out;
  };
  return values;
}

Expected<std::vector<int64_t>> pipeline_sub_mesh(const std::vector<int64_t>& mesh, int32_t degree) {
  if (mesh.empty()) return make_error("the mesh has no dims");
  if (degree < 1) return make_error("--pipeline must be at least 1, got {}", degree);
  if (mesh[0] % degree != 0) {
    return make_error("--pipeline {} does not divide mesh dim 0 ({}): the pipeline runs along dim 0, the "
                      "outermost; give a degree that divides {}",
                      degree, mesh[0], mesh[0]);
  }
  std::vector<int64_t> sub = mesh;
  sub[0] /= degree;
  if (sub[0] == 1 && sub.size() > 1) sub.erase(sub.begin());
  return sub;
}

Expected<PlanOptions> stage_group_options(const Graph& graph, const PlanOptions& options, int32_t degree,
                                          const std::string& baseline) {
  Expected<std::vector<int64_t>> sub = pipeline_sub_mesh(options.mesh_shape, degree);
  if (!sub) return sub.error();
  // Pins here are the stage groups' (read against the sub-mesh by the caller).
  if (!options.pins.empty() && !baseline.empty()) {
    return make_error("pins and a baseline together: give one (the baseline pins every parameter)");
  }
  // A device of a group holds about 1/degree of the model (its stages'
  // share), so the solve's memory rows, which see the whole graph, get the
  // budget times the degree; the real check is per rank (make_pipeline_plan).
  PlanOptions spmd = options;
  spmd.mesh_shape = *sub;
  if (sub->size() < options.mesh_shape.size() && !spmd.mesh_options.names.empty()) {
    spmd.mesh_options.names.erase(spmd.mesh_options.names.begin());
  }
  spmd.memory_budget_bytes = options.memory_budget_bytes.value_or(options.hardware.memory_bytes) * degree;
  // The 3-D runtime sends boundary values at the plan's local sizes
  // (pipeline/stage_meta.h), which uneven shards would make rank-dependent.
  spmd.sharding.even_only = true;
  if (!baseline.empty()) {
    Expected<DeviceMesh> mesh = make_mesh(spmd.mesh_shape, spmd.hardware, spmd.mesh_options);
    if (!mesh) return mesh.error();
    Expected<std::vector<PinSpec>> pins = baseline_pins(baseline, graph, *mesh);
    if (!pins) return pins.error();
    spmd.pins = std::move(*pins);
    spmd.label = baseline;
  }
  return spmd;
}

Expected<Plan> solve_stage_groups(const Graph& graph, const PlanOptions& options, int32_t degree,
                                  const std::string& baseline) {
  Expected<PlanOptions> group = stage_group_options(graph, options, degree, baseline);
  if (!group) return group.error();
  return make_plan(graph, *group);
}

Expected<PipelinePlan> make_pipeline_plan(const Graph& graph, const PlanOptions& options,
                                          const PipelineOptions& pipeline_options, const Plan* solved) {
  Expected<std::vector<int64_t>> sub = pipeline_sub_mesh(options.mesh_shape, pipeline_options.degree);
  if (!sub) return sub.error();
  if (pipeline_options.microbatches < 1) {
    return make_error("--microbatches must be at least 1, got {}", pipeline_options.microbatches);
  }
  Expected<DeviceMesh> full_mesh = make_mesh(options.mesh_shape, options.hardware, options.mesh_options);
  if (!full_mesh) return full_mesh.error();

  PipelinePlan result;
  result.options = pipeline_options;
  result.mesh = options.mesh_shape;
  result.sub_mesh = *sub;
  result.memory_budget = options.memory_budget_bytes.value_or(options.hardware.memory_bytes);

  // The schedule first: a microbatch count it cannot make is the user's to fix
  // before any solve.
  pipeline::ScheduleOptions schedule_options;
  schedule_options.kind = pipeline_options.schedule;
  schedule_options.num_ranks = pipeline_options.degree;
  schedule_options.num_microbatches = pipeline_options.microbatches;
  schedule_options.stages_per_rank = pipeline_options.stages_per_rank;
  Expected<pipeline::Schedule> compute_schedule = pipeline::make_schedule(schedule_options);
  if (!compute_schedule) return compute_schedule.error();
  result.schedule = pipeline::lower_communication(*compute_schedule);

  pipeline::StageOptions stage_options;
  stage_options.num_stages = pipeline_options.degree * pipeline_options.stages_per_rank;
  stage_options.num_ranks = pipeline_options.degree;
  stage_options.balance = pipeline::StageBalance::kCost;
  stage_options.hardware = &options.hardware;
  if (!pipeline_options.stage_units.empty()) {
    stage_options.balance = pipeline::StageBalance::kGiven;
    stage_options.given_units = pipeline_options.stage_units;
  }
  Expected<std::vector<pipeline::Stage>> stages = pipeline::split_stages(graph, stage_options);
  if (!stages) return stages.error();
  Expected<std::vector<pipeline::StageProgram>> programs = pipeline::partition_stages(graph, *stages);
  if (!programs) return programs.error();
  if (pipeline_options.recompute_layers) pipeline::add_layer_recomputation(graph, *programs);
  result.node_stage.assign(static_cast<size_t>(graph.size()), -1);
  for (const pipeline::StageProgram& program : *programs) {
    for (const std::vector<NodeId>* nodes : {&program.forward, &program.backward}) {
      for (NodeId v : *nodes) result.node_stage[static_cast<size_t>(v)] = program.stage;
    }
  }

  if (solved != nullptr) {
    if (solved->mesh.shape() != *sub) {
      return make_error("the given stage-group plan is on mesh {}, not the sub-mesh {}",
                        fmt::join(solved->mesh.shape(), "x"), fmt::join(*sub, "x"));
    }
    result.spmd = *solved;
  } else {
    Expected<Plan> plan = solve_stage_groups(graph, options, pipeline_options.degree, pipeline_options.baseline);
    if (!plan) return plan.error();
    result.spmd = std::move(*plan);
  }
  const Plan& p = result.spmd;
  if (p.choice.empty()) {
    return make_error_of(ErrorKind::kInfeasible,
                         "no sharding of the stage groups on {} fits: {} (the solve holds the whole microbatch graph "
                         "against {} x the per-device budget, as the {} pipeline ranks share it); give more memory "
                         "(--memory-gb), more microbatches or a higher degree",
                         fmt::join(*sub, "x"),
                         p.shortfall ? planner::describe(*p.shortfall) : std::string("the solver found no plan"),
                         pipeline_options.degree, pipeline_options.degree);
  }
  NodeTimes times = node_times(p);

  const LinkSpec& pipe_link = full_mesh->dims[0].link;
  auto send_time = [&](double bytes) {
    if (pipeline_options.degree == 1 || bytes <= 0) return 0.0;
    return pipe_link.latency_s + (pipe_link.bandwidth_bytes_per_s > 0 ? bytes / pipe_link.bandwidth_bytes_per_s : 0);
  };
  const double state_per_element = optimizer_bytes_per_element(options.optimizer);
  for (size_t s = 0; s < programs->size(); ++s) {
    const pipeline::StageProgram& program = (*programs)[s];
    PipelineStageCost cost;
    cost.stage = static_cast<int32_t>(s);
    cost.rank = result.schedule.stage_to_rank[s];
    cost.units = (*stages)[s].units;
    cost.nodes = static_cast<int32_t>(program.forward.size() + program.backward.size());
    for (NodeId v : program.backward)  // a re-run is a forward node run again, not another node
      cost.nodes -= std::binary_search(program.rerun.begin(), program.rerun.end(), v) ? 1 : 0;
    cost.durations.f = sum_over(program.forward, times.per_microbatch);
    cost.durations.b = sum_over(program.backward, times.per_microbatch);
    cost.durations.i = sum_over(program.input_grad, times.per_microbatch);
    cost.durations.w = sum_over(program.weight_grad, times.per_microbatch);
    for (const pipeline::Value& out : program.activations_out) {
      cost.send_bytes += local_bytes(p, out.node, out.output, graph);
    }
    for (NodeId g : program.grads_out) cost.send_grad_bytes += local_bytes(p, g, 0, graph);
    cost.durations.comm = send_time(std::max(cost.send_bytes, cost.send_grad_bytes));
    cost.grad_sync_s = sum_over(program.param_grads, times.grad_sync);
    for (size_t i = 0; i < program.params.size(); ++i) {
      const NodeId param = program.params[i];
      const NodeStrategies& ns = p.strategies.nodes[static_cast<size_t>(param)];
      size_t c = static_cast<size_t>(p.choice[static_cast<size_t>(param)]);
      if (!ns.update_s.empty()) cost.optimizer_s += ns.update_s[c];
      double bytes = local_bytes(p, param, 0, graph);
      double elements = bytes / static_cast<double>(dtype_size(graph.node(param).meta().dtype));
      // The param, its state, and the gradient summed over the microbatches
      // in its producer's sharding (reduced once, at the end of the step).
      const double grad = local_bytes(p, program.param_grads[i], 0, graph);
      cost.static_bytes += bytes + elements * state_per_element + grad;
      cost.param_bytes += bytes;
      cost.grad_bytes += grad;
    }
    cost.saved_bytes = saved_bytes(graph, p, program);
    result.stages.push_back(std::move(cost));
  }

  std::vector<pipeline::Durations> durations;
  for (const PipelineStageCost& c : result.stages) durations.push_back(c.durations);
  result.simulation = pipeline::simulate_stages(result.schedule, durations);
  if (result.simulation.deadlocked) {
    return make_error("the {} schedule deadlocks in simulation: {}",
                      pipeline::schedule_kind_name(pipeline_options.schedule), result.simulation.deadlock);
  }
  // Every rank's peak from the memory model the 3-D runtime is checked
  // against (pipeline_runtime/pipeline_memory.h with this plan's local sizes).
  const pipeline::ShardedValues values = sharded_values(graph, p);
  pipeline::PipelineMemoryInput memory{&graph, &*stages, &*programs, &result.schedule, state_per_element, &values};
  Expected<std::vector<pipeline::RankMemory>> peaks = pipeline::predict_pipeline_memory(memory);
  if (!peaks) return make_error_like(peaks.error(), "memory model: {}", peaks.error().message);
  double slowest_tail = 0;
  result.rank_peak_bytes.assign(static_cast<size_t>(pipeline_options.degree), 0.0);
  for (int32_t r = 0; r < pipeline_options.degree; ++r) {
    double tail = 0;
    for (pipeline::StageIdx s : result.schedule.stages_of(r)) {
      const PipelineStageCost& c = result.stages[static_cast<size_t>(s)];
      tail += c.grad_sync_s + c.optimizer_s;
    }
    slowest_tail = std::max(slowest_tail, tail);
    result.rank_peak_bytes[static_cast<size_t>(r)] = static_cast<double>((*peaks)[static_cast<size_t>(r)].peak_bytes);
    result.fits = result.fits && result.rank_peak_bytes[static_cast<size_t>(r)] <= result.memory_budget;
  }
  result.step_time_s = result.simulation.makespan + slowest_tail;
  result.rank_memory = std::move(*peaks);
  return result;
}

}  // namespace autopar
