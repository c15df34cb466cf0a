// The pipeline options of the planning subcommands (see pipeline_options.h).
#include "pipeline_options.h"

#include <charconv>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "pipeline/stage_meta.h"

namespace autopar {
Expected<std::optional<int32_t>> count_or_auto(const std::string& option, const std::string& text) {
  if (text == "auto") return std::optional<int32_t>{};
  int32_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 1) {
    return make_error("{} takes a positive count or auto, not '{}'", option, text);
  }
  return std::optional<int32_t>{value};
}

Expected<Graph> microbatch_graph(const GraphOptions& options, const Graph& full, int32_t microbatches) {
  if (!options.graph_file.empty()) return full;
  Expected<int64_t> rows = pipeline::microbatch_rows(full, microbatches);
  if (!rows) return make_error_like(rows.error(), "--microbatches {}: {}", microbatches, rows.error().message);
  GraphOptions small = options;
  small.batch = *rows;
  return load_graph(small);
}

void add_pipeline_options(CLI::App& app, PipelineCliOptions& o) {
  app.add_option("--pipeline", o.pipeline,
                 "Pipeline stages along mesh dim 0 (N divides it), or auto to search the degree, "
                 "microbatches and schedule; each stage group is sharded on the remaining mesh "
                 "(docs/pipeline.md, \"Planning pipeline and sharding together\")")
      ->type_name("N|auto");
  app.add_option("--schedule", o.schedule,
                 "With --pipeline: gpipe, 1f1b, interleaved-1f1b, zb-h1, or auto (searched; the default with "
                 "--pipeline auto, else 1f1b)");
  app.add_option("--microbatches", o.microbatches,
                 "With --pipeline: microbatches M, the batch split by M, or auto (default: twice the degree; "
                 "searched with --pipeline auto)")
      ->type_name("M|auto");
  app.add_option("--stages-per-rank", o.stages_per_rank, "With --pipeline: stages per pipeline rank V (interleaved-1f1b)")
      ->check(CLI::Range(1, 1 << 10))
      ->capture_default_str();
}

Status resolve_pipeline_options(PlanCliOptions& plan, PipelineCliOptions& pipeline) {
  // A layout named by its degrees (pp8-fsdp8-tp8): the pipeline and its stage groups' baseline.
  if (Expected<std::vector<int64_t>> mesh = parse_mesh_shape(plan.mesh); mesh) {
    Expected<std::optional<DegreeLayout>> layout = parse_degree_layout(plan.baseline, *mesh);
    if (!layout) return layout.error();
    if (*layout) {
      const std::string degree = std::to_string((*layout)->pipeline);
      if ((*layout)->pipeline > 1 && !pipeline.pipeline.empty() && pipeline.pipeline != degree) {
        return make_error("--pipeline {} disagrees with --baseline {} (pp{})", pipeline.pipeline, plan.baseline, degree);
      }
      if ((*layout)->pipeline > 1) pipeline.pipeline = degree;
      plan.baseline = (*layout)->stage_baseline;
    }
  }
  if (!pipeline.pipeline.empty() && plan.recompute == "auto") {
    return make_error_of(ErrorKind::kUsage,
                         "--recompute auto does not work with --pipeline yet: the ILP chooses recomputation for one "
                         "SPMD step, not per pipeline stage; use --recompute full (whole layers re-run in each "
                         "stage's backward) or plan without --pipeline");
  }
  if (pipeline.pipeline.empty() &&
      (!pipeline.schedule.empty() || !pipeline.microbatches.empty() || pipeline.stages_per_rank != 1)) {
    return make_error("--schedule, --microbatches and --stages-per-rank need --pipeline N|auto (or a --baseline "
                      "with pp, e.g. pp2-fsdp4)");
  }
  return ok_status();
}

