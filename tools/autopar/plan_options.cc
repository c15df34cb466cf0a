#include "plan_options.h"

#include <cmath>
#include <limits>

#include "cli_output.h"
#include "progress.h"
#include "planner/baselines.h"
#include "sharding/mesh.h"

namespace autopar {
namespace {

// Values out of range are usage errors (exit 2, docs/cli.md), caught where
// the command line is parsed; to_plan_options checks them again for callers
// that fill PlanCliOptions in code.
CLI::Validator finite_number_at_least(double least, bool strictly, std::string what) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        double value = std::strtod(text.c_str(), nullptr);
        bool in_range = std::isfinite(value) && (strictly ? value > least : value >= least);
        return in_range ? "" : "must be " + what + ", got " + text;
      },
      what);
}
const CLI::Validator kPositiveSeconds = finite_number_at_least(0, true, "a positive number of seconds");
const CLI::Validator kNonNegativeGigabytes =
    finite_number_at_least(0, false, "a number of GB >= 0 (0: the profile's)");
const CLI::Validator kMeshShape(
    [](std::string& text) -> std::string {
      Expected<std::vector<int64_t>> shape = parse_mesh_shape(text);
      return shape ? "" : shape.error().message;
    },
    "SHAPE");

// CBC runs at most this many threads in its deterministic mode.
constexpr int kMaxThreads = 256;
constexpr int64_t kMaxInt32 = std::numeric_limits<int32_t>::max();

// Empty when `option` has the NAME=VALUE form of --cbc-option, else why not.
std::string cbc_option_error(const std::string& option) {
  size_t eq = option.find('=');
  if (eq == 0 || eq == std::string::npos || eq + 1 == option.size())
    return "takes NAME=VALUE (e.g. cuts=off), got '" + option + "'";
  return "";
}

// The solver's limits. The work limits decide where a hard solve stops, the
// same on an idle or a busy machine; the time limit is only a safety valve.
// Out-of-range values are usage errors (CLI11 names the option and value).
void add_solver_limit_options(CLI::App& app, PlanCliOptions& o) {
  app.add_option("--max-nodes", o.max_nodes,
                 "Branch-and-bound nodes the solver may search (0: the root only). A "
                 "deterministic limit: the same command gives the same plan on a busy machine")
      ->check(CLI::Range(int64_t{0}, kMaxInt32))
      ->capture_default_str();
  app.add_option("--max-lp-iterations", o.max_lp_iterations,
                 "Simplex iterations for each LP relaxation solved before branch and bound "
                 "(deterministic)")
      ->check(CLI::Range(int64_t{1}, kMaxInt32))
      ->capture_default_str();
  app.add_option("--time-limit", o.time_limit_s,
                 "Wall-clock safety valve in seconds; a plan it stops depends on the machine's "
                 "load (the plan says so)")
      ->check(kPositiveSeconds)
      ->capture_default_str();
  app.add_option("--threads", o.threads,
                 "Solver threads (above 1: CBC's deterministic parallel mode)")
      ->check(CLI::Range(1, kMaxThreads))
      ->capture_default_str();
  app.add_option("--cbc-option", o.cbc_options,
                 "Pass a parameter to CBC's branch and bound as NAME=VALUE (as `cbc -NAME VALUE`, "
                 "e.g. cuts=off); for experiments, repeatable. CBC ignores a name it does not "
                 "know (--solver-log shows its 'No match')")
      ->type_name("NAME=VALUE")
      ->check(CLI::Validator(cbc_option_error, "NAME=VALUE"));
  app.add_flag("--no-reduced-cost-fixing", o.no_reduced_cost_fixing,
               "When the LP relaxation is fractional, branch on the whole model instead of "
               "first fixing the columns whose reduced cost rules them out (for comparison)");
  app.add_flag("--no-target-pruning", o.no_target_pruning,
               "Solve the whole model instead of first the model pruned to the strategies that "
               "the pairwise dual bound leaves within a target just above it (for comparison)");
  app.add_option("--sweep-proof", o.sweep_proof,
                 "On 3+ dim meshes, what follows the mesh-dim sweeps: 'optimal' bounds their "
                 "answer by the whole problem's pairwise dual and solves the whole problem "
                 "restricted to the strategies that bound leaves (proving it optimal); 'bound' "
                 "the bound and gap only; 'none' neither")
      ->check(CLI::IsMember({"optimal", "bound", "none"}))
      ->capture_default_str();
  app.add_flag("--solver-log", o.solver_log,
               "Print CBC's and Clp's own log on stdout (mixed with the plan; for diagnosis)");
}

