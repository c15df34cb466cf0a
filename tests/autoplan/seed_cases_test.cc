// The review thread's cases (shared/seeds/autoparallel-invalid-sharding-...):
// llama3-8b, batch 2, seq 8192, a 2x4 mesh (DP=2, TP=4), H100, memory limits
// on. Two layers instead of 32 keep the test fast; every layer has the same
// shapes, so the choices per layer are the same problem.
#include <gtest/gtest.h>

#include "plan_fixtures.h"
#include "sharding/placement.h"

namespace autopar {
namespace {

using testing::model;
using testing::options;
using testing::plan_or_die;

class SeedCase : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    graph_ = new Graph(model("llama3-8b", 2, 2, 8192));
    PlanOptions o = options({2, 4});
    o.memory_budget_bytes = 80e9;
    plan_ = new Plan(plan_or_die(*graph_, o));
  }
  static void TearDownTestSuite() {
    delete plan_;
    delete graph_;
  }
  static const Sharding& output(NodeId v) {
    return plan_->strategies.nodes[static_cast<size_t>(v)].output(plan_->choice[static_cast<size_t>(v)], 0);
  }
  static Graph* graph_;
  static Plan* plan_;
};

Graph* SeedCase::graph_ = nullptr;
Plan* SeedCase::plan_ = nullptr;

TEST_F(SeedCase, EmbeddingOutputIsNotReplicatedOnEveryMeshDimWithoutAPin) {
  std::optional<NodeId> embedding = graph_->find("embedding");
  ASSERT_TRUE(embedding.has_value());
  ASSERT_FALSE(plan_->choice.empty());
  EXPECT_FALSE(output(*embedding).is_replicated()) << to_string(output(*embedding));
}

TEST_F(SeedCase, NoComplexTensorIsEverSentAsComplex) {
  int complex_redistributions = 0;
  for (const PlannedRedistribution& r : plan_->redistributions) {
    const TensorMeta& meta = graph_->node(r.producer).outputs[static_cast<size_t>(r.output_index)];
    if (is_complex(meta.dtype)) ++complex_redistributions;
    EXPECT_FALSE(is_complex(r.plan.sent_meta.dtype)) << graph_->node(r.producer).name;
    for (const RedistStep& step : r.plan.steps) EXPECT_FALSE(is_complex(step.dtype));
  }
  RecordProperty("complex_redistributions", complex_redistributions);
}

TEST_F(SeedCase, NoDimIsShardedBelowTheMeshSizeOrUnevenly) {
  for (NodeId v = 0; v < graph_->size(); ++v) {
    const Node& n = graph_->node(v);
    const NodeStrategies& ns = plan_->strategies.nodes[static_cast<size_t>(v)];
    StrategyIdx s = plan_->choice[static_cast<size_t>(v)];
    for (size_t o = 0; o < n.outputs.size(); ++o) {
      EXPECT_TRUE(is_valid_sharding(n.outputs[o].shape, ns.output(s, static_cast<int>(o)), plan_->mesh))
          << n.name;
    }
  }
}

TEST_F(SeedCase, APinStillForcesTheEmbeddingOutputReplicated) {
  PlanOptions o = options({2, 4});
  o.memory_budget_bytes = 80e9;
  o.pins = {*parse_pin("embedding=RR", 2)};
  Plan pinned = plan_or_die(*graph_, o);
  NodeId e = *graph_->find("embedding");
  const Sharding& s =
      pinned.strategies.nodes[static_cast<size_t>(e)].output(pinned.choice[static_cast<size_t>(e)], 0);
  EXPECT_TRUE(s.is_replicated());
  EXPECT_GE(pinned.summary.step_time_s, plan_->summary.step_time_s * (1 - 1e-9));
}

}  // namespace
}  // namespace autopar
