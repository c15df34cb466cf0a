// `autopar plan`: choose every node's sharding on a mesh (or evaluate an expert
// baseline) and print the plan as a summary, an annotated graph or JSON.
#include <memory>
#include <string>

#include "cli_output.h"
#include "commands.h"
#include "graph_options.h"
#include "plan_options.h"
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
};

int run_plan(PlanCommandOptions& options) {
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
  return Command{app, [options] { return run_plan(*options); }};
}

}  // namespace autopar
