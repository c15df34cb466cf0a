// End-to-end tests of `autopar plan`: the default model, and the flags that
// change what the ILP models.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <string>

#include "run_cli.h"

namespace autopar {
namespace {

using Json = nlohmann::json;
using testing::run_autopar;

Json plan_json(const std::string& args) {
  testing::CliResult result = run_autopar("plan --quiet --format json " + args);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  return result.exit_code == 0 ? Json::parse(result.out) : Json::object();
}

TEST(PlanCommand, WithoutAGraphSourceItPlansLlama3_8b) {
  Json plan = plan_json("--layers 1 --batch 2 --seq 64 --mesh 2");
  EXPECT_EQ(plan.value("graph", ""), "llama3-8b");
  EXPECT_EQ(plan["mesh"]["shape"], Json::array({2}));
}

// --prove-sharing: the JSON's solver.sharing_proof and the summary's line;
// it excludes --no-share-layers (nothing shared, nothing to prove).
TEST(PlanCommand, ProveSharingReportsItsVerdict) {
  Json plan = plan_json("--model llama3-debugmodel --mesh 2x2 --prove-sharing");
  ASSERT_TRUE(plan["solver"].contains("sharing_proof"));
  const Json& proof = plan["solver"]["sharing_proof"];
  EXPECT_EQ(proof["verdict"], "exact");
  EXPECT_NEAR(proof["unshared_objective"].get<double>(), plan["solver"]["objective"].get<double>(),
              1e-9 * plan["solver"]["objective"].get<double>());
  EXPECT_FALSE(proof.contains("time_s"));  // only with --timings: the JSON diffs byte for byte
  EXPECT_FALSE(plan_json("--model llama3-debugmodel --mesh 2x2")["solver"].contains("sharing_proof"));
  testing::CliResult summary = run_autopar("plan --quiet --model llama3-debugmodel --mesh 2x2 --prove-sharing");
  EXPECT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_NE(summary.out.find("sharing proof  exact"), std::string::npos) << summary.out;
  testing::CliResult both = run_autopar("plan --quiet --model llama3-debugmodel --prove-sharing --no-share-layers");
  EXPECT_EQ(both.exit_code, 2) << both.err;
}

// --pipeline: the model built for one microbatch (batch 8 / 4), two stages
// along d0, each sharded on d1; the JSON gains its pipeline section.
TEST(PlanCommand, PipelinePlansStagesAlongDimZeroAndShardsTheRest) {
  Json plan = plan_json("--model llama3-debugmodel --batch 8 --mesh 2x2 --pipeline 2 --microbatches 4 --hardware h100");
  ASSERT_TRUE(plan.contains("pipeline"));
  EXPECT_EQ(plan["pipeline"]["degree"], 2);
  EXPECT_EQ(plan["pipeline"]["microbatches"], 4);
  EXPECT_EQ(plan["pipeline"]["sub_mesh"], Json::array({2}));
  EXPECT_EQ(plan["mesh"]["shape"], Json::array({2}));  // the stage groups' SPMD plan
  EXPECT_EQ(plan["pipeline"]["stages"].size(), 2u);
  testing::CliResult summary =
      run_autopar("plan --model llama3-debugmodel --batch 8 --mesh 2x2 --pipeline 2 --microbatches 4");
  EXPECT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_NE(summary.out.find("schedule 1f1b, 4 microbatches"), std::string::npos) << summary.out;
  EXPECT_NE(summary.out.find("rank 0: peak"), std::string::npos) << summary.out;
}

// --pipeline auto searches the schedule too unless one is given; a fixed
// degree keeps 1f1b unless --schedule auto.
TEST(PlanCommand, PipelineAutoSearchesEverySchedule) {
  testing::CliResult searched =
      run_autopar("plan --quiet --model llama3-debugmodel --batch 8 --mesh 2x2 --pipeline auto --microbatches 4");
  EXPECT_EQ(searched.exit_code, 0) << searched.err;
  for (const char* kind : {" 1f1b ", " interleaved-1f1b ", " zb-h1 ", " gpipe "}) {
    EXPECT_NE(searched.out.find(kind), std::string::npos) << kind << "\n" << searched.out;
  }
  testing::CliResult fixed = run_autopar(
      "plan --quiet --model llama3-debugmodel --batch 8 --mesh 2x2 --pipeline auto --microbatches 4 --schedule gpipe");
  EXPECT_EQ(fixed.exit_code, 0) << fixed.err;
  EXPECT_EQ(fixed.out.find(" zb-h1 "), std::string::npos) << fixed.out;
}

// --format torchtitan: the degrees of each mesh dim, the pipeline's schedule,
// microbatch size and stage modules, as torchtitan's settings.
TEST(PlanCommand, TorchtitanFormatWritesTheParallelismSettings) {
  testing::CliResult fsdp_tp =
      run_autopar("plan --quiet --model llama3-debugmodel --mesh 2x2 --baseline fsdp-tp --format torchtitan");
  EXPECT_EQ(fsdp_tp.exit_code, 0) << fsdp_tp.err;
  EXPECT_NE(fsdp_tp.out.find("data_parallel_shard_degree = 2\n"), std::string::npos) << fsdp_tp.out;
  EXPECT_NE(fsdp_tp.out.find("tensor_parallel_degree = 2\n"), std::string::npos) << fsdp_tp.out;
  EXPECT_NE(fsdp_tp.out.find("pipeline_parallel_degree = 1\n"), std::string::npos) << fsdp_tp.out;
  testing::CliResult ddp = run_autopar("plan --quiet --model llama3-debugmodel --mesh 4 --baseline ddp --format torchtitan");
  EXPECT_NE(ddp.out.find("data_parallel_replicate_degree = 4\n"), std::string::npos) << ddp.out;
  testing::CliResult pipe = run_autopar(
      "plan --quiet --model llama3-debugmodel --batch 8 --mesh 2x2 --pipeline 2 --microbatches 4 --schedule gpipe "
      "--baseline fsdp --format torchtitan");
  EXPECT_EQ(pipe.exit_code, 0) << pipe.err;
  EXPECT_NE(pipe.out.find("pipeline_parallel_degree = 2\npipeline_parallel_schedule = \"GPipe\"\n"), std::string::npos)
      << pipe.out;
  // 4 microbatches of 2 rows, split over the 2 FSDP ranks.
  EXPECT_NE(pipe.out.find("pipeline_parallel_microbatch_size = 1\n"), std::string::npos) << pipe.out;
  EXPECT_NE(pipe.out.find("module_fqns_per_model_part = [[\"tok_embeddings\""), std::string::npos) << pipe.out;
  // What the settings cannot say is said: ZB-H1 with one stage per rank.
  testing::CliResult zb = run_autopar(
      "plan --quiet --model llama3-debugmodel --batch 8 --mesh 2x2 --pipeline 2 --microbatches 4 --schedule zb-h1 "
      "--baseline fsdp --format torchtitan");
  EXPECT_NE(zb.out.find("# APPROXIMATE"), std::string::npos) << zb.out;
  EXPECT_NE(zb.err.find("zb-h1 with 1 stage per rank has no torchtitan schedule"), std::string::npos) << zb.err;
}

// --baseline ppP-fsdpF-tpT: torchtitan's degrees, checked against the mesh.
TEST(PlanCommand, DegreeLayoutBaselinesPipelineAndShardTheStageGroups) {
  testing::CliResult ok = run_autopar(
      "plan --quiet --model llama3-debugmodel --batch 8 --mesh 2x2x2 --baseline pp2-fsdp2-tp2 --microbatches 4");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("pipeline: degree 2 along mesh dim 0, stage groups on mesh 2x2 (baseline fsdp-tp)"),
            std::string::npos)
      << ok.out;
  testing::CliResult wrong =
      run_autopar("plan --quiet --model llama3-debugmodel --batch 8 --mesh 2x2x2 --baseline pp2-fsdp4-tp2");
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_NE(wrong.err.find("so the layout here is pp2-fsdp2-tp2"), std::string::npos) << wrong.err;
}

// compare --pipeline: torchtitan-style layouts and autopar's pipeline beside
// the SPMD table, in the same cost model.
TEST(PlanCommand, CompareListsPipelineLayouts) {
  testing::CliResult r = run_autopar("compare --quiet --model llama3-debugmodel --batch 8 --mesh 2x2 --pipeline 2");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("pipeline layouts along mesh dim 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pp2-fsdp2              1f1b"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pp2-fsdp2              interleaved-1f1b"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("autopar (pp2, solved)"), std::string::npos) << r.out;
}

// compare with --recompute auto: each baseline also with full activation
// checkpointing. At this budget no baseline fits keeping every activation
// (llama3-debugmodel 2 layers b8 s128 on 4 devices, 23.4 MB), some do with
// full AC, and the solved plan, recomputing what the ILP chooses, is at least
// as fast as every one that fits.
TEST(PlanCommand, CompareCostsEachBaselineWithAndWithoutFullRecomputation) {
  testing::CliResult r = run_autopar(
      "compare --quiet --model llama3-debugmodel --layers 2 --batch 8 --seq 128 --mesh 4 --memory-gb 0.0245 "
      "--recompute auto --baselines fsdp,tp");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto row = [&](const std::string& label) {
    size_t at = r.out.find("\n" + label + " ");
    EXPECT_NE(at, std::string::npos) << label << " missing in\n" << r.out;
    return at == std::string::npos ? std::string() : r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
  };
  auto step_ms = [](const std::string& line) { return std::stod(line.substr(20, 15)); };
  EXPECT_NE(row("fsdp").find("no (needs >="), std::string::npos) << r.out;
  EXPECT_NE(row("tp").find("no (needs >="), std::string::npos) << r.out;
  std::string solved = row("solved+auto-ac");
  ASSERT_NE(solved.find("yes"), std::string::npos) << r.out;
  int fitting = 0;
  for (const std::string label : {"fsdp+full-ac", "tp+full-ac"}) {
    std::string line = row(label);
    if (line.find("yes") == std::string::npos) continue;
    ++fitting;
    EXPECT_LE(step_ms(solved), step_ms(line)) << r.out;
  }
  EXPECT_GT(fitting, 0) << r.out;
}

// plan --pipeline --recompute full: every stage re-runs its layers in its
// backward (B grows, ranks hold less); auto is a usage error naming full.
TEST(PlanCommand, PipelineWithWholeLayersRecomputedHoldsLessAndTakesLonger) {
  const std::string job = "plan --quiet --model llama3-8b --batch 32 --mesh 8x8 --pipeline 2 --format json";
  testing::CliResult kept = run_autopar(job);
  testing::CliResult rerun = run_autopar(job + " --recompute full");
  ASSERT_EQ(kept.exit_code, 0) << kept.err;
  ASSERT_EQ(rerun.exit_code, 0) << rerun.err;
  nlohmann::json a = nlohmann::json::parse(kept.out), b = nlohmann::json::parse(rerun.out);
  EXPECT_FALSE(a["pipeline"].contains("recompute"));
  EXPECT_EQ(b["pipeline"]["recompute"], "full");
  EXPECT_GT(b["pipeline"]["step_time_s"].get<double>(), a["pipeline"]["step_time_s"].get<double>());
  for (size_t r = 0; r < 2; ++r) {
    EXPECT_LT(b["pipeline"]["ranks"][r]["peak_bytes"].get<double>(), a["pipeline"]["ranks"][r]["peak_bytes"].get<double>())
        << "pipeline rank " << r;
  }
  testing::CliResult automatic = run_autopar("plan --quiet --model llama3-8b --mesh 8x8 --pipeline 2 --recompute auto");
  EXPECT_EQ(automatic.exit_code, 2);
  EXPECT_NE(automatic.err.find("use --recompute full"), std::string::npos) << automatic.err;
}

// Pins with --pipeline name the stage groups' mesh: on 2x2 with degree 2
// that is one dim. A pin for the whole mesh's two dims is a usage error
// that says so; auto degrees take no pins.
// explain --pipeline: a node is placed in its stage (the embedding in the
// first, the loss in the last) before its strategy is explained in the stage
// groups' solve; --memory gives each pipeline rank the peak `plan` reports.
TEST(PlanCommand, ExplainWithAPipelineNamesTheStageAndEachRanksPeak) {
  const std::string model = "--model llama3-debugmodel --batch 8 --mesh 2x2 --pipeline 2 --microbatches 4 --hardware h100";
  testing::CliResult first = run_autopar("explain " + model + " --node embedding --resolves 1");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("embedding: stage 0 of 2"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("node embedding (aten.embedding.default)"), std::string::npos) << first.out;
  testing::CliResult last = run_autopar("explain " + model + " --node nll_loss_forward --resolves 0");
  ASSERT_EQ(last.exit_code, 0) << last.err;
  EXPECT_NE(last.out.find("nll_loss_forward: stage 1 of 2"), std::string::npos) << last.out;
  EXPECT_NE(last.out.find("on pipeline rank 1: devices 2..3"), std::string::npos) << last.out;

  testing::CliResult memory = run_autopar("explain " + model + " --memory");
  ASSERT_EQ(memory.exit_code, 0) << memory.err;
  Json plan = plan_json(model);
  for (const Json& rank : plan["pipeline"]["ranks"]) {
    std::string line = fmt::format("rank {} (stages {}): peak {:.2f} MiB", rank["rank"].get<int>(),
                                   rank["stages"][0].get<int>(), rank["peak_bytes"].get<double>() / (1024.0 * 1024.0));
    EXPECT_NE(memory.out.find(line), std::string::npos) << line << "\n" << memory.out;
  }
  EXPECT_NE(memory.out.find("largest: rank "), std::string::npos) << memory.out;
  testing::CliResult unknown = run_autopar("explain " + model + " --node no_such_node");
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("no node named 'no_such_node'"), std::string::npos) << unknown.err;
}

TEST(PlanCommand, PinsWithAPipelineNameTheStageGroupsMesh) {
  Json plan = plan_json(
      "--model llama3-debugmodel --batch 8 --mesh 2x2 --pipeline 2 --microbatches 4 --pin 'output_weight=S(0)'");
  ASSERT_TRUE(plan.contains("nodes")) << plan.dump().substr(0, 200);
  bool found = false;
  for (const Json& n : plan["nodes"]) {
    if (n.value("name", "") != "output_weight") continue;
    found = true;
    EXPECT_EQ(n["placement"], Json::array({"S(0)"}));
  }
  EXPECT_TRUE(found);
  testing::CliResult whole = run_autopar(
      "plan --quiet --model llama3-debugmodel --batch 8 --mesh 2x2 --pipeline 2 --microbatches 4 --pin 'output_weight=S(0)R'");
  EXPECT_EQ(whole.exit_code, 2);
  EXPECT_NE(whole.err.find("pins name the stage groups' mesh 2"), std::string::npos) << whole.err;
  testing::CliResult searched = run_autopar(
      "plan --quiet --model llama3-debugmodel --batch 8 --mesh 2x2 --pipeline auto --pin 'output_weight=S(0)'");
  EXPECT_EQ(searched.exit_code, 2);
  EXPECT_NE(searched.err.find("need a fixed --pipeline degree"), std::string::npos) << searched.err;
}

TEST(PlanCommand, APipelineThatCannotBeBuiltNamesWhy) {
  testing::CliResult degree = run_autopar("plan --model llama3-debugmodel --mesh 2x2 --pipeline 3");
  EXPECT_EQ(degree.exit_code, 2);
  EXPECT_NE(degree.err.find("--pipeline 3 does not divide mesh dim 0 (2)"), std::string::npos) << degree.err;
  testing::CliResult batch =
      run_autopar("plan --model llama3-debugmodel --batch 6 --mesh 2x2 --pipeline 2 --microbatches 4");
  EXPECT_EQ(batch.exit_code, 2);
  EXPECT_NE(batch.err.find("--microbatches 4"), std::string::npos) << batch.err;
  testing::CliResult schedule = run_autopar("plan --model mlp --mesh 2 --pipeline 2 --schedule zigzag");
  EXPECT_EQ(schedule.exit_code, 2);
  EXPECT_NE(schedule.err.find("zigzag"), std::string::npos) << schedule.err;
  // The pipeline's options mean nothing without it: a usage error, not silence.
  testing::CliResult alone = run_autopar("plan --model mlp --mesh 2 --microbatches 4");
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_NE(alone.err.find("--pipeline"), std::string::npos) << alone.err;
}

TEST(PlanCommand, ModelAndGraphTogetherAreStillAUsageError) {
  testing::CliResult result = run_autopar("plan --model llama3-8b --graph x.json");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("autopar: error:"), std::string::npos) << result.err;
}

