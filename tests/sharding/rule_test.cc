#include <gtest/gtest.h>

#include <fmt/format.h>

#include "fixtures.h"
#include "sharding/op_rules.h"
#include "sharding/rules/builders.h"
#include "sharding/strategy.h"

namespace autopar {
namespace {

std::string rule_of(OpId op) {
  std::optional<testing::OpFixture> fx = testing::op_fixture(op);
  if (!fx) return "no fixture";
  Expected<OpRule> rule = node_rule(fx->graph, fx->node);
  return rule ? to_string(*rule) : rule.error().message;
}

std::vector<std::string> options_of(OpId op) {
  std::optional<testing::OpFixture> fx = testing::op_fixture(op);
  Expected<OpRule> rule = node_rule(fx->graph, fx->node);
  std::vector<std::string> out;
  for (const DimOption& o : single_dim_options(*rule)) {
    out.push_back(to_string(o, static_cast<int>(rule->inputs.size())));
  }
  return out;
}

TEST(RuleCoverage, EveryOpHasARule) {
  std::string missing;
  for (OpId op : ops_without_rule()) missing += fmt::format(" {}", op_name(op));
  EXPECT_TRUE(missing.empty()) << "ops without a sharding rule:" << missing;
}

TEST(RuleCoverage, AnOpWithoutARuleIsAnErrorNotAReplicate) {
  // Every op has a rule today, so exercise the registry's error path on a
  // graph built by hand: a missing rule must name the op.
  for (OpId op : ops_without_rule()) {
    Attrs attrs;
    RuleCall call{{}, attrs, {}};
    EXPECT_FALSE(op_rule(op, call).ok()) << op_name(op);
  }
  EXPECT_TRUE(has_rule(OpId::kMm));
}

TEST(Rule, MatmulContractionLeavesTheOutputPartial) {
  EXPECT_EQ(rule_of(OpId::kMm), "mk,kn->mn reduce={k:sum} linear={0}{1}");
  EXPECT_EQ(options_of(OpId::kMm),
            (std::vector<std::string>{"RR->R", "S(0)R->S(0)", "S(1)S(0)->P", "RS(1)->S(1)",
                                      "PR->P", "RP->P"}));
}

TEST(Rule, AddmmBiasIsPartialUnderTheContraction) {
  // bias [8] broadcasts along m; under k the product is Partial so the bias must be too.
  EXPECT_EQ(rule_of(OpId::kAddmm), "n,mk,kn->mn reduce={k:sum} additive={0} linear={0,1}{0,2}");
  std::vector<std::string> options = options_of(OpId::kAddmm);
  EXPECT_NE(std::find(options.begin(), options.end(), "PS(1)S(0)->P"), options.end());
  EXPECT_NE(std::find(options.begin(), options.end(), "RS(0)R->S(0)"), options.end());
}

TEST(Rule, PointwiseBroadcastDimsAreNeverSharded) {
  // mul [4, 6] * [4, 1]: the size-1 dim prints as 1, so sharding b leaves input 1 replicated.
  EXPECT_EQ(rule_of(OpId::kMulTensor), "ab,a1->ab linear={0}{1}");
  std::vector<std::string> options = options_of(OpId::kMulTensor);
  EXPECT_NE(std::find(options.begin(), options.end(), "S(1)R->S(1)"), options.end());
  EXPECT_NE(std::find(options.begin(), options.end(), "PR->P"), options.end());
  EXPECT_EQ(std::find(options.begin(), options.end(), "PP->P"), options.end());  // P*P is not P
}

TEST(Rule, AddOfTwoPartialsIsPartialButScalarAddIsNot) {
  std::vector<std::string> add = options_of(OpId::kAddTensor);
  EXPECT_NE(std::find(add.begin(), add.end(), "PP->P"), add.end());
  EXPECT_EQ(rule_of(OpId::kAddScalar), "ab->ab");  // x + c on n partial terms adds c n times
}

TEST(Rule, ViewShardFollowsTheOutermostDimOfAMergedGroup) {
  // [4, 24] -> [4, 4, 6]: dim 1 splits into (4, 6); only its outer factor b can shard it.
  EXPECT_EQ(rule_of(OpId::kView), "a(bc)->abc linear={0}");
  std::vector<std::string> options = options_of(OpId::kView);
  EXPECT_NE(std::find(options.begin(), options.end(), "S(1)->S(1)"), options.end());
  EXPECT_EQ(std::find(options.begin(), options.end(), "S(1)->S(2)"), options.end());
  // [4, 6] -> [24]: a flatten, sharded only through dim 0.
  EXPECT_EQ(rule_of(OpId::kUnsafeView), "ab->(ab) linear={0}");
}

TEST(Rule, ViewSpecKeepsSizeOneDimsOutOfGroups) {
  EXPECT_EQ(sharding_rules::view_spec({2, 8192, 4096}, {2, 8192, 32, 128}), "ab(cd)->abcd");
  EXPECT_EQ(sharding_rules::view_spec({2, 1, 6}, {2, 6}), "a1b->ab");
  EXPECT_EQ(sharding_rules::view_spec({6, 4}, {4, 6}), "a_->ab");
}

TEST(Rule, EmbeddingRowShardIsAMaskedLookupWithPartialOutput) {
  EXPECT_EQ(rule_of(OpId::kEmbedding), "vh,ab->abh reduce={v:sum} linear={0}");
  std::vector<std::string> options = options_of(OpId::kEmbedding);
  EXPECT_NE(std::find(options.begin(), options.end(), "S(0)R->P"), options.end());     // rows
  EXPECT_NE(std::find(options.begin(), options.end(), "S(1)R->S(2)"), options.end());  // cols
  EXPECT_NE(std::find(options.begin(), options.end(), "RS(0)->S(0)"), options.end());  // indices
}

TEST(Rule, LogSoftmaxShardsAnyDimButTheSoftmaxDim) {
  EXPECT_EQ(rule_of(OpId::kLogSoftmax), "ab->ab replicate={b}");
  EXPECT_EQ(options_of(OpId::kLogSoftmax), (std::vector<std::string>{"R->R", "S(0)->S(0)"}));
}

TEST(Rule, NllLossBatchShardGivesPartialLossAndTotalWeight) {
  std::vector<std::string> options = options_of(OpId::kNllLossForward);
  EXPECT_EQ(options, (std::vector<std::string>{"RR->RR", "S(0)S(0)->P(avg)P"}));
}

TEST(Rule, AttentionShardsBatchAndHeadsOnly) {
  EXPECT_EQ(options_of(OpId::kSdpaFlashCpu),
            (std::vector<std::string>{"RRR->RR", "S(0)S(0)S(0)->S(0)S(0)",
                                      "S(1)S(1)S(1)->S(1)S(1)"}));
}

TEST(Rule, MeanOverAShardedDimIsPartialAverage) {
  EXPECT_EQ(rule_of(OpId::kMeanDim), "ab->a1 reduce={b:avg} linear={0}");
}

TEST(Rule, ComplexPairDimIsNeverSharded) {
  EXPECT_EQ(rule_of(OpId::kViewAsComplex), "ab2->ab linear={0}");
  EXPECT_EQ(rule_of(OpId::kViewAsReal), "ab->ab2 linear={0}");
}

TEST(Rule, PlaceholdersNeverTakePartial) {
  std::vector<std::string> options = options_of(OpId::kPlaceholder);
  EXPECT_EQ(options, (std::vector<std::string>{"->R", "->S(0)", "->S(1)"}));
}

}  // namespace
}  // namespace autopar
