// `autopar schedule`: build a pipeline schedule (or load a custom one from
// CSV), validate it, lower its communication, simulate it and print the
// schedule, a Chrome trace or a summary with the bubble next to the theory.
// With --model, `--format stages` cuts the model into ranks x stages-per-rank
// stages and prints each stage's inferred boundary metadata (shape inference
// at microbatch size), checking --stage-shapes when given.
#include <fmt/format.h>

#include <map>
#include <memory>
#include <string>

#include "cli_output.h"
#include "commands.h"
#include "cost/hardware.h"
#include "graph_options.h"
#include "pipeline/lower.h"
#include "pipeline/schedule.h"
#include "pipeline/simulate.h"
#include "pipeline/stage_meta.h"
#include "pipeline/stages.h"
#include "pipeline/validate.h"

namespace autopar {
namespace {

using namespace autopar::pipeline;

struct ScheduleCliOptions {
  std::string schedule = "1f1b";
  int32_t ranks = 0;
  int32_t microbatches = 0;
  int32_t stages_per_rank = 1;
  std::string format = "summary";
  std::string out;
  std::string schedule_file;
  std::string durations;
  bool lower = false;
  // --format stages
  GraphOptions graph;  // model, batch (full batch), seq, layers, dtype
  std::string balance = "count";
  std::string hardware = "h100";
  std::string stage_shapes;
};

// The textbook bubble for a built-in schedule, as "formula = value".
std::string theory(ScheduleKind kind, double p, double m, double v) {
  switch (kind) {
    case ScheduleKind::kGPipe:
    case ScheduleKind::k1F1B:
      return fmt::format("(p-1)/(m+p-1) = {:.1f}%", 100 * (p - 1) / (m + p - 1));
    case ScheduleKind::kInterleaved1F1B:
      return fmt::format(
          "(p-1)/(v·m) of ideal time = {:.1f}%, as a fraction of the makespan "
          "{:.1f}%",
          100 * (p - 1) / (v * m), 100 * (p - 1) / (v * m + p - 1));
    case ScheduleKind::kZBH1:
      return fmt::format("about (p-1)/(3m) = {:.1f}% with F=I=W ((p-1)/(3m+p-1) = {:.1f}%)",
                         100 * (p - 1) / (3 * m), 100 * (p - 1) / (3 * m + p - 1));
  }
  return "";
}

Expected<Schedule> load_or_make(const ScheduleCliOptions& o, Expected<ScheduleKind>& kind) {
  if (!o.schedule_file.empty()) {
    Expected<std::string> text = read_text_file(o.schedule_file);
    if (!text) return text.error();
    Expected<Schedule> s = parse_schedule_csv(*text);
    if (!s) return make_error_like(s.error(), "{}: {}", o.schedule_file, s.error().message);
    return s;
  }
  if (!kind) return kind.error();
  if (o.ranks < 1 || o.microbatches < 1) {
    return make_error(
        "--ranks and --microbatches are required (at least 1) unless "
        "--schedule-file is given");
  }
  return make_schedule({*kind, o.ranks, o.microbatches, o.stages_per_rank});
}

std::string meta_list(const std::vector<TensorMeta>& metas) {
  std::vector<std::string> out;
  for (const TensorMeta& m : metas) out.push_back(to_string(m));
  return fmt::format("{}", fmt::join(out, ", "));
}

// The model at microbatch size: the full batch (--batch, else the model's
// default) divided by M; the user's full-batch inputs come from the first build.
Expected<std::string> run_stages(const ScheduleCliOptions& o) {
  if (o.graph.model.empty()) return make_error("--format stages needs --model");
  GraphOptions full = o.graph;
  Expected<Graph> full_graph = load_graph(full);
  if (!full_graph) return full_graph.error();
  std::map<std::string, TensorMeta> inputs;
  for (const Node& n : full_graph->nodes()) {
    if (n.is_placeholder() && n.kind == PlaceholderKind::kInput) inputs.emplace(n.name, n.meta());
  }
  Expected<std::map<std::string, TensorMeta>> micro = microbatch_metas(inputs, o.microbatches);
  if (!micro) return micro.error();
  GraphOptions small = o.graph;
  small.batch = micro->begin()->second.shape[0];
  Expected<Graph> graph = load_graph(small);
  if (!graph) return graph.error();
  Expected<HardwareProfile> hw = load_hardware(o.hardware);
  if (!hw) return hw.error();
  StageOptions so{o.ranks * o.stages_per_rank, o.ranks,
                  o.balance == "cost" ? StageBalance::kCost : StageBalance::kCount, &*hw, {}};
  Expected<std::vector<Stage>> stages = split_stages(*graph, so);
  if (!stages) return stages.error();
  Expected<PipelineMeta> meta = infer_pipeline(
      *graph, *stages, map_stages(o.ranks, o.stages_per_rank, StageMapping::kLoop), *micro);
  if (!meta) return meta.error();
  if (!o.stage_shapes.empty()) {
    Expected<std::string> text = read_text_file(o.stage_shapes);
    if (!text) return text.error();
    Expected<std::vector<GivenStageShapes>> given = parse_stage_shapes(*text);
    if (!given) return make_error_like(given.error(), "{}: {}", o.stage_shapes, given.error().message);
    if (Status ok = check_stage_shapes(meta->stages, *given); !ok) return ok.error();
  }
  std::string out = fmt::format("{} at microbatch batch {} ({} microbatches)\n", graph->name,
                                small.batch, o.microbatches) +
                    describe_stages(*graph, *stages);
  for (const StageMeta& m : meta->stages) {
    out += fmt::format("stage {} metas: in [{}] -> out [{}]\n", m.stage, meta_list(m.inputs),
                       meta_list(m.outputs));
  }
  out += fmt::format("{} metadata messages between ranks, {} same-rank hand-offs{}\n",
                     meta->messages.size(), meta->direct_hand_offs,
                     o.stage_shapes.empty() ? "" : "; given stage shapes match");
  return out;
}

int run_schedule(const ScheduleCliOptions& o) {
  if (o.format == "stages") {
    Expected<std::string> text = run_stages(o);
    if (!text) return report_error(text.error());
    Status written = write_output(*text, o.out);
    return written ? kExitOk : report_error(written.error());
  }
  Expected<ScheduleKind> kind = parse_schedule_kind(o.schedule);
  Expected<Schedule> schedule = load_or_make(o, kind);
  if (!schedule) return report_error(schedule.error());
  if (Status valid = validate_schedule(*schedule); !valid) {
    return report_error(ErrorKind::kInput, "invalid schedule: " + valid.error().message);
  }
  Expected<Durations> durations = parse_durations(o.durations);
  if (!durations) return report_error(durations.error());
  Schedule lowered = lower_communication(*schedule);
  const Schedule& shown = o.lower ? lowered : *schedule;
  std::string text;
  if (o.format == "text") {
    text = to_text(shown);
  } else if (o.format == "csv") {
    text = to_csv(shown);
  } else {
    SimulationResult result = simulate(lowered, *durations);
    if (result.deadlocked) return report_error(ErrorKind::kInput, "schedule deadlocks:\n" + result.deadlock);
    if (o.format == "trace") {
      text = to_chrome_trace(result);
    } else {
      std::string name = o.schedule_file.empty() ? o.schedule : o.schedule_file;
      text = fmt::format("schedule {}: {} ranks, {} stages, {} microbatches\n{}", name,
                         schedule->num_ranks, schedule->num_stages, schedule->num_microbatches,
                         summary(result));
      if (o.schedule_file.empty()) {
        text += "theory: " + theory(*kind, o.ranks, o.microbatches, o.stages_per_rank) + "\n";
      }
    }
  }
  if (Status written = write_output(text, o.out); !written) {
    return report_error(written.error());
  }
  return kExitOk;
}

}  // namespace

Command add_schedule_command(CLI::App& parent) {
  auto options = std::make_shared<ScheduleCliOptions>();
  CLI::App* app = parent.add_subcommand(
      "schedule", "Build, validate and simulate a pipeline-parallel schedule (docs/pipeline.md)");
  app->add_option("--schedule", options->schedule, "gpipe, 1f1b, interleaved-1f1b or zb-h1")
      ->capture_default_str();
  app->add_option("--ranks", options->ranks, "Pipeline ranks p");
  app->add_option("--microbatches", options->microbatches, "Microbatches m");
  app->add_option("--stages-per-rank", options->stages_per_rank,
                  "Stages per rank v (interleaved-1f1b)")
      ->capture_default_str();
  app->add_option("--format", options->format,
                  "summary: simulated makespan, bubble and peak activations; text or csv: the "
                  "schedule; trace: Chrome trace JSON of the simulation; stages: --model cut into "
                  "stages with inferred boundary metadata")
      ->check(CLI::IsMember({"csv", "stages", "summary", "text", "trace"}))
      ->capture_default_str();
  app->add_option("--out", options->out, "Write to this file instead of stdout");
  app->add_option("--schedule-file", options->schedule_file,
                  "Custom schedule: CSV, one row per rank, actions like 2F0 comma-separated");
  app->add_option("--durations", options->durations,
                  "Simulated durations, e.g. F=1,B=2,I=1,W=1,comm=0 (these are the defaults)");
  app->add_flag("--lower", options->lower,
                "text/csv: print the schedule with its SEND/RECV actions");
  app->add_option("--model", options->graph.model, "stages: built-in model to cut");
  app->add_option("--batch", options->graph.batch, "stages: full batch (split by --microbatches)");
  app->add_option("--seq", options->graph.seq, "stages: sequence length");
  app->add_option("--layers", options->graph.layers, "stages: number of layers");
  app->add_option("--balance", options->balance, "stages: cut by layer count or by cost")
      ->check(CLI::IsMember({"cost", "count"}))
      ->capture_default_str();
  app->add_option("--hardware", options->hardware, "stages: profile for --balance cost")
      ->capture_default_str();
  app->add_option("--stage-shapes", options->stage_shapes,
                  "stages: JSON file of given stage input/output metas to check");
  return Command{app, [options] { return run_schedule(*options); }};
}

}  // namespace autopar