TEST(PlanCommand, PairActivationGradsReportsThePairsAndStaysOffByDefault) {
  std::string args = "--model llama3-debugmodel --layers 1 --batch 4 --seq 16 --mesh 2x2";
  Json free_plan = plan_json(args);
  Json paired = plan_json(args + " --pair-activation-grads");
  EXPECT_EQ(free_plan["solver"]["activation_grad_pairs"], 0);
  EXPECT_GT(paired["solver"]["activation_grad_pairs"].get<int>(), 50);
  EXPECT_GE(paired["summary"]["step_time_s"].get<double>(),
            free_plan["summary"]["step_time_s"].get<double>() * (1 - 1e-9));
}

TEST(PlanCommand, OwnEndLayersSharesOnlyTheInnerLayers) {
  std::string args = "--model llama3-debugmodel --layers 4 --batch 2 --seq 16 --mesh 2";
  EXPECT_EQ(plan_json(args)["solver"]["shared_layers"], 3);
  EXPECT_EQ(plan_json(args + " --own-end-layers")["solver"]["shared_layers"], 1);
  testing::CliResult both = run_autopar("plan " + args + " --own-end-layers --no-share-layers");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("excludes"), std::string::npos) << both.err;
}

TEST(PlanCommand, OutOfRangeSolverLimitsAreUsageErrorsNamingTheOption) {
  for (const char* bad : {"--max-nodes -1", "--max-nodes 3000000000", "--max-lp-iterations 0",
                          "--threads 0"}) {
    testing::CliResult result = run_autopar(std::string("plan --model mlp --mesh 2 ") + bad);
    EXPECT_EQ(result.exit_code, 2) << bad;
    std::string option = std::string(bad).substr(0, std::string(bad).find(' '));
    EXPECT_NE(result.err.find(option + ": Value"), std::string::npos) << result.err;
  }
}

