// `autopar compare`: the expert baselines and the solved plan side by side,
// all in the same cost model (step time, communication, peak memory, fits).
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli_output.h"
#include "commands.h"
#include "graph_options.h"
#include "plan_options.h"
#include "planner/baselines.h"
#include "planner/plan_output.h"

namespace autopar {
namespace {

struct CompareOptions {
  GraphOptions graph;
  PlanCliOptions plan;
  std::vector<std::string> baselines;  // empty: all that apply to the mesh
  std::string out;
};

int run_compare(CompareOptions& options) {
  if (options.graph.model.empty() && options.graph.graph_file.empty()) options.graph.model = "llama3-8b";
  Expected<Graph> graph = load_graph(options.graph);
  if (!graph) return report_error(graph.error().message);
  std::vector<std::string> names = options.baselines;
  if (names.empty()) names = baseline_names();
  std::vector<Plan> plans;
  std::string notes;
  for (const std::string& name : names) {
    PlanCliOptions cli = options.plan;
    cli.baseline = name;
    Expected<PlanOptions> po = to_plan_options(cli, *graph);
    if (!po) {
      notes += fmt::format("{}: not applicable: {}\n", name, po.error().message);
      continue;
    }
    Expected<Plan> plan = make_plan(*graph, *po);
    if (!plan) {
      notes += fmt::format("{}: not applicable: {}\n", name, plan.error().message);
      continue;
    }
    plans.push_back(std::move(*plan));
  }
  Expected<PlanOptions> po = to_plan_options(options.plan, *graph);
  if (!po) return report_error(po.error().message);
  Expected<Plan> solved = make_plan(*graph, *po);
  if (!solved) return report_error(solved.error().message);
  plans.push_back(std::move(*solved));
  std::vector<const Plan*> rows;
  for (const Plan& p : plans) rows.push_back(&p);
  std::string text = fmt::format("{} on mesh {}, hardware {}\n", graph->name,
                                 mesh_shape_string(plans.back().mesh), plans.back().hardware);
  text += compare_table(rows) + notes;
  if (Status s = write_output(text, options.out); !s) return report_error(s.error().message);
  return kExitOk;
}

}  // namespace

Command add_compare_command(CLI::App& parent) {
  auto options = std::make_shared<CompareOptions>();
  CLI::App* app = parent.add_subcommand(
      "compare", "Print the expert baselines and the solved plan side by side");
  add_graph_options(*app, options->graph, /*source_required=*/false);
  add_plan_options(*app, options->plan, /*with_baseline=*/false);
  app->add_option("--baselines", options->baselines,
                  "Baselines to compare (default: all): " + baseline_names_text())
      ->delimiter(',');
  app->add_option("--out", options->out, "Write to this file instead of stdout")->type_name("FILE");
  return Command{app, [options] { return run_compare(*options); }};
}

}  // namespace autopar
