#include "report/explain.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "../autoplan/plan_fixtures.h"
#include "models/registry.h"
#include "report/report_text.h"

namespace autopar::report {
namespace {

using testing::model;  // tests/autoplan/plan_fixtures.h

PlanOptions options(std::vector<int64_t> mesh, const std::string& hw, double budget) {
  PlanOptions o;
  o.mesh_shape = std::move(mesh);
  o.hardware = *load_hardware(hw);
  o.memory_budget_bytes = budget;
  o.solver.time_limit_s = 120;
  return o;
}

bool outputs_replicated(const StrategyCost& c) { return c.text.ends_with("->RR"); }

// The review thread's case (llama3-8b, batch 2, seq 8192, 2x4, H100), one
// layer: the solver shards the embedding's output; forcing it replicated
// must cost step time, and explain says how much.
TEST(Explain, SeedEmbeddingCaseShowsTheCostOfForcingItsOutputReplicated) {
  Graph g = model("llama3-8b", 1, 2, 8192);
  PlanOptions o = options({2, 4}, "h100", 80e9);
  Expected<Plan> plan = make_plan(g, o);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  Expected<NodeExplanation> e =
      explain_node(g, *plan, o, "embedding", ExplainOptions{.max_resolves = -1, .only_output = "RR"});
  ASSERT_TRUE(e.ok()) << e.error().message;
  ASSERT_GE(e->chosen, 0);
  EXPECT_FALSE(outputs_replicated(e->strategies[static_cast<size_t>(e->chosen)]));
  int replicated = 0;
  for (const StrategyCost& c : e->strategies) {
    if (!outputs_replicated(c)) {
      EXPECT_FALSE(c.pinned.solved) << c.text;  // only RR outputs were asked for
      continue;
    }
    ++replicated;
    ASSERT_TRUE(c.pinned.solved) << c.text << ": " << c.pinned.error;
    EXPECT_GE(c.pinned.step_time_s, e->plan_step_time_s * (1 - 1e-9)) << c.text;
    EXPECT_EQ(c.pinned.pins.front(), "embedding=RR");
  }
  EXPECT_GE(replicated, 1);
  std::string text = explanation_to_text(*e);
  EXPECT_NE(text.find("embedding=RR"), std::string::npos) << text;
  EXPECT_NE(text.find("step +"), std::string::npos) << text;
}

// Every redistribution of a plan is one node's incoming edge (or a gradient
// pairing, charged to the parameter), so the chosen strategies' incoming
// costs add up to the plan's communication time.
TEST(Explain, ChosenIncomingCostsAddUpToThePlansCommunication) {
  Graph g = model("llama3-debugmodel", 1, 0, 0);
  PlanOptions o = options({2, 2}, "cpu", 0);
  o.memory_budget_bytes.reset();
  Expected<Plan> plan = make_plan(g, o);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  double incoming = 0, outgoing = 0;
  for (const Node& n : g.nodes()) {
    Expected<NodeExplanation> e = explain_node(g, *plan, o, n.name, ExplainOptions{.max_resolves = 0, .only_output = ""});
    ASSERT_TRUE(e.ok()) << e.error().message;
    const StrategyCost& c = e->strategies[static_cast<size_t>(e->chosen)];
    EXPECT_TRUE(c.chosen);
    incoming += c.incoming_s;
    outgoing += c.outgoing_s;
  }
  EXPECT_NEAR(incoming, plan->summary.comm_s, 1e-9 * plan->summary.comm_s + 1e-15);
  EXPECT_NEAR(outgoing, plan->summary.comm_s, 1e-9 * plan->summary.comm_s + 1e-15);
}

TEST(Explain, StrategiesAreSortedByLocalCostAndTheMarginComparesWithTheBestOther) {
  Graph g = model("llama3-debugmodel", 1, 0, 0);
  PlanOptions o = options({2, 2}, "cpu", 0);
  o.memory_budget_bytes.reset();
  Expected<Plan> plan = make_plan(g, o);
  ASSERT_TRUE(plan.ok());
  Expected<NodeExplanation> e = explain_node(g, *plan, o, "embedding", ExplainOptions{.max_resolves = 1, .only_output = ""});
  ASSERT_TRUE(e.ok());
  ASSERT_GE(e->strategies.size(), 2u);
  double best_other = 1e300;
  int solved = 0;
  for (size_t i = 0; i < e->strategies.size(); ++i) {
    const StrategyCost& c = e->strategies[i];
    if (i > 0) {
      EXPECT_LE(e->strategies[i - 1].local_s(), c.local_s());
    }
    if (!c.chosen) best_other = std::min(best_other, c.local_s());
    solved += c.pinned.solved ? 1 : 0;
  }
  EXPECT_EQ(solved, 1);  // --resolves 1
  EXPECT_DOUBLE_EQ(e->margin_s, e->strategies[static_cast<size_t>(e->chosen)].local_s() - best_other);
}

TEST(Explain, UnknownNodeIsAnErrorListingNodesContainingTheName) {
  Graph g = model("llama3-debugmodel", 1, 0, 0);
  PlanOptions o = options({2, 2}, "cpu", 0);
  o.memory_budget_bytes.reset();
  Expected<Plan> plan = make_plan(g, o);
  ASSERT_TRUE(plan.ok());
  Expected<NodeExplanation> e = explain_node(g, *plan, o, "embed", {});
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("no node named 'embed'"), std::string::npos) << e.error().message;
  EXPECT_NE(e.error().message.find("embedding"), std::string::npos) << e.error().message;
}

}  // namespace
}  // namespace autopar::report