// docs/cli.md promises exit 2 for a value out of range: the time limit, the
// memory budget and the mesh are checked where the command line is parsed.
TEST(PlanCommand, OutOfRangeTimeLimitMemoryAndMeshAreUsageErrorsNamingTheOption) {
  for (const char* bad : {"--time-limit 0", "--time-limit -3", "--memory-gb -1", "--mesh 0x4", "--mesh abc"}) {
    testing::CliResult result = run_autopar(std::string("plan --model mlp ") + bad);
    EXPECT_EQ(result.exit_code, 2) << bad << ": " << result.err;
    std::string option = std::string(bad).substr(0, std::string(bad).find(' '));
    EXPECT_NE(result.err.find("autopar: error: " + option + ": "), std::string::npos) << result.err;
  }
  testing::CliResult zero = run_autopar("plan --quiet --model mlp --mesh 2 --memory-gb 0 --time-limit 5");
  EXPECT_EQ(zero.exit_code, 0) << zero.err;  // 0 GB: the profile's memory
}

TEST(PlanCommand, MalformedCbcOptionIsAUsageError) {
  for (const char* bad : {"cuts", "=off", "cuts="}) {
    testing::CliResult result =
        run_autopar(std::string("plan --model mlp --mesh 2 --cbc-option ") + bad);
    EXPECT_EQ(result.exit_code, 2) << bad;
    EXPECT_NE(result.err.find("takes NAME=VALUE"), std::string::npos) << result.err;
  }
}

