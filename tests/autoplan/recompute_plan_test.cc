// Recomputation chosen inside the sharding ILP (planner/recompute_choices.h):
// at a budget no plan meets by keeping every activation, --recompute auto
// finds one that fits, and the solver's objective is what evaluate_plan
// prices the plan at (re-runs included).
#include <cmath>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "plan_fixtures.h"
#include "memory/recompute.h"
#include "planner/plan_output.h"

namespace autopar {
namespace {

using testing::model;
using testing::options;
using testing::plan_or_die;

// llama3-debugmodel, 2 layers, b8 s128 on 4 devices: the least peak is
// 25.58 MiB keeping every activation and 22.08 MiB with recomputation.
constexpr double kBudget = 0.0245e9;

Plan plan_with(const Graph& g, RecomputeMode mode, double budget) {
  PlanOptions o = options({4});
  o.recompute = mode;
  o.memory_budget_bytes = budget;
  return plan_or_die(g, o);
}

TEST(RecomputePlan, AutoFitsWhereKeepingEveryActivationCannot) {
  Graph g = model("llama3-debugmodel", 2, 8, 128);
  Plan none = plan_with(g, RecomputeMode::kNone, kBudget);
  EXPECT_FALSE(none.summary.fits);
  ASSERT_TRUE(none.shortfall.has_value());
  Plan automatic = plan_with(g, RecomputeMode::kAuto, kBudget);
  ASSERT_FALSE(automatic.choice.empty()) << automatic.solver.message;
  EXPECT_TRUE(automatic.summary.fits);
  EXPECT_LE(automatic.summary.memory.peak, kBudget);
  EXPECT_GT(automatic.summary.recomputed, 0);
  EXPECT_GT(automatic.summary.peak_without_recompute, kBudget);
  EXPECT_GT(automatic.summary.recompute_compute_s, 0);
  EXPECT_EQ(automatic.solver.status, "optimal");
  EXPECT_NEAR(automatic.solver.objective, automatic.summary.step_time_s, 1e-9 * automatic.summary.step_time_s);
}

TEST(RecomputePlan, FullRecomputesMoreAndCostsAtLeastAuto) {
  Graph g = model("llama3-debugmodel", 2, 8, 128);
  Plan automatic = plan_with(g, RecomputeMode::kAuto, kBudget);
  Plan full = plan_with(g, RecomputeMode::kFull, kBudget);
  ASSERT_FALSE(automatic.choice.empty());
  ASSERT_FALSE(full.choice.empty());
  EXPECT_GT(full.summary.recomputed, automatic.summary.recomputed);
  EXPECT_GE(full.summary.step_time_s, automatic.summary.step_time_s * (1 - 1e-12));
  EXPECT_NEAR(full.solver.objective, full.summary.step_time_s, 1e-9 * full.summary.step_time_s);
}

TEST(RecomputePlan, FullReRunsEveryLayerWholeAndSaysSo) {
  Graph g = model("llama3-debugmodel", 2, 8, 128);
  Plan full = plan_with(g, RecomputeMode::kFull, kBudget);
  ASSERT_FALSE(full.choice.empty()) << full.solver.message;
  EXPECT_EQ(full.summary.recomputed_layers, 2);
  EXPECT_EQ(full.summary.recomputed, find_layer_recompute(g).count);
  EXPECT_TRUE(full.summary.fits);
  nlohmann::json j = nlohmann::json::parse(plan_to_json(g, full, false));
  int layer_marks = 0;
  for (const auto& n : j["nodes"]) {
    if (!n.contains("recompute")) continue;
    EXPECT_EQ(n["recompute"], "layer") << n["name"];
    ++layer_marks;
  }
  EXPECT_EQ(layer_marks, full.summary.recomputed);
  EXPECT_EQ(j["summary"]["recompute"]["layers"], 2);
  std::string text = plan_to_summary(g, full);
  EXPECT_NE(text.find("recompute      full: 2 whole layers re-run"), std::string::npos) << text;
}

TEST(RecomputePlan, WithoutABindingBudgetAutoRecomputesNothing) {
  Graph g = model("llama3-debugmodel", 2, 8, 128);
  Plan none = plan_with(g, RecomputeMode::kNone, 80e9);
  Plan automatic = plan_with(g, RecomputeMode::kAuto, 80e9);
  EXPECT_EQ(automatic.summary.recomputed, 0);
  EXPECT_NEAR(automatic.summary.step_time_s, none.summary.step_time_s, 1e-9 * none.summary.step_time_s);
  EXPECT_GT(automatic.solver.recomputable, 0);
}

TEST(RecomputePlan, ThePlanFileMarksEachRecomputedNode) {
  Graph g = model("llama3-debugmodel", 2, 8, 128);
  Plan automatic = plan_with(g, RecomputeMode::kAuto, kBudget);
  nlohmann::json j = nlohmann::json::parse(plan_to_json(g, automatic, false));
  int marked = 0;
  for (const auto& n : j["nodes"]) marked += n.value("recompute", false) ? 1 : 0;
  EXPECT_EQ(marked, automatic.summary.recomputed);
  EXPECT_EQ(j["summary"]["recompute"]["tensors"], automatic.summary.recomputed);
  EXPECT_EQ(j["solver"]["recompute"], "auto");
  std::string text = plan_to_summary(g, automatic);
  EXPECT_NE(text.find("recompute      auto: " + std::to_string(automatic.summary.recomputed) + " of "),
            std::string::npos)
      << text;
}

TEST(RecomputePlan, FoldedFollowersAreRefusedWithTheReason) {
  Graph g = model("llama3-debugmodel", 1, 2, 16);
  PlanOptions o = options({2});
  o.recompute = RecomputeMode::kAuto;
  o.fold_followers = true;
  Expected<Plan> p = make_plan(g, o);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().kind, ErrorKind::kUsage);
  EXPECT_NE(p.error().message.find("--fold-followers"), std::string::npos);
}

}  // namespace
}  // namespace autopar
