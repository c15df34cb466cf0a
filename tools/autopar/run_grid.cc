// `autopar run` with a pipeline (see run_grid.h).
#include "run_grid.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli_output.h"
#include "pipeline_options.h"
#include "cost/hardware.h"
#include "pipeline/stage_meta.h"
#include "pipeline_plan/pipeline_plan.h"
#include "pipeline_runtime/grid_run.h"
#include "pipeline_runtime/stage_recompute.h"
#include "runtime/plan_reader.h"

namespace autopar {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// A count for a run: a positive number (auto is the planner's).
Expected<int32_t> positive(const std::string& flag, const std::string& text) {
  Expected<std::optional<int32_t>> n = count_or_auto(flag, text);
  if (!n) return n.error();
  if (!*n) return make_error("{} auto: give a number", flag);
  return **n;
}

// The graphs: the full batch's and one microbatch's (a built-in model), or an
// imported graph, which is one microbatch (no full-batch graph).
struct GridGraphs {
  std::optional<Graph> full;
  Graph micro;
};

Expected<GridGraphs> load_graphs(const GraphOptions& options, int32_t microbatches) {
  Expected<Graph> first = load_graph(options);
  if (!first) return first.error();
  if (!options.graph_file.empty()) return GridGraphs{std::nullopt, std::move(*first)};
  Expected<Graph> micro = microbatch_graph(options, *first, microbatches);
  if (!micro) return micro.error();
  return GridGraphs{std::move(*first), std::move(*micro)};
}

// What the run will do: the pipeline's options, the whole mesh, and the plan.
struct GridPlan {
  PipelineOptions options;
  std::vector<int64_t> mesh;
  PipelinePlan plan;
  PipelinePlan priced;  // the plan's figures for this run's footprint (warm or cold operands)
};

Expected<PipelineOptions> options_from_flags(const RunPipelineOptions& p) {
  PipelineOptions o;
  if (p.degree == "auto") {
    return make_error("--pipeline auto: run takes a fixed degree; search with autopar plan --pipeline auto --format "
                      "json --out plan.json, then run --plan plan.json");
  }
  Expected<int32_t> degree = positive("--pipeline", p.degree);
  if (!degree) return degree.error();
  o.degree = *degree;
  Expected<pipeline::ScheduleKind> kind = pipeline::parse_schedule_kind(p.schedule.empty() ? "1f1b" : p.schedule);
  if (!kind) return kind.error();
  o.schedule = *kind;
  if (p.microbatches.empty()) {
    o.microbatches = 2 * o.degree;
  } else {
    Expected<int32_t> m = positive("--microbatches", p.microbatches);
    if (!m) return m.error();
    o.microbatches = *m;
  }
  o.stages_per_rank = p.stages_per_rank;
  return o;
}

Expected<GridPlan> make_grid_plan(const RunGridInput& in, const GridGraphs& graphs, const PipelineOptions& options,
                                  const std::vector<int64_t>& mesh, int ranks) {
  if (!in.plan.pins.empty() || !in.plan.constraints_file.empty()) {
    return make_error("--pin and --constraints are not taken by a 3-D run: plan with autopar plan --pipeline N "
                      "--pin ... --format json --out plan.json (pins name the stage groups' mesh), then run --plan "
                      "plan.json");
  }
  PlanCliOptions cli = in.plan;
  cli.mesh = fmt::format("{}", fmt::join(mesh, "x"));
  cli.baseline.clear();
  cli.recompute = "none";  // the stage groups keep every activation; the stages re-run layers (PipelineOptions)
  Expected<PlanOptions> plan_options = to_plan_options(cli, graphs.micro);
  if (!plan_options) return plan_options.error();
  Expected<std::vector<int64_t>> sub = pipeline_sub_mesh(mesh, options.degree);
  if (!sub) return sub.error();
  int64_t devices = 1;
  for (int64_t d : mesh) devices *= d;
  if (devices != ranks) {
    return make_error("mesh {} has {} devices but the job has {} ranks (mpirun -np {})", fmt::join(mesh, "x"), devices,
                      ranks, devices);
  }
  std::optional<Plan> solved;
  if (!in.plan_text.empty()) {
    Expected<PlanFile> header = read_plan_header(in.plan_text);
    if (!header) return header.error();
    if (!header->graph.empty() && header->graph != graphs.micro.name) {
      return make_error("planned for graph {} but this run builds {}", header->graph, graphs.micro.name);
    }
    Expected<DeviceMesh> sub_mesh = make_mesh(*sub, plan_options->hardware, {});
    if (!sub_mesh) return sub_mesh.error();
    int64_t group = 1;
    for (int64_t d : *sub) group *= d;
    Expected<Plan> plan = read_plan(in.plan_text, graphs.micro, *sub_mesh, plan_options->hardware, group);
    if (!plan) return plan.error();
    solved = std::move(*plan);
  }
  Expected<PipelinePlan> plan =
      make_pipeline_plan(graphs.micro, *plan_options, options, solved ? &*solved : nullptr);
  if (!plan) return plan.error();
  if (plan->spmd.choice.empty()) return make_error("no sharding of the stage groups fits the memory budget");
  if (!plan->fits) return make_error("{}", pipeline_overflow(*plan));
  Expected<PipelinePlan> priced = price_for_footprint(graphs.micro, *plan_options, *plan);
  if (!priced) return priced.error();
  return GridPlan{options, mesh, std::move(*plan), std::move(*priced)};
}

void print_results(const GridPlan& grid, const pipeline::GridRunResult& r, const std::string& hardware, bool check) {
  const PipelinePlan& plan = grid.priced;
  for (size_t k = 0; k < r.steps.size(); ++k) {
    fmt::print("step {} time {:.1f} ms, bubble {:.1f}% (idle / (makespan x {} ranks)); predicted {:.1f} ms, "
               "bubble {:.1f}% ({} cost model)\n",
               k + 1, r.steps[k].makespan_s * 1e3, r.steps[k].bubble() * 100, r.steps[k].ranks,
               plan.step_time_s * 1e3, plan.simulation.bubble_fraction() * 100, hardware);
  }
  const size_t group = r.peak_bytes.size() / static_cast<size_t>(grid.options.degree);
  for (size_t w = 0; w < r.peak_bytes.size(); ++w) {
    const pipeline::RankMemory& m = r.predicted.at(w);
    const double predicted = static_cast<double>(m.peak_bytes);
    fmt::print("peak memory rank {} (pipeline rank {}): {:.3f} MiB (held tensors, {} B), model predicts {:.3f} MiB "
               "({} B, {:+.2f}%); predicted peak at {}: {}\n",
               w, w / group, r.peak_bytes[w] / kMiB, r.peak_bytes[w], predicted / kMiB, m.peak_bytes,
               predicted > 0 ? (r.peak_bytes[w] - predicted) / predicted * 100 : 0.0, m.peak_action,
               pipeline::describe_parts(m));
  }
  if (check) {
    fmt::print("memory check: largest |measured - predicted| {:.2f}% of the prediction (rank {}), tolerance {:g}%: "
               "{}\n",
               r.memory.error * 100, r.memory.worst_rank, r.memory.tolerance * 100, r.memory.ok ? "OK" : "FAILED");
  }
}

}  // namespace