// The parser checked the ranges; PlanCliOptions filled in code is checked too.
Status set_solver_limits(const PlanCliOptions& cli, planner::SolverOptions& solver) {
  if (cli.max_nodes < 0 || cli.max_nodes > kMaxInt32)
    return make_error("--max-nodes must be between 0 and {}, got {}", kMaxInt32, cli.max_nodes);
  if (cli.max_lp_iterations < 1 || cli.max_lp_iterations > kMaxInt32)
    return make_error("--max-lp-iterations must be between 1 and {}, got {}", kMaxInt32,
                      cli.max_lp_iterations);
  if (!(cli.time_limit_s > 0) || !std::isfinite(cli.time_limit_s))
    return make_error("--time-limit must be positive, got {}", cli.time_limit_s);
  if (cli.threads < 1 || cli.threads > kMaxThreads)
    return make_error("--threads must be between 1 and {}, got {}", kMaxThreads, cli.threads);
  solver.max_nodes = static_cast<int32_t>(cli.max_nodes);
  solver.max_lp_iterations = static_cast<int32_t>(cli.max_lp_iterations);
  solver.time_limit_s = cli.time_limit_s;
  solver.threads = cli.threads;
  solver.verbose = cli.solver_log;
  solver.reduced_cost_fixing = !cli.no_reduced_cost_fixing;
  solver.target_pruning = !cli.no_target_pruning;
  solver.bound_sweeps = cli.sweep_proof != "none";
  solver.prove_sweeps = cli.sweep_proof == "optimal";
  for (const std::string& option : cli.cbc_options) {
    if (std::string why = cbc_option_error(option); !why.empty())
      return make_error("--cbc-option {}", why);
    size_t eq = option.find('=');
    solver.cbc_parameters.emplace_back(option.substr(0, eq), option.substr(eq + 1));
  }
  return ok_status();
}

}  // namespace

void add_plan_options(CLI::App& app, PlanCliOptions& o, bool with_baseline) {
  app.add_option("--mesh", o.mesh, "Device mesh shape, outermost dim first (e.g. 8x8, 2x4, 8x8x8)")
      ->check(kMeshShape)
      ->capture_default_str();
  app.add_option("--mesh-names", o.mesh_names, "Names of the mesh dims, comma-separated (e.g. dp,tp)");
  app.add_option("--intra-node-dims", o.intra_node_dims,
                 "How many innermost mesh dims use intra-node links (default: as many as fit "
                 "devices_per_node)");
  app.add_option("--hardware", o.hardware,
                 "Hardware profile: a built-in name (a100, b200, cpu, h100, h200) or a JSON file "
                 "(e.g. from `autopar calibrate`)")
      ->capture_default_str();
  app.add_option("--memory-gb", o.memory_gb,
                 "Memory budget per device in GB (1e9 bytes); default: the profile's device memory")
      ->check(kNonNegativeGigabytes);
  app.add_option("--optimizer", o.optimizer, "Optimizer whose state is counted in memory")
      ->check(CLI::IsMember({"adamw", "sgd"}))
      ->capture_default_str();
  app.add_option("--pin", o.pins,
                 "Force a placement: NODE=SHARDING or NODE.in<K>=SHARDING; NODE is a name, param "
                 "name or glob, or @param/@input/@buffer/@tangent/@grad/@loss (repeatable)");
  app.add_option("--constraints", o.constraints_file, "File of pins, one per line (# comments)")
      ->type_name("FILE");
  if (with_baseline) {
    app.add_option("--baseline", o.baseline,
                   "Evaluate an expert layout instead of solving freely: " + baseline_names_text());
  }
  add_solver_limit_options(app, o);
  app.add_option("--dump-ilp", o.dump_ilp, "Write the ILP to FILE (.lp for LP format, else MPS)")
      ->type_name("FILE");
  app.add_flag("--quiet", o.quiet, "No solver progress line on stderr (shown only on a terminal)");
  app.add_flag("--no-share-layers", o.no_share_layers,
               "Give every layer its own variables (slower; for checking the reduction)");
  app.add_flag("--own-end-layers", o.own_end_layers,
               "Share variables among the inner layers only; the first and last keep their own "
               "(exact where sharing may not be; llama3-8b b32 s8192 8x8: both 215.828 ms, in 3.9 s "
               "instead of 1.5 s)")
      ->excludes("--no-share-layers");
  app.add_flag("--prove-sharing", o.prove_sharing,
               "After solving with shared layers, prove that no unshared plan is cheaper, or find the "
               "cheaper one and take it when it fits (llama3-8b b32 s8192 8x8: proven exact in about "
               "2.5 s more; 1-D/2-D meshes)")
      ->excludes("--no-share-layers");
  app.add_flag("--even-only", o.even_only,
               "Shard a dim only where the mesh dim divides it (by default a dim may split into "
               "torch.chunk's uneven pieces, costed at the padded size; docs/sharding.md)");
  app.add_flag("--fold-followers", o.fold_followers,
               "Merge views and unary pointwise ops into their producer's ILP variables: a faster "
               "solve for the largest models, not exact (llama3-8b 8x8: +2.3% step time)");
  app.add_flag("--pair-activation-grads", o.pair_activation_grads,
               "Place the gradient flowing back to each activation as the activation is (Shard(d) "
               "with Shard(d); Partial with Replicate; Replicate with Replicate or Partial), as "
               "module-level tensor parallelism does; off by default, since the runtime "
               "redistributes gradients freely (models built here carry the links)");
  app.add_option("--mesh-solve", o.mesh_solve,
                 "whole: one ILP over every strategy; sweeps: a tied-dims seed, then pairs of mesh "
                 "dims re-solved with the others fixed (a local optimum, for 3+ dim meshes where "
                 "the whole ILP is too big); auto: whole up to 2 mesh dims, sweeps beyond")
      ->check(CLI::IsMember({"auto", "whole", "sweeps"}))
      ->capture_default_str();
  app.add_option("--recompute", o.recompute,
                 "Activation recomputation (checkpointing). none: keep every activation the "
                 "backward reads; auto: the ILP decides per tensor, together with the sharding, "
                 "which to drop after the forward and re-run before the backward (compute and "
                 "redistributions paid again, memory freed in between); full: whole layers, as "
                 "torchtitan's full activation checkpointing (each layer keeps its outputs and re-runs "
                 "the rest before its first backward read) (docs/recompute.md)")
      ->check(CLI::IsMember({"none", "auto", "full"}))
      ->capture_default_str();
}

