// 3-D planning: stages along mesh dim 0, each stage group sharded by one solve
// of the microbatch graph on the rest of the mesh; the step time from the
// schedule simulator on each stage's planned costs.
#include "pipeline_plan/pipeline_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "cost/hardware.h"
#include "models/registry.h"
#include "pipeline/stages.h"
#include "pipeline_plan/pipeline_report.h"
#include "pipeline_plan/torchtitan_export.h"
#include "pipeline_runtime/partition.h"

namespace autopar {
namespace {

// llama3-debugmodel at batch 8 split into 4 microbatches: the graph of one.
Graph microbatch_graph() {
  ModelOptions model;
  model.name = "llama3-debugmodel";
  model.batch = 2;
  Expected<Graph> g = build_model(model);
  EXPECT_TRUE(g) << g.error().message;
  return std::move(*g);
}

PlanOptions plan_options(std::vector<int64_t> mesh) {
  PlanOptions o;
  o.mesh_shape = std::move(mesh);
  Expected<HardwareProfile> hw = load_hardware("h100");
  EXPECT_TRUE(hw) << hw.error().message;
  o.hardware = *hw;
  return o;
}

PipelineOptions pipeline_options(pipeline::ScheduleKind kind, int32_t degree, int32_t microbatches) {
  PipelineOptions p;
  p.schedule = kind;
  p.degree = degree;
  p.microbatches = microbatches;
  return p;
}

TEST(PipelinePlan, TheSubMeshDividesDimZeroAndDropsADimOfOne) {
  EXPECT_EQ(*pipeline_sub_mesh({8, 8, 8}, 8), (std::vector<int64_t>{8, 8}));
  EXPECT_EQ(*pipeline_sub_mesh({4, 8}, 2), (std::vector<int64_t>{2, 8}));
  EXPECT_EQ(*pipeline_sub_mesh({2}, 2), (std::vector<int64_t>{1}));
  Expected<std::vector<int64_t>> bad = pipeline_sub_mesh({6, 8}, 4);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("does not divide mesh dim 0 (6)"), std::string::npos) << bad.error().message;
}

// Every planned second of the microbatch graph lands in exactly one stage:
// the stages' forwards, backwards and gradient syncs add up to the SPMD
// plan's compute and communication, their updates to its optimizer time.
TEST(PipelinePlan, StagesShareOutTheMicrobatchPlanExactly) {
  Graph g = microbatch_graph();
  Expected<PipelinePlan> plan =
      make_pipeline_plan(g, plan_options({2, 2}), pipeline_options(pipeline::ScheduleKind::k1F1B, 2, 4));
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->stages.size(), 2u);
  EXPECT_EQ(plan->sub_mesh, (std::vector<int64_t>{2}));
  double per_microbatch = 0, sync = 0, updates = 0;
  for (const PipelineStageCost& s : plan->stages) {
    EXPECT_EQ(s.rank, s.stage);
    EXPECT_GT(s.durations.f, 0);
    EXPECT_GT(s.durations.b, s.durations.f * 0.5);
    EXPECT_NEAR(s.durations.i + s.durations.w, s.durations.b, 1e-12);
    // Stage 0 sends its output forward, stage 1 the output's gradient back.
    EXPECT_GT(s.stage == 0 ? s.send_bytes : s.send_grad_bytes, 0);
    EXPECT_GT(s.durations.comm, 0);
    per_microbatch += s.durations.f + s.durations.b;
    sync += s.grad_sync_s;
    updates += s.optimizer_s;
  }
  const PlanSummary& spmd = plan->spmd.summary;
  EXPECT_NEAR(per_microbatch + sync, spmd.compute_s + spmd.comm_s, 1e-9 * (spmd.compute_s + spmd.comm_s));
  EXPECT_NEAR(updates, spmd.optimizer_s, 1e-9 * spmd.optimizer_s);
  // The slowest stage runs all 4 microbatches forward and backward.
  double slowest = 0;
  for (const PipelineStageCost& s : plan->stages) slowest = std::max(slowest, s.durations.f + s.durations.b);
  EXPECT_GE(plan->simulation.makespan, 4 * slowest);
  EXPECT_GT(plan->step_time_s, plan->simulation.makespan);
}

