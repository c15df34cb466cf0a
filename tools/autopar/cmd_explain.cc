// `autopar explain`: why the plan chose what it chose. With --node NAME, every
// strategy of that node with its compute and redistribution costs, the margin
// to the runner-up, and what pinning each other strategy costs overall
// (re-solved, capped at --resolves unless --all). With --memory, the
// estimated per-device memory peak and the tensors held there.
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli_output.h"
#include "commands.h"
#include "graph_options.h"
#include "plan_options.h"
#include "report/explain.h"
#include "report/memory_estimate.h"
#include "report/report_text.h"

namespace autopar {
namespace {

struct ExplainCommandOptions {
  GraphOptions graph;
  PlanCliOptions plan;
  std::string node;
  int32_t resolves = 5;
  bool all = false;
  std::string output;
  bool memory = false;
  int32_t top = 10;
};

int run_explain(ExplainCommandOptions& options) {
  if (options.node.empty() && !options.memory) {
    return report_error("nothing to explain: give --node NAME and/or --memory");
  }
  Expected<PlannedGraph> planned = load_and_plan(options.graph, options.plan);
  if (!planned) return report_error(planned.error().message);
  const Graph& graph = planned->graph;
  const PlanOptions& plan_options = planned->options;
  const Plan& plan = planned->plan;
  if (plan.choice.empty()) return report_error("no plan fits the memory budget; nothing to explain");
  std::string text;
  if (options.memory) {
    text += report::memory_timeline_to_text(report::estimate_memory(graph, plan), graph, options.top);
  }
  if (!options.node.empty()) {
    report::ExplainOptions explain{.max_resolves = options.all ? -1 : options.resolves,
                                   .only_output = options.output};
    Expected<report::NodeExplanation> e =
        report::explain_node(graph, plan, plan_options, options.node, explain);
    if (!e) return report_error(e.error().message);
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
