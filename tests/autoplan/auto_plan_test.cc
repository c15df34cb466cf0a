#include <gtest/gtest.h>

#include "plan_fixtures.h"
#include "planner/baselines.h"
#include "planner/plan_output.h"

namespace autopar {
namespace {

using testing::model;
using testing::options;
using testing::plan_or_die;

TEST(AutoPlan, SolverObjectiveEqualsTheDirectEvaluationOfItsChoice) {
  Graph g = model("llama3-debugmodel", 1, 4, 16);
  Plan p = plan_or_die(g, options({2}));
  ASSERT_FALSE(p.choice.empty());
  // evaluate_plan sums compute and redistribution times from the graph, not
  // from the ILP; the two must agree.
  EXPECT_NEAR(p.summary.step_time_s, p.solver.objective, 1e-9 * p.solver.objective);
}

TEST(AutoPlan, SharingLayerVariablesKeepsTheOptimum) {
  Graph g = model("llama3-debugmodel", 3, 4, 16);
  PlanOptions shared = options({2});
  PlanOptions unshared = shared;
  unshared.share_layers = false;
  Plan a = plan_or_die(g, shared);
  Plan b = plan_or_die(g, unshared);
  EXPECT_EQ(a.solver.shared_layers, 2);
  EXPECT_EQ(b.solver.shared_layers, 0);
  // The ILP's size before reductions does not depend on them; they shrink it.
  EXPECT_EQ(a.solver.unreduced_variables, b.solver.unreduced_variables);
  EXPECT_EQ(a.solver.unreduced_constraints, b.solver.unreduced_constraints);
  EXPECT_GT(b.solver.unreduced_variables, b.solver.stats.variables);
  EXPECT_LT(a.solver.stats.variables, b.solver.stats.variables);
  EXPECT_NEAR(a.summary.step_time_s, b.summary.step_time_s, 1e-9 * b.summary.step_time_s);
  PlanOptions own_ends = shared;
  own_ends.own_end_layers = true;
  Plan e = plan_or_die(g, own_ends);
  EXPECT_EQ(e.solver.shared_layers, 0);  // of 3 layers only the middle one is left to share
  EXPECT_NEAR(e.summary.step_time_s, b.summary.step_time_s, 1e-9 * b.summary.step_time_s);
  // Also with activation gradients paired: the pairing edges repeat per layer.
  shared.pair_activation_grads = unshared.pair_activation_grads = true;
  Plan c = plan_or_die(g, shared);
  Plan d = plan_or_die(g, unshared);
  EXPECT_GT(c.solver.activation_grad_pairs, 0);
  EXPECT_NEAR(c.summary.step_time_s, d.summary.step_time_s, 1e-9 * d.summary.step_time_s);
}

// --prove-sharing (sharing_proof.h): on these small configs sharing is
// exact, which the unshared solve confirms; the proof must say so and name
// the unshared optimum, and leave the plan as it was.
TEST(AutoPlan, SharingProofConfirmsTheUnsharedOptimum) {
  Graph g = model("llama3-debugmodel", 3, 4, 16);
  for (const std::vector<int64_t>& mesh : {std::vector<int64_t>{2}, std::vector<int64_t>{2, 2}}) {
    PlanOptions shared = options(mesh);
    PlanOptions unshared = shared;
    unshared.share_layers = false;
    PlanOptions proven = shared;
    proven.prove_sharing = true;
    proven.solver.target_pruning_min_pairs = 0;  // the proof's pruning path, as on large models
    Plan a = plan_or_die(g, shared);
    Plan b = plan_or_die(g, unshared);
    Plan c = plan_or_die(g, proven);
    EXPECT_FALSE(a.solver.sharing_proof.has_value());
    ASSERT_TRUE(c.solver.sharing_proof.has_value());
    const SharingProof& proof = *c.solver.sharing_proof;
    EXPECT_EQ(proof.verdict, "exact");
    EXPECT_NEAR(proof.unshared_objective, b.solver.objective, 1e-9 * b.solver.objective);
    EXPECT_LE(proof.bound, b.solver.objective * (1 + 1e-9));
    EXPECT_NEAR(proof.shared_objective, a.solver.objective, 1e-12);
    EXPECT_EQ(c.choice, a.choice);
    EXPECT_GT(proof.variables, a.solver.stats.variables);
  }
  // Nothing shared, nothing to prove: said so, the plan as without the flag.
  Graph mlp = model("mlp", 2, 0, 0);
  PlanOptions o = options({2});
  o.prove_sharing = true;
  Plan p = plan_or_die(mlp, o);
  ASSERT_TRUE(p.solver.sharing_proof.has_value());
  EXPECT_EQ(p.solver.sharing_proof->verdict, "not run: no layers were shared");
  EXPECT_EQ(p.choice, plan_or_die(mlp, options({2})).choice);
}

// Folding is a restriction (followers.h): these small configs check that it
// costs nothing where the unfolded ILP is solvable to optimality quickly.
TEST(AutoPlan, FoldingFollowersKeepsTheOptimumOnSmallConfigs) {
  for (const auto& [name, mesh] : std::vector<std::pair<std::string, std::vector<int64_t>>>{
           {"mlp", {2, 4}}, {"llama3-debugmodel", {2}}, {"llama3-debugmodel", {2, 2}}}) {
    Graph g = name == "mlp" ? model(name, 2, 0, 0) : model(name, 1, 4, 16);
    PlanOptions unfolded = options(mesh);
    PlanOptions folded = unfolded;
    folded.fold_followers = true;
    Plan a = plan_or_die(g, folded);
    Plan b = plan_or_die(g, unfolded);
    EXPECT_GT(a.solver.folded_followers, 0) << name;
    EXPECT_EQ(b.solver.folded_followers, 0) << name;
    EXPECT_LT(a.solver.stats.reduced_nodes, b.solver.stats.reduced_nodes) << name;
    EXPECT_NEAR(a.summary.step_time_s, b.summary.step_time_s, 1e-9 * b.summary.step_time_s)
        << name << " on " << mesh.size() << "-D mesh";
  }
}

// On a 3-D mesh, auto solves by mesh-dim sweeps (dim_sweep.h): a local
// optimum that must match the whole ILP's optimum on this small case, and
// that the dual bound proves optimal.
TEST(AutoPlan, MeshDimSweepsMatchTheWholeIlpOnASmall3dMesh) {
  Graph g = model("mlp", 2, 0, 0);
  PlanOptions whole = options({2, 2, 2});
  whole.mesh_solve = MeshSolve::kWhole;
  PlanOptions sweeps = options({2, 2, 2});
  Plan a = plan_or_die(g, whole);
  Plan b = plan_or_die(g, sweeps);
  EXPECT_EQ(a.solver.method, "whole");
  EXPECT_EQ(b.solver.method, "sweeps");
  ASSERT_FALSE(b.solver.sweep_steps.empty());
  EXPECT_EQ(b.solver.sweep_steps.front().neighbourhood, "seed d1=d2");
  EXPECT_NEAR(a.summary.step_time_s, b.summary.step_time_s, 1e-9 * a.summary.step_time_s);
  // The pairwise dual bound over the whole problem proves it here.
  ASSERT_TRUE(b.solver.sweep_bound);
  EXPECT_EQ(b.solver.status, "optimal");
  EXPECT_LE(b.solver.best_bound, b.solver.objective);
  EXPECT_LE(b.solver.gap, 1e-9);
  PlanOptions flat = options({2, 4});  // 2-D meshes never sweep
  EXPECT_EQ(plan_or_die(g, flat).solver.method, "whole");
}

int broken_gradient_links(const Graph& g, const Plan& p) {
  int broken = 0;
  auto output = [&](NodeId v) -> const Sharding& {
    auto i = static_cast<size_t>(v);
    return p.strategies.nodes[i].output(p.choice[i], 0);
  };
  for (const GradientLink& link : g.gradient_links()) {
    if (!pairs_as_gradient(output(link.value), output(link.grad))) ++broken;
  }
  return broken;
}

// Pairing activations with their gradients is a restriction: with it every
// link holds, and the plan costs no less than the free one, which breaks
// links here (so the constraint is seen to act).
TEST(AutoPlan, PairedActivationGradientsTakeTheirActivationsPlacement) {
  Graph g = model("llama3-8b", 1, 2, 1024);
  ASSERT_GT(g.gradient_links().size(), 50u);
  PlanOptions free_options = options({2, 4});
  PlanOptions paired = free_options;
  paired.pair_activation_grads = true;
  Plan a = plan_or_die(g, paired);
  Plan b = plan_or_die(g, free_options);
  ASSERT_FALSE(a.choice.empty());
  ASSERT_FALSE(b.choice.empty());
  EXPECT_EQ(a.solver.activation_grad_pairs, static_cast<int32_t>(g.gradient_links().size()));
  EXPECT_EQ(b.solver.activation_grad_pairs, 0);
  EXPECT_EQ(broken_gradient_links(g, a), 0);
  EXPECT_GT(broken_gradient_links(g, b), 0);
  EXPECT_GE(a.summary.step_time_s, b.summary.step_time_s * (1 - 1e-9));
  EXPECT_NEAR(a.summary.step_time_s, a.solver.objective, 1e-9 * a.solver.objective);
}

// CBC's root LP does not watch the time limit; when the LP relaxation alone
// runs out of time the planner stops there and says so (cbc_solver.h).
TEST(AutoPlan, RelaxationOutOfTimeStopsWithinTheLimitAndSaysWhy) {
  Graph g = model("llama3-debugmodel", 1, 8, 64);
  PlanOptions o = options({2, 4});
  o.solver.time_limit_s = 1e-4;
  // The whole model's LP: pruned to its dual bound's target, this one is
  // small enough to finish before Clp first looks at the clock.
  o.solver.target_pruning = false;
  Expected<Plan> p = make_plan(g, o);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message.find("the LP relaxation alone took it all"), std::string::npos)
      << p.error().message;
}

TEST(AutoPlan, SolvedPlanIsNeverWorseThanAnyBaseline) {
  for (const auto& [name, mesh] : std::vector<std::pair<std::string, std::vector<int64_t>>>{
           {"mlp", {2, 4}}, {"llama3-debugmodel", {2}}}) {
    Graph g = name == "mlp" ? model(name, 2, 0, 0) : model(name, 1, 4, 16);
    Plan solved = plan_or_die(g, options(mesh));
    Expected<DeviceMesh> m = make_mesh(mesh, *load_hardware("h100"));
    for (const std::string& baseline : baseline_names()) {
      PlanOptions o = options(mesh);
      Expected<std::vector<PinSpec>> pins = baseline_pins(baseline, g, *m);
      if (baseline == "fsdp-tp" && mesh.size() < 2) {  // needs an outer and an inner dim
        EXPECT_FALSE(pins.ok());
        continue;
      }
      ASSERT_TRUE(pins.ok()) << pins.error().message;
      o.pins = *pins;
      Expected<Plan> b = make_plan(g, o);
      ASSERT_TRUE(b.ok()) << name << " " << baseline << ": " << b.error().message;
      EXPECT_LE(solved.summary.step_time_s, b->summary.step_time_s * (1 + 1e-9))
          << name << " vs " << baseline;
    }
  }
}

TEST(AutoPlan, FsdpBaselineShardsEveryParameterAndDdpReplicatesThem) {
  Graph g = model("mlp", 2, 0, 0);
  Expected<DeviceMesh> m = make_mesh({8}, *load_hardware("h100"));
  for (const char* name : {"ddp", "fsdp"}) {
    PlanOptions o = options({8});
    o.pins = *baseline_pins(name, g, *m);
    Plan p = plan_or_die(g, o);
    for (NodeId v = 0; v < g.size(); ++v) {
      const Node& n = g.node(v);
      if (!n.is_placeholder() || n.kind != PlaceholderKind::kParam) continue;
      const Sharding& s = p.strategies.nodes[static_cast<size_t>(v)].output(p.choice[static_cast<size_t>(v)], 0);
      // mlp params: [256, 64], [256], [256, 256], [256], [16, 256], [16]; 16 / 8 = 2 divides.
      EXPECT_EQ(to_string(s), std::string(name) == "ddp" ? "R" : "S(0)") << n.name;
    }
  }
}

TEST(AutoPlan, TooSmallBudgetReportsTheLeastBudgetThatWouldFit) {
  Graph g = model("llama3-debugmodel", 1, 4, 16);
  PlanOptions o = options({2});
  o.solver.exact_memory_bound = false;  // the per-point bound is enough to show and fast
  o.memory_budget_bytes = 1e5;  // 100 KB: the parameters alone need more
  Expected<Plan> p = make_plan(g, o);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_FALSE(p->summary.fits);
  EXPECT_TRUE(p->choice.empty());
  ASSERT_TRUE(p->shortfall.has_value());
  EXPECT_GT(p->shortfall->lower_bound_bytes, 1e5);
  EXPECT_FALSE(p->shortfall->top_nodes.empty());
}

TEST(AutoPlan, BudgetBetweenBestAndWorstIsRespected) {
  Graph g = model("llama3-debugmodel", 1, 4, 16);
  Plan free = plan_or_die(g, options({2}));
  PlanOptions o = options({2});
  o.solver.exact_memory_bound = false;
  o.memory_budget_bytes = free.summary.memory.peak * 0.8;
  Expected<Plan> tight = make_plan(g, o);
  ASSERT_TRUE(tight.ok()) << tight.error().message;
  if (tight->choice.empty()) {  // then nothing fits: the reported bound must say so
    ASSERT_TRUE(tight->shortfall.has_value());
    EXPECT_GT(tight->shortfall->lower_bound_bytes, *o.memory_budget_bytes);
    return;
  }
  EXPECT_LE(tight->summary.memory.peak, *o.memory_budget_bytes * (1 + 1e-9));
  EXPECT_GE(tight->summary.step_time_s, free.summary.step_time_s * (1 - 1e-9));
}

TEST(AutoPlan, SameInputsGiveTheSameJsonByteForByte) {
  Graph g = model("llama3-debugmodel", 1, 4, 16);
  Plan a = plan_or_die(g, options({2, 2}));
  Plan b = plan_or_die(g, options({2, 2}));
  EXPECT_EQ(plan_to_json(g, a, /*timings=*/false), plan_to_json(g, b, /*timings=*/false));
}

TEST(AutoPlan, JsonHasTheDocumentedFields) {
  Graph g = model("mlp", 1, 0, 0);
  Plan p = plan_or_die(g, options({2}));
  std::string json = plan_to_json(g, p, /*timings=*/true);
  for (const char* key : {"\"mesh\"", "\"nodes\"", "\"placement\"", "\"redistributions\"",
                          "\"summary\"", "\"step_time_s\"", "\"compute_s\"", "\"comm_s\"",
                          "\"peak_memory_bytes\"", "\"fits\"", "\"solver\"", "\"variables\"",
                          "\"constraints\"", "\"time_s\"", "\"objective\"", "\"gap\"",
                          "\"unreduced_variables\"", "\"unreduced_constraints\""}) {
    EXPECT_NE(json.find(key), std::string::npos) << key;
  }
}

}  // namespace
}  // namespace autopar