// On a 3-D mesh the summary states the bound over the whole problem, or that
// there is none when asked for none; an unknown value is a usage error.
TEST(PlanCommand, SweepProofSaysWhatTheSweepsAnswerIsWorth) {
  testing::CliResult bound = run_autopar("plan --quiet --model mlp --mesh 2x2x2");
  ASSERT_EQ(bound.exit_code, 0) << bound.err;
  EXPECT_NE(bound.out.find("mesh-dim sweeps, optimal, objective 0.100 ms, bound 0.100 ms, gap"),
            std::string::npos) << bound.out;
  testing::CliResult none = run_autopar("plan --quiet --model mlp --mesh 2x2x2 --sweep-proof none");
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_NE(none.out.find("local optimum, objective 0.100 ms, no bound over the whole mesh"), std::string::npos)
      << none.out;
  testing::CliResult bad = run_autopar("plan --quiet --model mlp --mesh 2x2x2 --sweep-proof maybe");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--sweep-proof"), std::string::npos) << bad.err;
}

// The tight mlp case has a fractional LP: CBC gets the parameters and says so.
TEST(PlanCommand, CbcOptionsReachCbcAndTheSolverLogShowsThem) {
  testing::CliResult result = run_autopar(
      "plan --quiet --model mlp --mesh 2x4 --memory-gb 0.00025 --no-reduced-cost-fixing "
      "--cbc-option cuts=off --cbc-option feasibilityPump=off --solver-log");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("-cuts off -feasibilityPump off"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("solver         optimal"), std::string::npos) << result.out;
}