int run_grid(RunGridInput in, const Communicator& world) {
  const int rank = world.rank();
  auto refuse = [&](const std::string& why) {
    return report_error(ErrorKind::kInput, fmt::format("rank {}: refusing to run: {}", rank, why));
  };
  PipelineOptions options;
  std::vector<int64_t> mesh;
  if (!in.plan_file.empty()) {
    if (!in.pipeline.degree.empty()) return refuse("give --plan or --pipeline, not both (the plan has its pipeline)");
    Expected<std::optional<PipelineSection>> section = read_pipeline_section(in.plan_text);
    if (!section) return refuse(fmt::format("{}: {}", in.plan_file, section.error().message));
    options = (*section)->options;
    mesh = (*section)->mesh;
  } else {
    Expected<PipelineOptions> flags = options_from_flags(in.pipeline);
    if (!flags) return refuse(flags.error().message);
    options = *flags;
    std::string text = in.plan.mesh.empty() ? fmt::format("{}", world.size()) : in.plan.mesh;
    Expected<std::vector<int64_t>> shape = parse_mesh_shape(text);
    if (!shape) return refuse(shape.error().message);
    mesh = *shape;
  }
  if (Expected<std::vector<int64_t>> sub = pipeline_sub_mesh(mesh, options.degree); !sub) {
    return refuse(sub.error().message);
  }
  if (!in.plan.baseline.empty()) options.baseline = in.plan.baseline;
  if (in.plan.recompute == "full") options.recompute_layers = true;
  if (Expected<std::optional<DegreeLayout>> layout = parse_degree_layout(in.plan.baseline, mesh); !layout) {
    return refuse(layout.error().message);
  } else if (*layout) {
    if ((*layout)->pipeline != options.degree) {
      return refuse(fmt::format("--baseline {} has pp{} but the run pipelines {} ways", in.plan.baseline,
                                (*layout)->pipeline, options.degree));
    }
    options.baseline = (*layout)->stage_baseline;
  }
  std::optional<Optimizer> kind = parse_optimizer(in.plan.optimizer);
  if (!kind) return refuse(fmt::format("unknown optimizer {} (sgd, adamw)", in.plan.optimizer));
  Expected<GridGraphs> graphs = load_graphs(in.graph, options.microbatches);
  if (!graphs) return refuse(graphs.error().message);
  Expected<GridPlan> grid = make_grid_plan(in, *graphs, options, mesh, world.size());
  if (!grid) return refuse(in.plan_file.empty() ? grid.error().message
                                                : fmt::format("{}: {}", in.plan_file, grid.error().message));
  const PipelinePlan& plan = grid->plan;
  const int64_t group_size = plan.spmd.mesh.num_devices();
  const int pipeline_rank = static_cast<int>(rank / group_size), coordinate = static_cast<int>(rank % group_size);
  Expected<Communicator> group = world.split(pipeline_rank, coordinate);
  Expected<Communicator> pipe = world.split(coordinate, pipeline_rank);
  if (!group || !pipe) world.abort("splitting the world into stage groups failed");
  Expected<SpmdMesh> sub_mesh = SpmdMesh::create(plan.spmd.mesh, *group);
  if (!sub_mesh) world.abort(sub_mesh.error());
  Tracer tracer;
  pipeline::ShardedRunner runner(graphs->micro, plan.spmd, *sub_mesh, tracer);
  pipeline::PipelineSetupOptions setup_options;
  setup_options.schedule = options.schedule;
  setup_options.microbatches = options.microbatches;
  setup_options.stages_per_rank = options.stages_per_rank;
  for (const PipelineStageCost& s : plan.stages) setup_options.stage_units.push_back(s.units);
  setup_options.recompute_layers = options.recompute_layers;
  setup_options.boundary_layout = [&runner](NodeId v, int32_t o) { return runner.layout(v, o); };
  const Graph& full = graphs->full ? *graphs->full : graphs->micro;
  Expected<pipeline::PipelineSetup> setup = pipeline::setup_pipeline(full, graphs->micro, *pipe, setup_options);
  if (!setup) return refuse(setup.error().message);
  if (rank == 0) {
    fmt::print("run: {} on mesh {} ({} ranks): pipeline {} along dim 0 x stage groups on {} ({}), schedule {}, {} "
               "microbatches, {} stage(s) per rank, {} steps, {} lr {:g}, seed {}{}\n",
               graphs->micro.name, fmt::join(mesh, "x"), world.size(), options.degree, fmt::join(plan.sub_mesh, "x"),
               plan.spmd.label, pipeline::schedule_kind_name(options.schedule), options.microbatches,
               options.stages_per_rank, in.steps, optimizer_name(*kind), in.lr, in.seed,
               pipeline::rerun_summary(setup->programs));
    std::fflush(stdout);
  }
  pipeline::GridRunOptions run;
  run.steps = in.steps;
  run.optimizer = OptimizerConfig{.kind = *kind, .lr = in.lr};
  run.seed = in.seed;
  run.check = in.check;
  const pipeline::ShardedValues sizes = sharded_values(graphs->micro, plan.spmd);
  run.sizes = &sizes;
  Expected<pipeline::GridRunResult> result = pipeline::run_grid_training(
      graphs->full ? &*graphs->full : nullptr, graphs->micro, plan.spmd, *setup, world, *pipe, runner, run);
  if (!result) world.abort(result.error());
  if (rank == 0) print_results(*grid, *result, in.plan.hardware, in.check);
  std::fflush(stdout);
  if (!result->check_ok) {
    return report_error(ErrorKind::kRuntime, result->memory.ok ? fmt::format("rank {}: check failed", rank)
                                                               : fmt::format("rank {}: memory check failed: {}", rank,
                                                                             describe_worst(result->memory)));
  }
  return kExitOk;
}

}  // namespace autopar
