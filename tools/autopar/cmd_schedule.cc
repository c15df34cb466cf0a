// `autopar schedule`: build a pipeline schedule (or load a custom one from
// CSV), validate it, lower its communication, simulate it and print the
// schedule, a Chrome trace or a summary with the bubble next to the theory.
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli_output.h"
#include "commands.h"
#include "pipeline/lower.h"
#include "pipeline/schedule.h"
#include "pipeline/simulate.h"
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
};

// The textbook bubble for a built-in schedule, as "formula = value".
std::string theory(ScheduleKind kind, double p, double m, double v) {
  switch (kind) {
    case ScheduleKind::kGPipe:
    case ScheduleKind::k1F1B:
      return fmt::format("(p-1)/(m+p-1) = {:.1f}%", 100 * (p - 1) / (m + p - 1));
    case ScheduleKind::kInterleaved1F1B:
      return fmt::format("(p-1)/(v·m) of ideal time = {:.1f}%, as a fraction of the makespan "
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
    if (!s) return make_error("{}: {}", o.schedule_file, s.error().message);
    return s;
  }
  if (!kind) return kind.error();
  if (o.ranks < 1 || o.microbatches < 1) {
    return make_error("--ranks and --microbatches are required (at least 1) unless "
                      "--schedule-file is given");
  }
  return make_schedule({*kind, o.ranks, o.microbatches, o.stages_per_rank});
}

int run_schedule(const ScheduleCliOptions& o) {
  Expected<ScheduleKind> kind = parse_schedule_kind(o.schedule);
  Expected<Schedule> schedule = load_or_make(o, kind);
  if (!schedule) return report_error(schedule.error().message);
  if (Status valid = validate_schedule(*schedule); !valid) {
    return report_error("invalid schedule: " + valid.error().message);
  }
  Expected<Durations> durations = parse_durations(o.durations);
  if (!durations) return report_error(durations.error().message);
  Schedule lowered = lower_communication(*schedule);
  const Schedule& shown = o.lower ? lowered : *schedule;
  std::string text;
  if (o.format == "text") {
    text = to_text(shown);
  } else if (o.format == "csv") {
    text = to_csv(shown);
  } else {
    SimulationResult result = simulate(lowered, *durations);
    if (result.deadlocked) return report_error("schedule deadlocks:\n" + result.deadlock);
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
    return report_error(written.error().message);
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
                  "schedule; trace: Chrome trace JSON of the simulation")
      ->check(CLI::IsMember({"csv", "summary", "text", "trace"}))
      ->capture_default_str();
  app->add_option("--out", options->out, "Write to this file instead of stdout");
  app->add_option("--schedule-file", options->schedule_file,
                  "Custom schedule: CSV, one row per rank, actions like 2F0 comma-separated");
  app->add_option("--durations", options->durations,
                  "Simulated durations, e.g. F=1,B=2,I=1,W=1,comm=0 (these are the defaults)");
  app->add_flag("--lower", options->lower,
                "text/csv: print the schedule with its SEND/RECV actions");
  return Command{app, [options] { return run_schedule(*options); }};
}

}  // namespace autopar
