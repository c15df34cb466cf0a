// `autopar explain`: why the plan chose what it chose. With --node NAME, every
// strategy of that node with its compute and redistribution costs, the margin
// to the runner-up, and what pinning each other strategy costs overall
// (re-solved, capped at --resolves unless --all). With --memory, the
// estimated per-device memory peak and the tensors held there. With
// --pipeline N|auto, the node's stage and pipeline rank, then its strategy in
// the stage groups' solve; and each pipeline rank's peak by kind.
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli_output.h"
#include "commands.h"
#include "graph_options.h"
#include "pipeline_options.h"
#include "plan_options.h"
#include "report/explain.h"
#include "report/memory_estimate.h"
#include "report/report_text.h"

namespace autopar {
namespace {

struct ExplainCommandOptions {
  GraphOptions graph;
  PlanCliOptions plan;
  PipelineCliOptions pipeline;
  std::string node;
  int32_t resolves = 5;
  bool all = false;
  std::string output;
  bool memory = false;
  int32_t top = 10;
};

report::ExplainOptions explain_options(const ExplainCommandOptions& options) {
  return report::ExplainOptions{.max_resolves = options.all ? -1 : options.resolves, .only_output = options.output};
}

int run_pipeline_explain(ExplainCommandOptions& options) {
  std::variant<PlannedPipeline, Error> planned = plan_pipeline(options.graph, options.plan, options.pipeline);
  if (const auto* error = std::get_if<Error>(&planned)) {
    return report_error(*error);
  }
  const PlannedPipeline& p = std::get<PlannedPipeline>(planned);
  std::string text = p.search;
  if (options.memory) text += pipeline_memory_text(p.plan);
  if (!options.node.empty()) {
    Expected<std::string> where = pipeline_node_text(p.graph, p.plan, options.node);
    if (!where) return report_error(where.error());
    text += *where;
    Expected<PlanOptions> group =
        stage_group_options(p.graph, p.options, p.plan.options.degree, p.plan.options.baseline);
    if (!group) return report_error(group.error());
    Expected<report::NodeExplanation> e =
        report::explain_node(p.graph, p.plan.spmd, *group, options.node, explain_options(options));
    if (!e) return report_error(e.error());
    text += report::explanation_to_text(*e);
  }
  fmt::print("{}", text);
  return kExitOk;
}

int run_explain(ExplainCommandOptions& options) {
  if (options.node.empty() && !options.memory) {
    return report_usage_error("nothing to explain: give --node NAME and/or --memory");
  }
  if (Status s = resolve_pipeline_options(options.plan, options.pipeline); !s) {
    return report_usage_error(s.error().message);
  }
  if (!options.pipeline.pipeline.empty()) return run_pipeline_explain(options);
  Expected<PlannedGraph> planned = load_and_plan(options.graph, options.plan);
  if (!planned) return report_error(planned.error());
  const Graph& graph = planned->graph;
  const PlanOptions& plan_options = planned->options;
  const Plan& plan = planned->plan;
  if (plan.choice.empty()) {
    return report_error(ErrorKind::kInfeasible, "no plan fits the memory budget; nothing to explain");
  }
  std::string text;
  if (options.memory) {
    text += report::memory_timeline_to_text(report::estimate_memory(graph, plan), graph, options.top);
  }
  if (!options.node.empty()) {
    Expected<report::NodeExplanation> e =
        report::explain_node(graph, plan, plan_options, options.node, explain_options(options));
    if (!e) return report_error(e.error());
    text += report::explanation_to_text(*e);
  }
  fmt::print("{}", text);
  return kExitOk;
}

}  // namespace

Command add_explain_command(CLI::App& parent) {
  auto options = std::make_shared<ExplainCommandOptions>();
  CLI::App* app = parent.add_subcommand(
      "explain", "Why the plan chose a node's strategy (--node), and what drives its memory peak (--memory)");
  add_graph_options(*app, options->graph, /*source_required=*/false);
  add_plan_options(*app, options->plan);
  add_pipeline_options(*app, options->pipeline);
  app->add_option("--node", options->node, "The node to explain (a node name, see `autopar graph`)");
  app->add_option("--resolves", options->resolves,
                  "Re-solve with each of the N locally cheapest other strategies pinned")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app->add_option("--output", options->output,
                  "Re-solve only the strategies with this output placement (e.g. RR: what forcing the "
                  "output replicated costs)");
  app->add_flag("--all", options->all, "Re-solve with every other strategy pinned (slow on big nodes)");
  app->add_flag("--memory", options->memory, "Print the estimated memory peak and the tensors held there");
  app->add_option("--top", options->top, "How many tensors --memory lists")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  return Command{app, [options] { return run_explain(*options); }};
}

}  // namespace autopar