std::variant<PlannedPipeline, Error> plan_pipeline(const GraphOptions& graph_in, const PlanCliOptions& plan_cli,
                                                   PipelineCliOptions options) {
  auto usage = [](const std::string& m) { return Error{m, ErrorKind::kUsage}; };
  GraphOptions graph_options = graph_in;
  if (graph_options.model.empty() && graph_options.graph_file.empty()) graph_options.model = "llama3-8b";
  Expected<std::optional<int32_t>> degree = count_or_auto("--pipeline", options.pipeline);
  if (!degree) return usage(degree.error().message);
  Expected<std::optional<int32_t>> microbatches =
      count_or_auto("--microbatches", options.microbatches.empty() ? "auto" : options.microbatches);
  if (!microbatches) return usage(microbatches.error().message);
  if (options.schedule.empty()) options.schedule = *degree ? "1f1b" : "auto";
  const bool search = !*degree || options.schedule == "auto" || options.microbatches == "auto";
  std::optional<pipeline::ScheduleKind> kind;
  if (options.schedule != "auto") {
    Expected<pipeline::ScheduleKind> parsed = pipeline::parse_schedule_kind(options.schedule);
    if (!parsed) return usage(parsed.error().message);
    kind = *parsed;
  }
  Expected<std::vector<int64_t>> mesh = parse_mesh_shape(plan_cli.mesh);
  if (!mesh) return usage(mesh.error().message);
  if (*degree) {
    if (Expected<std::vector<int64_t>> sub = pipeline_sub_mesh(*mesh, **degree); !sub) {
      return usage(sub.error().message);
    }
  }
  // One microbatch's graph: a built-in model at batch / M; a --graph file is one.
  Expected<Graph> full = load_graph(graph_options);
  if (!full) return full.error();
  MicrobatchGraph micro_graph = [&](int32_t m) { return microbatch_graph(graph_options, *full, m); };
  // A baseline applies to each stage group's sub-mesh, not to the whole mesh.
  PlanCliOptions whole_mesh = plan_cli;
  whole_mesh.baseline.clear();
  // --recompute full re-runs whole layers in the stages (PipelineOptions);
  // the stage groups are solved keeping every activation.
  const bool recompute_layers = plan_cli.recompute == "full";
  whole_mesh.recompute = "none";
  // Pins name the stage groups' mesh (the pipeline takes dim 0): they are
  // read against it, so they need a fixed degree.
  whole_mesh.pins.clear();
  whole_mesh.constraints_file.clear();
  Expected<PlanOptions> plan_options = to_plan_options(whole_mesh, *full);
  if (!plan_options) return plan_options.error();
  if (!plan_cli.pins.empty() || !plan_cli.constraints_file.empty()) {
    if (!*degree) return usage("--pin and --constraints need a fixed --pipeline degree: they name the stage groups' mesh");
    if (!plan_cli.baseline.empty()) return usage("give --pin/--constraints or --baseline, not both");
    Expected<std::vector<int64_t>> sub = pipeline_sub_mesh(*mesh, **degree);
    PlanCliOptions group = plan_cli;
    group.mesh = fmt::format("{}", fmt::join(*sub, "x"));
    group.mesh_names.clear();
    Expected<PlanOptions> pinned = to_plan_options(group, *full);
    if (!pinned) {
      return usage(fmt::format("{} (with --pipeline {}, pins name the stage groups' mesh {})", pinned.error().message,
                               **degree, group.mesh));
    }
    plan_options->pins = pinned->pins;
  }
  const std::string& baseline = plan_cli.baseline;
  PlannedPipeline out;
  out.options = *plan_options;
  if (search) {  // what the user fixed stays fixed
    PipelineSearchSpace space;
    space.degree = *degree;
    space.microbatches = *microbatches;
    space.schedule = kind;
    if (options.stages_per_rank > 1) space.interleaved_stages_per_rank = options.stages_per_rank;
    space.baseline = baseline;
    space.recompute_layers = recompute_layers;
    Expected<PipelineSearch> found = search_pipeline(micro_graph, *plan_options, space);
    if (!found) return found.error();
    out.search = "pipeline search (one solve per degree and microbatch count, shared by its schedules):\n" +
                 pipeline_candidates_table(*found) + "\n";
    out.graph = std::move(found->graph);
    out.plan = std::move(found->best);
  } else {
    PipelineOptions pipeline_options;
    pipeline_options.degree = **degree;
    pipeline_options.schedule = *kind;
    pipeline_options.stages_per_rank = options.stages_per_rank;
    pipeline_options.baseline = baseline;
    pipeline_options.recompute_layers = recompute_layers;
    pipeline_options.microbatches = *microbatches ? **microbatches : 2 * **degree;
    Expected<Graph> micro = micro_graph(pipeline_options.microbatches);
    if (!micro) return usage(micro.error().message);
    Expected<PipelinePlan> planned = make_pipeline_plan(*micro, *plan_options, pipeline_options);
    if (!planned) return planned.error();
    out.graph = std::move(*micro);
    out.plan = std::move(*planned);
  }
  return out;
}

}  // namespace autopar
