// `autopar report`: plan a model (same options as `autopar plan`) and write a
// self-contained HTML report of the plan (report/html_report.h), or the graph
// as SVG drawn by Graphviz (--format svg, report/svg_report.h).
#include <memory>
#include <string>

#include "cli_output.h"
#include "commands.h"
#include "graph_options.h"
#include "pipeline_options.h"
#include "pipeline_plan/pipeline_report.h"
#include "plan_options.h"
#include "planner/plan_output.h"
#include "report/html_report.h"
#include "report/memory_estimate.h"
#include "report/svg_report.h"

namespace autopar {
namespace {

struct ReportCommandOptions {
  GraphOptions graph;
  PlanCliOptions plan;
  PipelineCliOptions pipeline;
  std::string format = "html";
  std::string out;
};

// --pipeline: the stage groups' plan as the page's graph and memory, then the
// stages, the schedule's timeline and the search's candidates.
int run_pipeline_report(ReportCommandOptions& options) {
  if (options.format != "html") return report_usage_error("--format svg does not draw a pipeline yet: use html");
  std::variant<PlannedPipeline, Error> planned = plan_pipeline(options.graph, options.plan, options.pipeline);
  if (const auto* error = std::get_if<Error>(&planned)) {
    return report_error(*error);
  }
  const PlannedPipeline& p = std::get<PlannedPipeline>(planned);
  report::MemoryTimeline timeline = report::estimate_memory(p.graph, p.plan.spmd);
  std::string html = report::html_report(p.graph, p.plan.spmd, timeline, pipeline_report_html(p.graph, p.plan, p.search));
  if (Status s = write_output(html, options.out); !s) return report_error(s.error());
  return kExitOk;
}

int run_report(ReportCommandOptions& options) {
  if (Status s = resolve_pipeline_options(options.plan, options.pipeline); !s) {
    return report_usage_error(s.error().message);
  }
  if (!options.pipeline.pipeline.empty()) return run_pipeline_report(options);
  Expected<PlannedGraph> planned = load_and_plan(options.graph, options.plan);
  if (!planned) return report_error(planned.error());
  const Graph& graph = planned->graph;
  const Plan& plan = planned->plan;
  if (plan.choice.empty()) {
    // Nothing to draw: say why, as `autopar plan` does.
    return report_error(ErrorKind::kInfeasible,
                        plan_to_summary(graph, plan) +
                            "no plan fits the memory budget, so there is no report to draw; raise "
                            "--memory-gb or use a bigger mesh");
  }
  if (options.format == "svg") {
    report::GraphView view = report::build_graph_view(graph, plan);
    if (Status s = report::render_svg(report::graph_dot(graph, view), options.out); !s) {
      return report_error(s.error());
    }
    return kExitOk;
  }
  report::MemoryTimeline timeline = report::estimate_memory(graph, plan);
  std::string html = report::html_report(graph, plan, timeline);
  if (Status s = write_output(html, options.out); !s) return report_error(s.error());
  return kExitOk;
}

}  // namespace

Command add_report_command(CLI::App& parent) {
  auto options = std::make_shared<ReportCommandOptions>();
  CLI::App* app = parent.add_subcommand(
      "report", "Plan a model and write a self-contained HTML report (graph per layer, memory "
                "timeline, hotspots with pins, summary) or an SVG of the graph");
  add_graph_options(*app, options->graph, /*source_required=*/false);
  add_plan_options(*app, options->plan);
  app->add_option("--format", options->format,
                  "html: one self-contained page; svg: the graph drawn by Graphviz `dot` "
                  "(nodes up to 400, else one box per layer)")
      ->check(CLI::IsMember({"html", "svg"}))
      ->capture_default_str();
  add_pipeline_options(*app, options->pipeline);
  app->add_option("--out", options->out, "The file to write (report.html, graph.svg)")
      ->type_name("FILE")
      ->required();
  return Command{app, [options] { return run_report(*options); }};
}

}  // namespace autopar