// Activations in flight as the schedule keeps them: 1F1B holds p - r
// microbatches on rank r, GPipe all of them; memory follows.
TEST(PipelinePlan, MemoryCountsTheMicrobatchesTheScheduleKeepsInFlight) {
  Graph g = microbatch_graph();
  Expected<PipelinePlan> one_f_one_b =
      make_pipeline_plan(g, plan_options({2, 2}), pipeline_options(pipeline::ScheduleKind::k1F1B, 2, 4));
  Expected<PipelinePlan> gpipe =
      make_pipeline_plan(g, plan_options({2, 2}), pipeline_options(pipeline::ScheduleKind::kGPipe, 2, 4));
  ASSERT_TRUE(one_f_one_b && gpipe);
  EXPECT_EQ(one_f_one_b->simulation.peak_in_flight, (std::vector<int32_t>{2, 1}));
  EXPECT_EQ(gpipe->simulation.peak_in_flight, (std::vector<int32_t>{4, 4}));
  // GPipe keeps every microbatch's activations; 1F1B at most p - r.
  for (size_t r = 0; r < 2; ++r) EXPECT_GT(gpipe->rank_peak_bytes[r], one_f_one_b->rank_peak_bytes[r]);
}

// The plan's rank peaks are the stage runtime's memory model with the plan's
// local sizes, the figure a 3-D run is checked against.
TEST(PipelinePlan, RankPeaksAreTheRuntimesMemoryModel) {
  Graph g = microbatch_graph();
  PipelineOptions fsdp = pipeline_options(pipeline::ScheduleKind::k1F1B, 2, 4);
  fsdp.baseline = "fsdp";  // sharded for certain
  Expected<PipelinePlan> plan = make_pipeline_plan(g, plan_options({2, 2}), fsdp);
  ASSERT_TRUE(plan) << plan.error().message;
  pipeline::StageOptions cut{2, 2, pipeline::StageBalance::kGiven, nullptr, {}};
  for (const PipelineStageCost& s : plan->stages) cut.given_units.push_back(s.units);
  Expected<std::vector<pipeline::Stage>> stages = pipeline::split_stages(g, cut);
  ASSERT_TRUE(stages) << stages.error().message;
  Expected<std::vector<pipeline::StageProgram>> programs = pipeline::partition_stages(g, *stages);
  ASSERT_TRUE(programs) << programs.error().message;
  const pipeline::ShardedValues values = sharded_values(g, plan->spmd);
  pipeline::PipelineMemoryInput input{&g, &*stages, &*programs, &plan->schedule,
                                      optimizer_bytes_per_element(Optimizer::kAdamW), &values};
  Expected<std::vector<pipeline::RankMemory>> peaks = pipeline::predict_pipeline_memory(input);
  ASSERT_TRUE(peaks) << peaks.error().message;
  for (size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(plan->rank_peak_bytes[r], static_cast<double>((*peaks)[r].peak_bytes));
    // Sharded: less than the whole tensors the same schedule would hold.
    pipeline::PipelineMemoryInput whole = input;
    whole.sharded = nullptr;
    Expected<pipeline::RankMemory> unsplit = pipeline::predict_rank_memory(whole, static_cast<int32_t>(r));
    ASSERT_TRUE(unsplit);
    EXPECT_LT((*peaks)[r].peak_bytes, unsplit->peak_bytes);
  }
}

TEST(PipelinePlan, AScheduleTheMicrobatchesCannotMakeIsRefusedBeforeAnySolve) {
  Graph g = microbatch_graph();
  PipelineOptions interleaved = pipeline_options(pipeline::ScheduleKind::kInterleaved1F1B, 2, 3);
  interleaved.stages_per_rank = 2;
  Expected<PipelinePlan> plan = make_pipeline_plan(g, plan_options({2, 2}), interleaved);
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message.find("multiple of ranks: 3 microbatches"), std::string::npos)
      << plan.error().message;
}

// Interleaved: two stages per rank, four stages in all, the loop mapping.
TEST(PipelinePlan, InterleavedStagesGoRoundTheRanks) {
  Graph g = microbatch_graph();
  PipelineOptions interleaved = pipeline_options(pipeline::ScheduleKind::kInterleaved1F1B, 2, 4);
  interleaved.stages_per_rank = 2;
  Expected<PipelinePlan> plan = make_pipeline_plan(g, plan_options({2, 2}), interleaved);
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->stages.size(), 4u);
  for (const PipelineStageCost& s : plan->stages) EXPECT_EQ(s.rank, s.stage % 2);
  EXPECT_FALSE(plan->simulation.deadlocked);
}