// With the plan written to a file (or in a format for programs), the error
// itself says how much memory is needed: nothing "above" says it.
TEST(PlanCommand, AnUnmetBudgetWithOutputToAFileSaysTheLeastPeakInTheError) {
  const testing::TempDir temp;
  const std::string& dir = temp.path();
  testing::CliResult result =
      run_autopar("plan --quiet --model llama3-debugmodel --mesh 2 --memory-gb 0.01 --out '" + dir + "/plan.txt'");
  EXPECT_EQ(result.exit_code, 3) << result.err;
  EXPECT_NE(result.err.find("no plan fits: memory budget cannot be met: needs exactly"), std::string::npos)
      << result.err;
  EXPECT_EQ(result.err.find("see above"), std::string::npos) << result.err;
  testing::CliResult json = run_autopar("plan --quiet --model llama3-debugmodel --mesh 2 --memory-gb 0.01 --format json");
  EXPECT_EQ(json.exit_code, 3) << json.err;
  EXPECT_NE(json.err.find("needs exactly"), std::string::npos) << json.err;
}

TEST(PlanCommand, SummarySaysWhatStoppedTheSearch) {
  testing::CliResult result = run_autopar("plan --quiet --model mlp --mesh 2");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("search         completed, 0 branch-and-bound nodes"),
            std::string::npos) << result.out;
}