Expected<PlannedGraph> load_and_plan(GraphOptions graph_options, const PlanCliOptions& cli) {
  if (graph_options.model.empty() && graph_options.graph_file.empty()) {
    graph_options.model = "llama3-8b";
  }
  Expected<Graph> graph = load_graph(graph_options);
  if (!graph) return graph.error();
  Expected<PlanOptions> options = to_plan_options(cli, *graph);
  if (!options) return options.error();
  Expected<Plan> plan = make_plan(*graph, *options);
  if (!plan) return plan.error();
  return PlannedGraph{std::move(*graph), std::move(*options), std::move(*plan)};
}

Expected<PlanOptions> to_plan_options(const PlanCliOptions& cli, const Graph& graph) {
  PlanOptions options;
  Expected<std::vector<int64_t>> shape = parse_mesh_shape(cli.mesh);
  if (!shape) return shape.error();
  options.mesh_shape = *shape;
  if (!cli.mesh_names.empty()) {
    Expected<std::vector<std::string>> names = parse_mesh_names(cli.mesh_names);
    if (!names) return names.error();
    options.mesh_options.names = *names;
  }
  if (cli.intra_node_dims >= 0) options.mesh_options.intra_node_dims = cli.intra_node_dims;
  Expected<HardwareProfile> hw = load_hardware(cli.hardware);
  if (!hw) return hw.error();
  options.hardware = *hw;
  if (cli.memory_gb < 0) return make_error("--memory-gb must be positive, got {}", cli.memory_gb);
  if (cli.memory_gb > 0) options.memory_budget_bytes = cli.memory_gb * 1e9;
  options.optimizer = *parse_optimizer(cli.optimizer);
  const int ndim = static_cast<int>(shape->size());
  for (const std::string& text : cli.pins) {
    Expected<PinSpec> pin = parse_pin(text, ndim);
    if (!pin) return pin.error();
    options.pins.push_back(*pin);
  }
  if (!cli.constraints_file.empty()) {
    Expected<std::string> contents = read_text_file(cli.constraints_file);
    if (!contents) return contents.error();
    Expected<std::vector<PinSpec>> pins = parse_pin_file(*contents, ndim, cli.constraints_file);
    if (!pins) return pins.error();
    options.pins.insert(options.pins.end(), pins->begin(), pins->end());
  }
  if (!cli.baseline.empty()) {
    Expected<DeviceMesh> mesh = make_mesh(options.mesh_shape, options.hardware, options.mesh_options);
    if (!mesh) return mesh.error();
    Expected<std::vector<PinSpec>> pins = baseline_pins(cli.baseline, graph, *mesh);
    if (!pins) return pins.error();
    options.pins.insert(options.pins.end(), pins->begin(), pins->end());
    options.label = cli.baseline;
  }
  Status limits = set_solver_limits(cli, options.solver);
  if (!limits) return limits.error();
  options.solver.progress = terminal_progress(stderr, cli.quiet);
  options.dump_ilp_path = cli.dump_ilp;
  options.share_layers = !cli.no_share_layers;
  options.own_end_layers = cli.own_end_layers;
  options.prove_sharing = cli.prove_sharing;
  options.sharding.even_only = cli.even_only;
  options.fold_followers = cli.fold_followers;
  options.pair_activation_grads = cli.pair_activation_grads;
  options.mesh_solve = *parse_mesh_solve(cli.mesh_solve);
  parse_recompute_mode(cli.recompute, options.recompute);
  return options;
}

}  // namespace autopar
