// `autopar plan`: choose every node's sharding on a mesh (or evaluate an expert
// baseline) and print the plan as a summary, an annotated graph or JSON.
#include <charconv>
#include <memory>
#include <optional>
#include <string>

#include "cli_output.h"
#include "commands.h"
#include "graph_options.h"
#include "plan_options.h"
#include "pipeline/stage_meta.h"
#include "pipeline_plan/pipeline_plan.h"
#include "pipeline_plan/torchtitan_export.h"
#include "planner/plan_dtensor.h"
#include "planner/plan_output.h"

namespace autopar {
namespace {

struct PlanCommandOptions {
  GraphOptions graph;
  PlanCliOptions plan;
  std::string format = "summary";
  std::string out;
  bool timings = false;
  // --pipeline N|auto: stages along mesh dim 0, each stage group sharded on the rest.
  std::string pipeline;
  std::string schedule;  // "": searched with --pipeline auto, else 1f1b
  std::string microbatches;  // "": twice the degree; "auto": searched
  int32_t stages_per_rank = 1;
};

// A positive count, or "auto" (nullopt); anything else is a usage error.
Expected<std::optional<int32_t>> count_or_auto(const std::string& option, const std::string& text) {
  if (text == "auto") return std::optional<int32_t>{};
  int32_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 1) {
    return make_error("{} takes a positive count or auto, not '{}'", option, text);
  }
  return std::optional<int32_t>{value};
}

// torchtitan's settings for the plan; what they cannot say goes to stderr too.
std::string torchtitan_text(const Graph& graph, const Plan& plan, const PipelinePlan* pipeline) {
  TorchtitanConfig config = torchtitan_config(graph, plan, pipeline);
  for (const std::string& n : config.not_expressed) report_warning("torchtitan settings cannot say: " + n);
  return config.toml;
}

// `plan --pipeline N|auto`: the graph built for one microbatch (a built-in model
// at batch / M; a --graph file is taken as one microbatch), then stages and
// sharding together (pipeline_plan/pipeline_plan.h).
int run_pipeline_plan(PlanCommandOptions& options) {
  GraphOptions graph_options = options.graph;
  if (graph_options.model.empty() && graph_options.graph_file.empty()) graph_options.model = "llama3-8b";
  Expected<std::optional<int32_t>> degree = count_or_auto("--pipeline", options.pipeline);
  if (!degree) return report_usage_error(degree.error().message);
  Expected<std::optional<int32_t>> microbatches =
      count_or_auto("--microbatches", options.microbatches.empty() ? "auto" : options.microbatches);
  if (!microbatches) return report_usage_error(microbatches.error().message);
  if (options.schedule.empty()) options.schedule = *degree ? "1f1b" : "auto";
  const bool search = !*degree || options.schedule == "auto" || options.microbatches == "auto";
  std::optional<pipeline::ScheduleKind> kind;
  if (options.schedule != "auto") {
    Expected<pipeline::ScheduleKind> parsed = pipeline::parse_schedule_kind(options.schedule);
    if (!parsed) return report_usage_error(parsed.error().message);
    kind = *parsed;
  }
  Expected<std::vector<int64_t>> mesh = parse_mesh_shape(options.plan.mesh);
  if (!mesh) return report_usage_error(mesh.error().message);
  if (*degree) {
    if (Expected<std::vector<int64_t>> sub = pipeline_sub_mesh(*mesh, **degree); !sub) {
      return report_usage_error(sub.error().message);
    }
  }
  // One microbatch's graph: a built-in model at batch / M; a --graph file is one.
  Expected<Graph> full = load_graph(graph_options);
  if (!full) return report_error(full.error().message);
  MicrobatchGraph microbatch_graph = [&](int32_t m) -> Expected<Graph> {
    if (!graph_options.graph_file.empty()) return *full;
    Expected<int64_t> rows = pipeline::microbatch_rows(*full, m);
    if (!rows) return make_error("--microbatches {}: {}", m, rows.error().message);
    GraphOptions small = graph_options;
    small.batch = *rows;
    return load_graph(small);
  };
  // A baseline applies to each stage group's sub-mesh, not to the whole mesh.
  PlanCliOptions whole_mesh = options.plan;
  whole_mesh.baseline.clear();
  Expected<PlanOptions> plan_options = to_plan_options(whole_mesh, *full);
  if (!plan_options) return report_error(plan_options.error().message);
  const std::string& baseline = options.plan.baseline;
  Graph graph;
  PipelinePlan plan;
  std::string preface;
  if (search) {  // what the user fixed stays fixed
    PipelineSearchSpace space;
    space.degree = *degree;
    space.microbatches = *microbatches;
    space.schedule = kind;
    if (options.stages_per_rank > 1) space.interleaved_stages_per_rank = options.stages_per_rank;
    space.baseline = baseline;
    Expected<PipelineSearch> found = search_pipeline(microbatch_graph, *plan_options, space);
    if (!found) return report_error(found.error().message);
    preface = "pipeline search (one solve per degree and microbatch count, shared by its schedules):\n" +
              pipeline_candidates_table(*found) + "\n";
    graph = std::move(found->graph);
    plan = std::move(found->best);
  } else {
    PipelineOptions pipeline_options;
    pipeline_options.degree = **degree;
    pipeline_options.schedule = *kind;
    pipeline_options.stages_per_rank = options.stages_per_rank;
    pipeline_options.baseline = baseline;
    pipeline_options.microbatches = *microbatches ? **microbatches : 2 * **degree;
    Expected<Graph> micro = microbatch_graph(pipeline_options.microbatches);
    if (!micro) return report_usage_error(micro.error().message);
    Expected<PipelinePlan> planned = make_pipeline_plan(*micro, *plan_options, pipeline_options);
    if (!planned) return report_error(planned.error().message);
    graph = std::move(*micro);
    plan = std::move(*planned);
  }
  std::string text;
  if (options.format == "json") {
    text = pipeline_plan_json(graph, plan);
  } else if (options.format == "summary") {
    text = preface + pipeline_plan_summary(graph, plan);
  } else if (options.format == "torchtitan") {
    text = torchtitan_text(graph, plan.spmd, &plan);
  } else {
    return report_usage_error(fmt::format("--format {} does not show a pipeline plan yet: use summary, json or "
                                          "torchtitan",
                                          options.format));
  }
  if (Status s = write_output(text, options.out); !s) return report_error(s.error().message);
  if (!plan.fits) return report_error(pipeline_overflow(plan));
  return kExitOk;
}

int run_plan(PlanCommandOptions& options) {
  // A layout named by its degrees (pp8-fsdp8-tp8): the pipeline and its stage groups' baseline.
  if (Expected<std::vector<int64_t>> mesh = parse_mesh_shape(options.plan.mesh); mesh) {
    Expected<std::optional<DegreeLayout>> layout = parse_degree_layout(options.plan.baseline, *mesh);
    if (!layout) return report_usage_error(layout.error().message);
    if (*layout) {
      const std::string degree = std::to_string((*layout)->pipeline);
      if ((*layout)->pipeline > 1 && !options.pipeline.empty() && options.pipeline != degree) {
        return report_usage_error(fmt::format("--pipeline {} disagrees with --baseline {} (pp{})", options.pipeline,
                                              options.plan.baseline, degree));
      }
      if ((*layout)->pipeline > 1) options.pipeline = degree;
      options.plan.baseline = (*layout)->stage_baseline;
    }
  }
  if (!options.pipeline.empty()) return run_pipeline_plan(options);
  if (!options.schedule.empty() || !options.microbatches.empty() || options.stages_per_rank != 1) {
    return report_usage_error("--schedule, --microbatches and --stages-per-rank need --pipeline N|auto (or a "
                              "--baseline with pp, e.g. pp2-fsdp4)");
  }
  Expected<PlannedGraph> planned = load_and_plan(options.graph, options.plan);
  if (!planned) return report_error(planned.error().message);
  const Graph& graph = planned->graph;
  const Plan& plan = planned->plan;
  std::string text;
  if (options.format == "json") {
    text = plan_to_json(graph, plan, options.timings);
  } else if (options.format == "dtensor") {
    text = plan_to_dtensor_json(graph, plan);
  } else if (options.format == "annotated") {
    text = plan_to_annotated(graph, plan);
  } else if (options.format == "torchtitan") {
    if (plan.choice.empty()) return report_error("no plan fits the memory budget: nothing to export");
    text = torchtitan_text(graph, plan, nullptr);
  } else {
    text = plan_to_summary(graph, plan);
  }
  if (Status s = write_output(text, options.out); !s) return report_error(s.error().message);
  // The summary says it in its own lines; other formats are for programs.
  std::string warning = planner::time_limit_warning(plan.solver.stopped_by, plan.solver.time_limit_s);
  if (!warning.empty() && options.format != "summary") report_warning(warning);
  if (!plan.summary.fits) {
    return report_error(plan.shortfall ? "no plan fits the memory budget (see above)"
                                        : "the plan does not fit the memory budget");
  }
  return kExitOk;
}

}  // namespace

