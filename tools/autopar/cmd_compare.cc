// `autopar compare`: the expert baselines and the solved plan side by side,
// all in the same cost model (step time, communication, peak memory, fits).
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli_output.h"
#include "commands.h"
#include "graph_options.h"
#include "pipeline_options.h"
#include "plan_options.h"
#include "pipeline/stage_meta.h"
#include "pipeline_plan/pipeline_plan.h"
#include "planner/baselines.h"
#include "planner/plan_output.h"

namespace autopar {
namespace {

struct CompareOptions {
  GraphOptions graph;
  PlanCliOptions plan;
  std::vector<std::string> baselines;  // empty: all that apply to the mesh
  std::string baseline_recompute;      // none, full, both; empty: by --recompute
  std::string out;
  std::string pipeline;  // "": SPMD only; N or auto: pipeline layouts too
};

constexpr double kMiB = 1024.0 * 1024.0;

// One pipeline layout's row.
std::string pipeline_row(const std::string& name, const PipelinePlan& p) {
  double peak = 0;
  for (double b : p.rank_peak_bytes) peak = std::max(peak, b);
  return fmt::format("{:<22} {:<18} {:>3} {:>12} {:>12.3f} {:>9.1f}% {:>12.2f}  {}\n", name,
                     pipeline::schedule_kind_name(p.options.schedule), p.options.stages_per_rank,
                     p.options.microbatches, p.step_time_s * 1e3, p.simulation.bubble_fraction() * 100, peak / kMiB,
                     p.fits ? "fits" : "DOES NOT FIT");
}

// torchtitan-style layouts (ppP-fsdpF-tpT, microbatches of one row per data
// rank as torchtitan's default microbatch size, 1F1B and interleaved 1F1B)
// for every pipeline degree, then autopar's own pipeline search, in the same
// cost model.
std::string pipeline_table(const CompareOptions& options, const Graph& full, const PlanOptions& whole) {
  std::string text = fmt::format("\npipeline layouts along mesh dim 0 (same cost model):\n{:<22} {:<18} {:>3} {:>12} "
                                 "{:>12} {:>10} {:>12}\n",
                                 "layout", "schedule", "V", "microbatches", "step ms", "bubble", "peak MiB");
  std::vector<int32_t> degrees;
  const int64_t rows = whole.mesh_shape[0];
  if (options.pipeline == "auto") {
    for (int32_t d = 2; d <= rows; ++d) {
      if (rows % d == 0) degrees.push_back(d);
    }
  } else {
    degrees.push_back(std::stoi(options.pipeline));
  }
  for (int32_t degree : degrees) {
    Expected<std::vector<int64_t>> sub = pipeline_sub_mesh(whole.mesh_shape, degree);
    if (!sub) return text + sub.error().message + "\n";
    int64_t data = 1;
    for (size_t d = 0; d + 1 < sub->size(); ++d) data *= (*sub)[d];
    const bool tensor = sub->size() >= 2;
    if (!tensor) data = sub->front();
    std::string name = tensor ? fmt::format("pp{}-fsdp{}-tp{}", degree, data, sub->back())
                              : fmt::format("pp{}-fsdp{}", degree, data);
    Expected<int64_t> batch = pipeline::microbatch_rows(full, 1);
    const int32_t m = batch ? static_cast<int32_t>(*batch / data) : 0;
    Expected<Graph> micro = m >= 1 ? microbatch_graph(options.graph, full, m)
                                   : Expected<Graph>(make_error("the batch does not split over {} data ranks", data));
    if (!micro) {
      text += fmt::format("{:<22} not applicable: {}\n", name, micro.error().message);
      continue;
    }
    for (auto [kind, v] : {std::pair{pipeline::ScheduleKind::k1F1B, 1},
                           std::pair{pipeline::ScheduleKind::kInterleaved1F1B, 2}}) {
      PipelineOptions o;
      o.degree = degree;
      o.schedule = kind;
      o.microbatches = m;
      o.stages_per_rank = v;
      o.baseline = tensor ? "fsdp-tp" : "fsdp";
      Expected<PipelinePlan> p = make_pipeline_plan(*micro, whole, o);
      text += p ? pipeline_row(name, *p)
                : fmt::format("{:<22} {:<18} not applicable: {}\n", name, pipeline::schedule_kind_name(kind),
                              p.error().message);
    }
  }
  PipelineSearchSpace space;
  if (options.pipeline != "auto") space.degree = std::stoi(options.pipeline);
  MicrobatchGraph make = [&](int32_t m) { return microbatch_graph(options.graph, full, m); };
  Expected<PipelineSearch> found = search_pipeline(make, whole, space);
  text += found ? pipeline_row(fmt::format("autopar (pp{}, solved)", found->best.options.degree), found->best)
                : fmt::format("autopar (solved)       not applicable: {}\n", found.error().message);
  return text;
}

int run_compare(CompareOptions& options) {
  if (!options.pipeline.empty() && options.pipeline != "auto") {
    try {
      if (std::stoi(options.pipeline) < 2) throw std::invalid_argument("small");
    } catch (const std::exception&) {
      return report_usage_error(fmt::format("--pipeline {}: give a degree of 2 or more, or auto", options.pipeline));
    }
  }
  if (!options.pipeline.empty() && options.plan.recompute != "none") {
    return report_usage_error(fmt::format("--recompute {} does not work with compare --pipeline yet: the pipeline "
                                          "baselines are costed keeping every activation; plan one with autopar "
                                          "plan --pipeline N --recompute full",
                                          options.plan.recompute));
  }
  if (options.graph.model.empty() && options.graph.graph_file.empty()) options.graph.model = "llama3-8b";
  Expected<Graph> graph = load_graph(options.graph);
  if (!graph) return report_error(graph.error());
  std::vector<std::string> names = options.baselines;
  if (names.empty()) names = baseline_names();
  std::vector<Plan> plans;
  std::string notes;
  // Each baseline keeps every activation and, with --baseline-recompute
  // full or both, also re-runs whole layers (torchtitan's full AC).
  std::string variants = options.baseline_recompute;
  if (variants.empty()) variants = options.plan.recompute == "none" ? "none" : "both";
  std::vector<std::string> modes;
  if (variants != "full") modes.push_back("none");
  if (variants != "none") modes.push_back("full");
  for (const std::string& name : names) {
    for (const std::string& mode : modes) {
      PlanCliOptions cli = options.plan;
      cli.baseline = name;
      cli.recompute = mode;
      std::string label = mode == "full" ? name + "+full-ac" : name;
      Expected<PlanOptions> po = to_plan_options(cli, *graph);
      if (!po) {
        notes += fmt::format("{}: not applicable: {}\n", label, po.error().message);
        continue;
      }
      po->label = label;
      Expected<Plan> plan = make_plan(*graph, *po);
      if (!plan) {
        notes += fmt::format("{}: not applicable: {}\n", label, plan.error().message);
        continue;
      }
      plans.push_back(std::move(*plan));
    }
  }
  Expected<PlanOptions> po = to_plan_options(options.plan, *graph);
  if (!po) return report_error(po.error());
  if (options.plan.recompute != "none") po->label += "+" + options.plan.recompute + "-ac";
  Expected<Plan> solved = make_plan(*graph, *po);
  if (!solved) return report_error(solved.error());
  plans.push_back(std::move(*solved));
  std::vector<const Plan*> rows;
  for (const Plan& p : plans) rows.push_back(&p);
  std::string text = fmt::format("{} on mesh {}, hardware {}\n", graph->name,
                                 mesh_shape_string(plans.back().mesh), plans.back().hardware);
  text += compare_table(rows) + notes;
  if (!options.pipeline.empty()) text += pipeline_table(options, *graph, *po);
  if (Status s = write_output(text, options.out); !s) return report_error(s.error());
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
  app->add_option("--baseline-recompute", options->baseline_recompute,
                  "Cost each baseline keeping every activation (none), re-running whole layers (full, "
                  "torchtitan's full activation checkpointing; the row is named e.g. fsdp+full-ac), or both "
                  "(default: both when --recompute is auto or full, else none)")
      ->check(CLI::IsMember({"none", "full", "both"}));
  app->add_option("--out", options->out, "Write to this file instead of stdout")->type_name("FILE");
  app->add_option("--pipeline", options->pipeline,
                  "Also pipeline layouts along mesh dim 0: torchtitan's ppP-fsdpF-tpT with 1F1B and interleaved "
                  "1F1B (one row per data rank per microbatch), and autopar's own pipeline plan; N or auto (every "
                  "degree)")
      ->type_name("N|auto");
  return Command{app, [options] { return run_compare(*options); }};
}

}  // namespace autopar