TEST(PipelinePlan, TheJsonNamesEachRanksDevicesAndEachStage) {
  Graph g = microbatch_graph();
  Expected<PipelinePlan> plan =
      make_pipeline_plan(g, plan_options({2, 2}), pipeline_options(pipeline::ScheduleKind::k1F1B, 2, 4));
  ASSERT_TRUE(plan);
  nlohmann::json doc = nlohmann::json::parse(pipeline_plan_json(g, *plan));
  const nlohmann::json& p = doc["pipeline"];
  EXPECT_EQ(p["degree"], 2);
  EXPECT_EQ(p["schedule"], "1f1b");
  EXPECT_EQ(p["ranks"][0]["devices"], (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(p["ranks"][1]["devices"], (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(p["stages"].size(), 2u);
  EXPECT_EQ(p["stages"][0]["units"][0], "tok_embeddings");
  EXPECT_DOUBLE_EQ(p["step_time_s"].get<double>(), plan->step_time_s);
  EXPECT_TRUE(doc.contains("strategies") || doc.contains("nodes")) << "the per-stage SPMD plan travels with it";
}

// A baseline lays out every stage group on the sub-mesh: fsdp-tp with degree
// 2 on 4x2 is pp2 x dp_shard2 x tp2. The free solve of the same microbatch
// graph on the same sub-mesh is never worse by its own objective.
TEST(PipelinePlan, ABaselineLaysOutEachStageGroupOnTheSubMesh) {
  Graph g = microbatch_graph();
  PipelineOptions expert = pipeline_options(pipeline::ScheduleKind::k1F1B, 2, 4);
  expert.baseline = "fsdp-tp";
  Expected<PipelinePlan> pinned = make_pipeline_plan(g, plan_options({4, 2}), expert);
  Expected<PipelinePlan> free_plan =
      make_pipeline_plan(g, plan_options({4, 2}), pipeline_options(pipeline::ScheduleKind::k1F1B, 2, 4));
  ASSERT_TRUE(pinned) << pinned.error().message;
  ASSERT_TRUE(free_plan) << free_plan.error().message;
  EXPECT_EQ(pinned->spmd.label, "fsdp-tp");
  EXPECT_EQ(pinned->spmd.mesh.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_LE(free_plan->spmd.solver.objective, pinned->spmd.solver.objective * (1 + 1e-9));
  PlanOptions with_pin = plan_options({4, 2});
  with_pin.pins.push_back(PinSpec{});
  Expected<PipelinePlan> refused = make_pipeline_plan(g, with_pin, expert);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("pins and a baseline together"), std::string::npos);
}

// --pipeline auto on a 4x2 mesh, batch 8: degrees 2 and 4, microbatch counts
// the batch allows (16 and 32 do not split 8), every schedule; the winner is
// the fastest candidate that fits, and each count of microbatches was solved
// once for all its schedules.
TEST(PipelinePlan, TheSearchKeepsTheFastestFittingCandidate) {
  MicrobatchGraph graph_of = [](int32_t m) -> Expected<Graph> {
    ModelOptions model;
    model.name = "llama3-debugmodel";
    if (8 % m != 0) return make_error("batch 8 does not split into {} microbatches", m);
    model.batch = 8 / m;
    return build_model(model);
  };
  Expected<PipelineSearch> search = search_pipeline(graph_of, plan_options({4, 2}));
  ASSERT_TRUE(search) << search.error().message;
  int planned = 0, refused = 0;
  const PipelineCandidate* fastest = nullptr;
  for (const PipelineCandidate& c : search->candidates) {
    if (!c.refused.empty()) {
      ++refused;
      continue;
    }
    ++planned;
    if (c.fits && (fastest == nullptr || c.step_time_s < fastest->step_time_s)) fastest = &c;
  }
  EXPECT_EQ(planned, 4 * 5);  // (2, 2), (2, 4), (2, 8), (4, 4), (4, 8) x 4 schedules
  EXPECT_EQ(refused, 1);      // (4, 16)
  ASSERT_NE(fastest, nullptr);
  EXPECT_EQ(search->best.options.degree, fastest->options.degree);
  EXPECT_EQ(search->best.options.microbatches, fastest->options.microbatches);
  EXPECT_EQ(search->best.options.schedule, fastest->options.schedule);
  EXPECT_DOUBLE_EQ(search->best.step_time_s, fastest->step_time_s);
  EXPECT_NE(pipeline_candidates_table(*search).find("<- chosen"), std::string::npos);

  // What the user fixed stays fixed: only zb-h1 with 4 microbatches, degrees searched.
  PipelineSearchSpace fixed;
  fixed.schedule = pipeline::ScheduleKind::kZBH1;
  fixed.microbatches = 4;
  Expected<PipelineSearch> narrowed = search_pipeline(graph_of, plan_options({4, 2}), fixed);
  ASSERT_TRUE(narrowed) << narrowed.error().message;
  ASSERT_EQ(narrowed->candidates.size(), 2u);  // degrees 2 and 4
  for (const PipelineCandidate& c : narrowed->candidates) {
    EXPECT_EQ(c.options.schedule, pipeline::ScheduleKind::kZBH1);
    EXPECT_EQ(c.options.microbatches, 4);
    EXPECT_TRUE(c.refused.empty()) << c.refused;
  }
  EXPECT_EQ(narrowed->best.options.schedule, pipeline::ScheduleKind::kZBH1);
}


// The report's pipeline section: a row per stage, and in the timeline one
// box per compute action of every rank, placed by the simulated times.
TEST(PipelinePlan, TheReportDrawsEveryComputeActionOfTheSchedule) {
  Graph g = microbatch_graph();
  Expected<PipelinePlan> plan =
      make_pipeline_plan(g, plan_options({2, 2}), pipeline_options(pipeline::ScheduleKind::kZBH1, 2, 4));
  ASSERT_TRUE(plan) << plan.error().message;
  size_t actions = 0;
  for (const auto& rank : plan->simulation.timeline) {
    for (const pipeline::TimedAction& t : rank) actions += pipeline::is_compute(t.action.kind) ? 1 : 0;
  }
  EXPECT_EQ(actions, 2u * 4u * 3u);  // 2 stages x 4 microbatches x (F, I, W)
  const std::string svg = schedule_timeline_svg(*plan);
  size_t rects = 0;
  for (size_t at = svg.find("<rect"); at != std::string::npos; at = svg.find("<rect", at + 1)) ++rects;
  EXPECT_EQ(rects, actions);
  const std::string html = pipeline_report_html(g, *plan, "");
  EXPECT_NE(html.find("<section id=\"pipeline\">"), std::string::npos);
  EXPECT_NE(html.find("schedule zb-h1, 4 microbatches"), std::string::npos);
  size_t rows = 0;
  for (size_t at = html.find("<tr><td>"); at != std::string::npos; at = html.find("<tr><td>", at + 1)) ++rows;
  EXPECT_EQ(rows, plan->stages.size());
}

// torchtitan settings from a pipeline plan laid out FSDP-style: the degrees,
// the schedule's name, the microbatch size per data rank and the modules.
TEST(PipelinePlan, TorchtitanSettingsCarryTheDegreesAndStages) {
  Graph g = microbatch_graph();
  PipelineOptions fsdp = pipeline_options(pipeline::ScheduleKind::kGPipe, 2, 4);
  fsdp.baseline = "fsdp";
  Expected<PipelinePlan> plan = make_pipeline_plan(g, plan_options({2, 2}), fsdp);
  ASSERT_TRUE(plan) << plan.error().message;
  TorchtitanConfig config = torchtitan_config(g, plan->spmd, &*plan);
  EXPECT_TRUE(config.not_expressed.empty());
  EXPECT_NE(config.toml.find("data_parallel_shard_degree = 2\n"), std::string::npos) << config.toml;
  EXPECT_NE(config.toml.find("pipeline_parallel_schedule = \"GPipe\"\n"), std::string::npos) << config.toml;
  EXPECT_NE(config.toml.find("\"tok_embeddings\""), std::string::npos) << config.toml;
  EXPECT_EQ(config.toml.find("\"loss\""), std::string::npos) << config.toml;  // not a module
}

}  // namespace
}  // namespace autopar
