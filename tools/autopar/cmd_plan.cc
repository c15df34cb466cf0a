// `autopar plan`: choose every node's sharding on a mesh (or evaluate an expert
// baseline) and print the plan as a summary, an annotated graph or JSON.
#include <memory>
#include <string>

#include "cli_output.h"
#include "commands.h"
#include "graph_options.h"
#include "plan_options.h"
#include "pipeline/stage_meta.h"
#include "pipeline_plan/pipeline_plan.h"
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
  // --pipeline N: stages along mesh dim 0, each stage group sharded on the rest.
  int32_t pipeline = 0;
  std::string schedule = "1f1b";
  int32_t microbatches = 0;  // 0: twice the degree
  int32_t stages_per_rank = 1;
};

// `plan --pipeline N`: the graph built for one microbatch (a built-in model
// at batch / M; a --graph file is taken as one microbatch), then stages and
// sharding together (pipeline_plan/pipeline_plan.h).
int run_pipeline_plan(PlanCommandOptions& options) {
  GraphOptions graph_options = options.graph;
  if (graph_options.model.empty() && graph_options.graph_file.empty()) graph_options.model = "llama3-8b";
  Expected<pipeline::ScheduleKind> kind = pipeline::parse_schedule_kind(options.schedule);
  if (!kind) return report_usage_error(kind.error().message);
  Expected<std::vector<int64_t>> mesh = parse_mesh_shape(options.plan.mesh);
  if (!mesh) return report_usage_error(mesh.error().message);
  if (Expected<std::vector<int64_t>> sub = pipeline_sub_mesh(*mesh, options.pipeline); !sub) {
    return report_usage_error(sub.error().message);
  }
  PipelineOptions pipeline_options;
  pipeline_options.degree = options.pipeline;
  pipeline_options.schedule = *kind;
  pipeline_options.stages_per_rank = options.stages_per_rank;
  pipeline_options.microbatches = options.microbatches > 0 ? options.microbatches : 2 * options.pipeline;
  Expected<Graph> graph = load_graph(graph_options);
  if (!graph) return report_error(graph.error().message);
  if (graph_options.graph_file.empty()) {
    Expected<int64_t> rows = pipeline::microbatch_rows(*graph, pipeline_options.microbatches);
    if (!rows) {
      return report_usage_error(fmt::format("--microbatches {}: {}", pipeline_options.microbatches,
                                            rows.error().message));
    }
    graph_options.batch = *rows;
    graph = load_graph(graph_options);
    if (!graph) return report_error(graph.error().message);
  }
  Expected<PlanOptions> plan_options = to_plan_options(options.plan, *graph);
  if (!plan_options) return report_error(plan_options.error().message);
  Expected<PipelinePlan> plan = make_pipeline_plan(*graph, *plan_options, pipeline_options);
  if (!plan) return report_error(plan.error().message);
  std::string text;
  if (options.format == "json") {
    text = pipeline_plan_json(*graph, *plan);
  } else if (options.format == "summary") {
    text = pipeline_plan_summary(*graph, *plan);
  } else {
    return report_usage_error(fmt::format("--format {} does not show a pipeline plan yet: use summary or json",
                                          options.format));
  }
  if (Status s = write_output(text, options.out); !s) return report_error(s.error().message);
  if (!plan->fits) return report_error("the pipeline plan does not fit the memory budget (see the ranks' peaks)");
  return kExitOk;
}

int run_plan(PlanCommandOptions& options) {
  if (options.pipeline > 0) return run_pipeline_plan(options);
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
                  "module-boundary placements in PyTorch DTensor terms (docs/pytorch.md)")
      ->check(CLI::IsMember({"annotated", "dtensor", "json", "summary"}))
      ->capture_default_str();
  app->add_option("--out", options->out, "Write to this file instead of stdout")->type_name("FILE");
  app->add_flag("--timings", options->timings,
                "Include wall-clock solver times in the JSON (off: runs diff byte for byte)");
  app->add_option("--pipeline", options->pipeline,
                  "Pipeline degree N along mesh dim 0 (must divide it); each stage group is sharded on the "
                  "remaining mesh (docs/pipeline.md, \"Planning pipeline and sharding together\")")
      ->check(CLI::Range(1, 1 << 16));
  app->add_option("--schedule", options->schedule, "With --pipeline: gpipe, 1f1b, interleaved-1f1b or zb-h1")
      ->capture_default_str();
  app->add_option("--microbatches", options->microbatches,
                  "With --pipeline: microbatches M, the batch split by M (default: twice the degree)")
      ->check(CLI::Range(1, 1 << 20));
  app->add_option("--stages-per-rank", options->stages_per_rank,
                  "With --pipeline: stages per pipeline rank V (interleaved-1f1b)")
      ->check(CLI::Range(1, 1 << 10))
      ->capture_default_str();
  return Command{app, [options] { return run_plan(*options); }};
}

}  // namespace autopar
