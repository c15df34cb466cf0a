// `autopar plan`: choose every node's sharding on a mesh (or evaluate an expert
// baseline) and print the plan as a summary, an annotated graph or JSON.
#include <charconv>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "cli_output.h"
#include "commands.h"
#include "graph_options.h"
#include "pipeline_options.h"
#include "plan_options.h"
#include "pipeline/stage_meta.h"
#include "pipeline_plan/pipeline_plan.h"
#include "pipeline_plan/torchtitan_export.h"
#include "planner/memory_bound.h"
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
  PipelineCliOptions pipeline;  // --pipeline N|auto and its schedule
};

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
  std::variant<PlannedPipeline, Error> planned = plan_pipeline(options.graph, options.plan, options.pipeline);
  if (const auto* error = std::get_if<Error>(&planned)) {
    return report_error(*error);
  }
  const Graph& graph = std::get<PlannedPipeline>(planned).graph;
  const PipelinePlan& plan = std::get<PlannedPipeline>(planned).plan;
  const std::string& preface = std::get<PlannedPipeline>(planned).search;
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
  if (Status s = write_output(text, options.out); !s) return report_error(s.error());
  if (!plan.fits) return report_error(ErrorKind::kInfeasible, pipeline_overflow(plan));
  return kExitOk;
}

int run_plan(PlanCommandOptions& options) {
  if (Status s = resolve_pipeline_options(options.plan, options.pipeline); !s) {
    return report_usage_error(s.error().message);
  }
  if (!options.pipeline.pipeline.empty()) return run_pipeline_plan(options);
  Expected<PlannedGraph> planned = load_and_plan(options.graph, options.plan);
  if (!planned) return report_error(planned.error());
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
    if (plan.choice.empty()) {
      return report_error(ErrorKind::kInfeasible, "no plan fits the memory budget: nothing to export");
    }
    text = torchtitan_text(graph, plan, nullptr);
  } else {
    text = plan_to_summary(graph, plan);
  }
  if (Status s = write_output(text, options.out); !s) return report_error(s.error());
  // The summary says it in its own lines; other formats are for programs.
  std::string warning = planner::time_limit_warning(plan.solver.stopped_by, plan.solver.time_limit_s);
  if (!warning.empty() && options.format != "summary") report_warning(warning);
  if (!plan.summary.fits) {
    // The summary on stdout says why; anywhere else, the error says it.
    if (plan.shortfall && (options.format != "summary" || !options.out.empty())) {
      return report_error(ErrorKind::kInfeasible, fmt::format("no plan fits: {}", planner::describe(*plan.shortfall)));
    }
    return report_error(ErrorKind::kInfeasible, plan.shortfall ? "no plan fits the memory budget (see above)"
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
  add_pipeline_options(*app, options->pipeline);
  return Command{app, [options] { return run_plan(*options); }};
}

}  // namespace autopar
