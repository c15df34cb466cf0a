// `autopar pipeline`: pipeline-parallel training on this MPI job's ranks, one
// rank per pipeline position, each holding --stages-per-rank stages:
//   mpirun -np 4 autopar pipeline --model llama3-debugmodel --schedule 1f1b
//          --microbatches 8 --steps 2 --check
// Every rank builds the model at the full batch (for the real inputs) and at
// the microbatch size (the graph its stages run), the same stages and schedule,
// then agrees on shape inference (pipeline_runtime/stage_setup.h) and runs the
// steps (pipeline_runtime/pipeline_run.h). Refusals happen on every rank alike;
// a failure on one rank during the run ends the job (MPI_Abort).
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli_output.h"
#include "cost/hardware.h"
#include "commands.h"
#include "fault_option.h"
#include "graph_options.h"
#include "pipeline_plan/pipeline_plan.h"
#include "pipeline_runtime/pipeline_run.h"
#include "pipeline_runtime/stage_recompute.h"

namespace autopar {
namespace {

using pipeline::PipelineRunOptions;
using pipeline::PipelineSetupOptions;

struct PipelineCommandOptions {
  GraphOptions graph;
  std::string schedule = "1f1b";
  int32_t microbatches = 0;
  int32_t stages_per_rank = 1;
  int64_t steps = 1;
  std::string optimizer = "sgd";
  double lr = 1e-3;
  uint64_t seed = 0;
  bool check = false;
  std::string stage_shapes;
  std::string balance = "auto";
  std::string hardware = "cpu";
  std::string recompute = "none";
  FaultInjection faults;  // --inject-fault only
};

constexpr double kMiB = 1024.0 * 1024.0;

// Each rank's measured peak beside the model's (pipeline_memory.h), then the
// memory check, in autopar run's words.
void print_memory(const pipeline::PipelineRunResult& r, bool check) {
  for (size_t k = 0; k < r.peak_bytes.size(); ++k) {
    const pipeline::RankMemory& m = r.predicted.at(k);
    const double predicted = static_cast<double>(m.peak_bytes);
    fmt::print("peak memory rank {}: {:.3f} MiB (held tensors, {} B), model predicts {:.3f} MiB ({} B, "
               "{:+.2f}%); predicted peak at {}: {}\n",
               k, r.peak_bytes[k] / kMiB, r.peak_bytes[k], predicted / kMiB, m.peak_bytes,
               predicted > 0 ? (r.peak_bytes[k] - predicted) / predicted * 100 : 0.0, m.peak_action,
               pipeline::describe_parts(m));
  }
  if (check) {
    fmt::print("memory check: largest |measured - predicted| {:.2f}% of the prediction (rank {}), "
               "tolerance {:g}%: {}\n",
               r.memory.error * 100, r.memory.worst_rank, r.memory.tolerance * 100,
               r.memory.ok ? "OK" : "FAILED");
  }
}

// The step the cost model predicts for these stages and this schedule: the
// pipeline planner on a mesh of one device per pipeline rank (so every stage
// runs whole), its stage durations fed to the schedule simulator.
Expected<PipelinePlan> predicted_step(const Graph& micro, const pipeline::PipelineSetup& setup,
                                      const HardwareProfile& hardware, const PipelineCommandOptions& o,
                                      pipeline::ScheduleKind kind) {
  PlanOptions plan_options;
  plan_options.mesh_shape = {setup.lowered.num_ranks};
  plan_options.hardware = hardware;
  plan_options.memory_budget_bytes = 1e18;  // the run decides what fits, not the planner
  std::optional<Optimizer> optimizer = parse_optimizer(o.optimizer);
  if (optimizer) plan_options.optimizer = *optimizer;
  PipelineOptions pipeline_options;
  pipeline_options.degree = setup.lowered.num_ranks;
  pipeline_options.schedule = kind;
  pipeline_options.microbatches = o.microbatches;
  pipeline_options.stages_per_rank = o.stages_per_rank;
  for (const pipeline::Stage& s : setup.stages) pipeline_options.stage_units.push_back(s.units);
  pipeline_options.recompute_layers = o.recompute == "full";
  Expected<PipelinePlan> plan = make_pipeline_plan(micro, plan_options, pipeline_options);
  if (!plan) return plan.error();
  return price_for_footprint(micro, plan_options, *plan);
}

void print_summary(const pipeline::PipelineSetup& setup, const pipeline::PipelineRunResult& r,
                   double inference_s, bool check, const Expected<PipelinePlan>& predicted,
                   const std::string& hardware) {
  fmt::print("{}: {:.1f} ms on the slowest rank ({} metadata messages, {} direct hand-offs on rank 0)\n",
             setup.inferred ? "shape inference" : "given stage shapes checked", inference_s * 1e3,
             setup.meta_messages_sent, setup.direct_hand_offs);
  std::string prediction = predicted ? fmt::format("; predicted {:.1f} ms, bubble {:.1f}% ({} cost model)",
                                                   predicted->step_time_s * 1e3,
                                                   predicted->simulation.bubble_fraction() * 100, hardware)
                                     : fmt::format("; no prediction: {}", predicted.error().message);
  for (size_t k = 0; k < r.steps.size(); ++k) {
    fmt::print("step {} time {:.1f} ms, bubble {:.1f}% (idle / (makespan x {} ranks)){}\n", k + 1,
               r.steps[k].makespan_s * 1e3, r.steps[k].bubble() * 100, r.steps[k].ranks, prediction);
  }
  if (predicted) {
    for (const PipelineStageCost& s : predicted->stages) {
      fmt::print("stage {} (rank {}) predicted per microbatch: F {:.3f} ms, B {:.3f} ms, send {:.3f} ms\n", s.stage,
                 s.rank, s.durations.f * 1e3, s.durations.b * 1e3, s.durations.comm * 1e3);
    }
  }
  print_memory(r, check);
}

// Every rank has every figure, so every rank reaches the same verdict.
int check_verdict(const pipeline::PipelineRunResult& r, int rank) {
  if (r.worst_ratio > 1) {
    return report_error(ErrorKind::kRuntime, fmt::format("rank {}: check failed (worst error {:.3g} x tolerance)", rank,
                                    r.worst_ratio));
  }
  if (!r.memory.ok) {
    return report_error(ErrorKind::kRuntime, fmt::format("rank {}: memory check failed: {}", rank, describe_worst(r.memory)));
  }
  return kExitOk;
}

int run_pipeline(const PipelineCommandOptions& o) {
  Expected<MpiSession> session = MpiSession::init(nullptr, nullptr);
  if (!session) return report_error(session.error());
  Communicator world = Communicator::world();
  if (Status s = start_job_phases(world.rank(), world.size(), o.faults.at_phase); !s) world.abort(s.error());
  return abort_job_on_exception(world, [&] {
    const int rank = world.rank();
    auto refuse = [&](const std::string& why) {
      return report_error(ErrorKind::kInput, fmt::format("rank {}: refusing to run: {}", rank, why));
    };
    if (!o.graph.graph_file.empty()) {
      return refuse("--graph: autopar pipeline runs the built-in models only (--model NAME); an "
                    "imported graph cannot be pipelined yet (run it with autopar run --graph)");
    }
    if (o.graph.model.empty()) return refuse("give --model NAME (a built-in model)");
    if (o.microbatches < 1) return refuse("give --microbatches (at least 1)");
    Expected<pipeline::ScheduleKind> kind = pipeline::parse_schedule_kind(o.schedule);
    if (!kind) return refuse(kind.error().message);
    Expected<Graph> full = load_graph(o.graph);
    if (!full) return refuse(full.error().message);
    Expected<int64_t> rows = pipeline::microbatch_rows(*full, o.microbatches);
    if (!rows) return refuse(rows.error().message);
    GraphOptions small = o.graph;
    small.batch = *rows;
    Expected<Graph> micro = load_graph(small);
    if (!micro) return refuse(micro.error().message);
    Expected<HardwareProfile> hardware = load_hardware(o.hardware);
    if (!hardware) return refuse(hardware.error().message);
    PipelineSetupOptions setup_options{*kind, o.microbatches, o.stages_per_rank, std::nullopt,
                                       &*hardware, std::nullopt, {}, false, {}};
    setup_options.recompute_layers = o.recompute == "full";
    if (o.balance != "auto") {
      setup_options.balance = o.balance == "cost" ? pipeline::StageBalance::kCost
                                                  : pipeline::StageBalance::kCount;
    }
    std::optional<Optimizer> optimizer = parse_optimizer(o.optimizer);
    if (!optimizer) return refuse(fmt::format("--optimizer {}: use sgd or adamw", o.optimizer));
    if (!o.stage_shapes.empty()) {
      // Only this rank may have the file: its errors end the job, never a hang.
      Expected<std::string> text = read_text_file(o.stage_shapes);
      if (!text) world.abort(text.error());
      auto given = pipeline::parse_stage_shapes(*text);
      if (!given) world.abort(make_error_like(given.error(), "{}: {}", o.stage_shapes, given.error().message));
      setup_options.stage_shapes = std::move(*given);
    }
    Expected<pipeline::PipelineSetup> setup = pipeline::setup_pipeline(*full, *micro, world, setup_options);
    if (!setup) return refuse(setup.error().message);
    Expected<double> inference_s = world.max_over_ranks(setup->inference_s);
    if (!inference_s) world.abort(inference_s.error());
    if (rank == 0) {
      fmt::print("pipeline: {} on {} ranks, {} stages, schedule {}, {} microbatches of {}, {} steps, "
                 "{} lr {:g}, seed {}{}\n",
                 full->name, world.size(), setup->stages.size(), o.schedule, o.microbatches, *rows,
                 o.steps, o.optimizer, o.lr, o.seed, pipeline::rerun_summary(setup->programs));
      std::fflush(stdout);
    }
    PipelineRunOptions run;
    run.steps = o.steps;
    run.optimizer = OptimizerConfig{.kind = *optimizer, .lr = o.lr};
    run.seed = o.seed;
    run.check = o.check;
    Expected<pipeline::PipelineRunResult> result =
        pipeline::run_pipeline_training(*full, *micro, *setup, world, run);
    if (!result) world.abort(result.error());
    if (rank == 0) {
      Expected<PipelinePlan> predicted = predicted_step(*micro, *setup, *hardware, o, *kind);
      print_summary(*setup, *result, *inference_s, o.check, predicted, o.hardware);
    }
    std::fflush(stdout);
    return o.check ? check_verdict(*result, rank) : kExitOk;
  });
}

}  // namespace

Command add_pipeline_command(CLI::App& parent) {
  auto o = std::make_shared<PipelineCommandOptions>();
  CLI::App* app = parent.add_subcommand(
      "pipeline", "Pipeline-parallel training on MPI ranks (mpirun -np P autopar pipeline ...), "
                  "optionally checked against the single-process model");
  add_graph_options(*app, o->graph);
  app->add_option("--schedule", o->schedule, "gpipe, 1f1b, interleaved-1f1b or zb-h1")
      ->capture_default_str();
  app->add_option("--microbatches", o->microbatches, "Microbatches M (the batch is split by M)")
      ->required();
  app->add_option("--stages-per-rank", o->stages_per_rank, "Stages per rank V")->capture_default_str();
  app->add_option("--steps", o->steps, "Training steps")->capture_default_str()->check(CLI::PositiveNumber);
  app->add_option("--optimizer", o->optimizer, "sgd or adamw (state allocated before step 1)")
      ->check(CLI::IsMember({"adamw", "sgd"}))
      ->capture_default_str();
  app->add_option("--lr", o->lr, "Learning rate")->capture_default_str();
  app->add_option("--seed", o->seed, "Seed of the initial values and the data")->capture_default_str();
  app->add_flag("--check", o->check,
                "Compare the loss, every gradient and every parameter with the single-process "
                "full-batch run, and each rank's peak memory with the model's (5%)");
  app->add_option("--stage-shapes", o->stage_shapes,
                  "JSON of each stage's input/output metas: skip inference, check them instead")
      ->type_name("FILE");
  app->add_option("--recompute", o->recompute,
                  "none: every stage keeps what its backward reads; full: whole layers, as torchtitan's full "
                  "activation checkpointing: each stage drops its layers' activations after the forward and "
                  "re-runs them in the backward (docs/recompute.md)")
      ->check(CLI::IsMember({"none", "full"}))
      ->capture_default_str();
  app->add_option("--balance", o->balance,
                  "Cut stages by layer count or by cost; auto: count, else cost when the layers "
                  "cannot be spread evenly")
      ->check(CLI::IsMember({"auto", "cost", "count"}))
      ->capture_default_str();
  app->add_option("--hardware", o->hardware,
                  "Profile for --balance cost and the predicted step time (autopar calibrate --out FILE)")
      ->capture_default_str();
  add_inject_fault_option(*app, o->faults);
  return Command{app, [o] { return run_pipeline(*o); }};
}

}  // namespace autopar
