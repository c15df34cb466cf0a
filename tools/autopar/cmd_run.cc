// `autopar run`: execute a sharding plan on this MPI job's ranks with libtorch
// CPU kernels, for N training steps, optionally checking every step against
// the unsplit model. Launch under mpirun, one rank per mesh device:
//   mpirun -np 4 autopar run --model llama3-debugmodel --mesh 2x2 --check
// With neither --plan nor --baseline every rank plans (deterministically, so
// all ranks agree). Refusals (a plan that does not fit the launch or graph)
// happen on every rank before any compute; a failure during the run ends the
// whole job through MPI_Abort, naming the rank and the op.
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli_output.h"
#include "commands.h"
#include "fault_option.h"
#include "graph_options.h"
#include "plan_options.h"
#include "runtime/plan_reader.h"
#include "pipeline_plan/pipeline_plan.h"
#include "run_grid.h"
#include "runtime/spmd_run.h"

namespace autopar {
namespace {

struct RunCommandOptions {
  GraphOptions graph;
  PlanCliOptions plan;
  std::string plan_file;
  int64_t steps = 1;
  double lr = 1e-3;
  uint64_t seed = 0;
  bool check = false;
  bool check_nodes = false;
  std::string memory_by_node;
  std::string trace;
  std::string torch_values;  // --check-against-torch DIR
  FaultInjection faults;
  RunPipelineOptions pipeline;
};

// A pipeline asked for on the command line or by the plan file: the 3-D run.
Expected<bool> wants_grid(const RunCommandOptions& o, std::string& plan_text) {
  if (!o.plan_file.empty()) {
    Expected<std::string> text = read_text_file(o.plan_file);
    if (!text) return text.error();
    plan_text = std::move(*text);
    Expected<std::optional<PipelineSection>> section = read_pipeline_section(plan_text);
    if (!section) return make_error_like(section.error(), "{}: {}", o.plan_file, section.error().message);
    if (section->has_value()) return true;
  }
  return !o.pipeline.degree.empty();
}

// The options a 3-D run cannot take yet.
std::string grid_refusal(const RunCommandOptions& o) {
  if (!o.torch_values.empty()) return "--check-against-torch";
  if (o.check_nodes) return "--check-nodes";
  if (!o.trace.empty()) return "--trace";
  if (o.plan.recompute == "auto") return "--recompute auto (--recompute full works)";
  if (!o.memory_by_node.empty()) return "--memory-by-node";
  if (!o.faults.fail_at_node.empty() || !o.faults.kill_at_node.empty() || !o.faults.corrupt_at_node.empty()) {
    return "--fail-at-node, --kill-at-node or --corrupt-at-node (--inject-fault works)";
  }
  return "";
}

// A phase the SPMD run (without --pipeline) does not have: "" when it has it.
std::string missing_phase(const FaultInjection& faults) {
  if (!faults.at_phase) return "";
  const JobPhase phase = faults.at_phase->phase;
  if (phase == JobPhase::kShapeInference) {
    return "--inject-fault: autopar run without --pipeline has no shape-inference phase (every shape is fixed "
           "when the graph is built); run --pipeline N infers its stages' shapes";
  }
  if (phase == JobPhase::kSend) {
    return "--inject-fault: autopar run without --pipeline has no send phase (redistributions are "
           "collectives, never point-to-point sends); run --pipeline N sends between stages";
  }
  return "";
}

// A plan file brings its own mesh; --mesh, if given, must agree.
Expected<Plan> plan_from_file(const RunCommandOptions& o, const std::string& text, const Graph& graph, int ranks) {
  Expected<PlanFile> header = read_plan_header(text);
  if (!header) return make_error_like(header.error(), "{}: {}", o.plan_file, header.error().message);
  if (!header->graph.empty() && header->graph != graph.name) {
    return make_error("{}: planned for graph {} but this run builds {}", o.plan_file,
                      header->graph, graph.name);
  }
  PlanCliOptions cli = o.plan;
  cli.mesh = fmt::format("{}", fmt::join(header->mesh_shape, "x"));
  Expected<PlanOptions> options = to_plan_options(cli, graph);
  if (!options) return options.error();
  Expected<DeviceMesh> mesh = make_mesh(options->mesh_shape, options->hardware, options->mesh_options);
  if (!mesh) return mesh.error();
  Expected<Plan> plan = read_plan(text, graph, *mesh, options->hardware, ranks);
  if (!plan) return make_error_like(plan.error(), "{}: {}", o.plan_file, plan.error().message);
  return plan;
}

// plan_text: the --plan file's text (read once, by wants_grid).
Expected<Plan> make_run_plan(RunCommandOptions& o, const std::string& plan_text, const Graph& graph, int ranks) {
  if (!o.plan_file.empty()) return plan_from_file(o, plan_text, graph, ranks);
  if (o.plan.mesh.empty()) o.plan.mesh = fmt::format("{}", ranks);
  Expected<PlanOptions> options = to_plan_options(o.plan, graph);
  if (!options) return options.error();
  Expected<Plan> plan = make_plan(graph, *options);
  if (!plan) return plan.error();
  if (plan->choice.empty()) return make_error("no plan fits the memory budget");
  if (plan->mesh.num_devices() != ranks) {
    return make_error("mesh {} has {} devices but the job has {} ranks (mpirun -np {})",
                      mesh_shape_string(plan->mesh), plan->mesh.num_devices(), ranks,
                      plan->mesh.num_devices());
  }
  return plan;
}

int run_run(RunCommandOptions& o) {
  Expected<MpiSession> session = MpiSession::init(nullptr, nullptr);
  if (!session) return report_error(session.error());
  Communicator world = Communicator::world();
  if (Status s = start_job_phases(world.rank(), world.size(), o.faults.at_phase); !s) world.abort(s.error());
  return abort_job_on_exception(world, [&] {
    const int rank = world.rank();
    auto refuse = [&](const std::string& why) {
      return report_error(ErrorKind::kInput, fmt::format("rank {}: refusing to run: {}", rank, why));
    };
    if (o.graph.model.empty() && o.graph.graph_file.empty()) return refuse("give --model or --graph");
    if (!o.plan_file.empty() && !o.plan.baseline.empty()) return refuse("give --plan or --baseline, not both");
    // A layout named by its degrees with pp (pp2-fsdp2) asks for the pipeline.
    if (Expected<std::vector<int64_t>> mesh = parse_mesh_shape(o.plan.mesh.empty() ? std::to_string(world.size())
                                                                                  : o.plan.mesh);
        mesh && o.pipeline.degree.empty()) {
      Expected<std::optional<DegreeLayout>> layout = parse_degree_layout(o.plan.baseline, *mesh);
      if (layout && *layout && (*layout)->pipeline > 1) o.pipeline.degree = std::to_string((*layout)->pipeline);
    }
    std::string plan_text;
    Expected<bool> grid = wants_grid(o, plan_text);
    if (!grid) return refuse(grid.error().message);
    if (*grid) {
      if (std::string no = grid_refusal(o); !no.empty()) {
        return refuse(fmt::format("{} does not work with a pipeline yet (a run without --pipeline takes it)", no));
      }
      RunGridInput input{o.graph, o.plan, o.plan_file, plan_text, o.pipeline, o.steps, o.lr, o.seed, o.check};
      return run_grid(std::move(input), world);
    }
    if (!o.pipeline.schedule.empty() || !o.pipeline.microbatches.empty() || o.pipeline.stages_per_rank != 1) {
      return refuse("--schedule, --microbatches and --stages-per-rank need --pipeline N (or a plan with a pipeline)");
    }
    if (std::string no = missing_phase(o.faults); !no.empty()) return refuse(no);
    Expected<Graph> graph = load_graph(o.graph);
    if (!graph) return refuse(graph.error().message);
    Expected<Plan> plan = make_run_plan(o, plan_text, *graph, world.size());
    if (!plan) return refuse(plan.error().message);
    Expected<SpmdMesh> mesh = SpmdMesh::create(plan->mesh, world);
    if (!mesh) return refuse(mesh.error().message);
    std::optional<Optimizer> kind = parse_optimizer(o.plan.optimizer);
    if (!kind) return refuse(fmt::format("unknown optimizer {} (sgd, adamw)", o.plan.optimizer));
    if (rank == 0) {
      fmt::print("run: {} on mesh {} ({} ranks), plan {}, {} steps, {} lr {:g}, seed {}{}{}\n",
                 graph->name, mesh_shape_string(plan->mesh), world.size(), plan->label, o.steps,
                 optimizer_name(*kind), o.lr, o.seed,
                 plan->summary.uneven_nodes > 0
                     ? fmt::format(", {} nodes on uneven shards", plan->summary.uneven_nodes)
                     : "",
                 plan->summary.recomputed > 0
                     ? (plan->summary.recomputed_layers > 0
                            ? fmt::format(", {} whole layers recomputed ({} nodes)", plan->summary.recomputed_layers,
                                          plan->summary.recomputed)
                            : fmt::format(", {} activations recomputed", plan->summary.recomputed))
                     : "");
      std::fflush(stdout);
    }
    SpmdRunOptions run;
    run.steps = o.steps;
    run.optimizer = OptimizerConfig{.kind = *kind, .lr = o.lr};
    run.seed = o.seed;
    run.check = o.check;
    run.check_nodes = o.check_nodes;
    run.trace_path = o.trace;
    run.memory_by_node_path = o.memory_by_node;
    run.faults = o.faults;
    run.torch_values_dir = o.torch_values;
    Expected<SpmdRunResult> result = run_spmd_training(*graph, *plan, *mesh, run);
    if (!result) world.abort(result.error());
    if (!result->check_ok) return report_error(ErrorKind::kRuntime, fmt::format("rank {}: check failed", rank));
    return kExitOk;
  });
}

}  // namespace

Command add_run_command(CLI::App& parent) {
  auto o = std::make_shared<RunCommandOptions>();
  o->plan.hardware = "cpu";  // run measures this machine's CPUs
  o->plan.mesh = "";         // default: a 1-D mesh of all ranks
  CLI::App* app = parent.add_subcommand(
      "run", "Run a plan on MPI ranks (mpirun -np N autopar run ...) and check it against the "
             "unsplit model");
  add_graph_options(*app, o->graph);
  add_plan_options(*app, o->plan);
  app->add_option("--plan", o->plan_file, "Run this plan JSON (autopar plan --format json)")
      ->type_name("FILE");
  app->add_option("--pipeline", o->pipeline.degree,
                  "Pipeline degree N along mesh dim 0 (divides it); each stage group is sharded on the rest "
                  "(3-D run; docs/pipeline.md)")
      ->type_name("N");
  app->add_option("--schedule", o->pipeline.schedule,
                  "With --pipeline: gpipe, 1f1b (default), interleaved-1f1b or zb-h1");
  app->add_option("--microbatches", o->pipeline.microbatches,
                  "With --pipeline: microbatches M, the batch split by M (default: twice the degree)")
      ->type_name("M");
  app->add_option("--stages-per-rank", o->pipeline.stages_per_rank,
                  "With --pipeline: stages per pipeline rank V (interleaved-1f1b)")
      ->capture_default_str();
  app->add_option("--steps", o->steps, "Training steps")->capture_default_str()->check(CLI::PositiveNumber);
  app->add_option("--lr", o->lr, "Learning rate")->capture_default_str();
  app->add_option("--seed", o->seed, "Seed of the initial values")->capture_default_str();
  app->add_flag("--check", o->check,
                "Compare loss and every gradient with the unsplit model at each step");
  app->add_flag("--check-nodes", o->check_nodes,
                "Step 1: compare every node's output with the unsplit model and name the first "
                "that differs, with its strategy (finds where a failing --check goes wrong; "
                "slow: gathers every tensor, rank 0 keeps the whole graph's values)");
  app->add_option("--check-against-torch", o->torch_values,
                 "Start from the PyTorch exporter's values (autopar_export.py --with-values DIR) "
                 "and compare step 1's loss and gradients with PyTorch's")
      ->type_name("DIR");
  app->add_option("--trace", o->trace, "Write a Chrome trace of every rank")->type_name("FILE");
  app->add_option("--memory-by-node", o->memory_by_node,
                  "Write each node's predicted and measured (last step) bytes held while it runs, "
                  "as CSV: rank 0 to FILE, rank r to FILE.rank<r> (finds where a memory prediction "
                  "is off)")
      ->type_name("FILE");
  // Hidden: fault injection for tests.
  app->add_option("--fail-at-node", o->faults.fail_at_node)->group("");
  app->add_option("--kill-at-node", o->faults.kill_at_node)->group("");
  app->add_option("--corrupt-at-node", o->faults.corrupt_at_node)->group("");
  app->add_option("--fail-rank", o->faults.rank)->group("");
  add_inject_fault_option(*app, o->faults);
  return Command{app, [o] { return run_run(*o); }};
}

}  // namespace autopar