// Ops without a rule of their own run replicated; the plan says which and
// what gathering their inputs costs, in the summary and in JSON.
TEST(PlanCommand, GenericOpsAreListedWithWhatReplicatingThemCosts) {
  std::string graph = std::string(AUTOPAR_SOURCE_DIR) + "/tests/runtime/graphs/generic_buffers.json";
  testing::CliResult summary = run_autopar("plan --quiet --graph " + graph + " --mesh 4 --baseline ddp");
  ASSERT_EQ(summary.exit_code, 0) << summary.err;
  EXPECT_NE(summary.out.find("generic ops    2 nodes of 1 aten ops without a sharding rule run "
                             "replicated"), std::string::npos) << summary.out;
  EXPECT_NE(summary.out.find("aten.triu.default"), std::string::npos) << summary.out;
  // triu's input pinned batch-sharded: it must be gathered whole for triu.
  Json plan = plan_json("--graph " + graph + " --mesh 4 --pin 'mm=S(0)'");
  ASSERT_EQ(plan["summary"]["generic_ops"].size(), 1u);
  const Json& triu = plan["summary"]["generic_ops"][0];
  EXPECT_EQ(triu["op"], "aten.triu.default");
  EXPECT_EQ(triu["nodes"], 2);
  EXPECT_EQ(triu["placement"], "replicated");
  EXPECT_GT(triu["input_comm_s"].get<double>(), 0);
}

}  // namespace
}  // namespace autopar