Command add_plan_command(CLI::App& parent) {
  auto options = std::make_shared<PlanCommandOptions>();
  CLI::App* app = parent.add_subcommand(
      "plan", "Choose every node's sharding on a device mesh (default: llama3-8b on 8x8 H100)");
  add_graph_options(*app, options->graph, /*source_required=*/false);
  add_plan_options(*app, options->plan);
  app->add_option("--format", options->format,
                  "summary: a table for people; annotated: the graph with each node's "
                  "placements and costs; json: the plan (docs/plan-format.md); dtensor: parameter and "
                  "module-boundary placements in PyTorch DTensor terms (docs/pytorch.md); torchtitan: the "
                  "[parallelism] settings of a torchtitan job config (TOML), with what they cannot say")
      ->check(CLI::IsMember({"annotated", "dtensor", "json", "summary", "torchtitan"}))
      ->capture_default_str();
  app->add_option("--out", options->out, "Write to this file instead of stdout")->type_name("FILE");
  app->add_flag("--timings", options->timings,
                "Include wall-clock solver times in the JSON (off: runs diff byte for byte)");
  app->add_option("--pipeline", options->pipeline,
                  "Pipeline degree N along mesh dim 0 (must divide it), or auto to search the degree, "
                  "microbatches and schedule; each stage group is sharded on the remaining mesh "
                  "(docs/pipeline.md, \"Planning pipeline and sharding together\")")
      ->type_name("N|auto");
  app->add_option("--schedule", options->schedule,
                  "With --pipeline: gpipe, 1f1b, interleaved-1f1b, zb-h1, or auto (searched; the default with "
                  "--pipeline auto, else 1f1b)");
  app->add_option("--microbatches", options->microbatches,
                  "With --pipeline: microbatches M, the batch split by M, or auto (default: twice the degree; "
                  "searched with --pipeline auto)")
      ->type_name("M|auto");
  app->add_option("--stages-per-rank", options->stages_per_rank,
                  "With --pipeline: stages per pipeline rank V (interleaved-1f1b)")
      ->check(CLI::Range(1, 1 << 10))
      ->capture_default_str();
  return Command{app, [options] { return run_plan(*options); }};
}

}  // namespace autopar
