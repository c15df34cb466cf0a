// Unit tests of the CLI's summary and number formatting on hand-built graphs.
#include <gtest/gtest.h>

#include "cli_output.h"
#include "graph_summary.h"

namespace autopar {
namespace {

// x f32[2, 4] (input) @ w f32[4, 3] (param) -> mm f32[2, 3] -> relu -> loss;
// a second relu, not on the loss's path, stands in for the backward part.
Graph small_joint_graph() {
  Graph g;
  g.name = "small";
  NodeId w = g.add_placeholder("w", PlaceholderKind::kParam, {{4, 3}, DType::f32}, "w");
  NodeId x = g.add_placeholder("x", PlaceholderKind::kInput, {{2, 4}, DType::f32});
  NodeId t = g.add_placeholder("t", PlaceholderKind::kTangent, {{2, 3}, DType::f32});
  NodeId mm = *g.add(OpId::kMm, {x, w});
  NodeId loss = *g.add(OpId::kRelu, {mm});
  NodeId grad = *g.add(OpId::kRelu, {t});
  g.add_output({loss, OutputKind::kLoss, kNoNode});
  g.add_output({grad, OutputKind::kGradient, w});
  return g;
}

TEST(GraphSummary, CountsParamsPlaceholdersAndOutputs) {
  GraphSummary s = summarize_graph(small_joint_graph());
  EXPECT_EQ(s.name, "small");
  EXPECT_EQ(s.nodes, 6);
  EXPECT_EQ(s.params, 12);       // 4 * 3
  EXPECT_EQ(s.param_bytes, 48);  // 12 * 4 bytes
  EXPECT_EQ(s.param_placeholders, 1);
  EXPECT_EQ(s.inputs, 1);
  EXPECT_EQ(s.tangents, 1);
  EXPECT_EQ(s.buffers, 0);
  EXPECT_EQ(s.loss_outputs, 1);
  EXPECT_EQ(s.grad_outputs, 1);
}

TEST(GraphSummary, ForwardActivationsAreTheLossPathAndJointAddsTheRest) {
  GraphSummary s = summarize_graph(small_joint_graph());
  // forward: mm f32[2, 3] + relu f32[2, 3] = 24 + 24 bytes; placeholders are not activations
  EXPECT_EQ(s.forward_activation_bytes, 48);
  // joint adds the backward relu f32[2, 3]: 48 + 24
  EXPECT_EQ(s.joint_activation_bytes, 72);
}

TEST(GraphSummary, OpsAreSortedByCountThenByName) {
  GraphSummary s = summarize_graph(small_joint_graph());
  ASSERT_EQ(s.ops.size(), 3u);
  EXPECT_EQ(s.ops[0].op, "placeholder");  // 3
  EXPECT_EQ(s.ops[0].count, 3);
  EXPECT_EQ(s.ops[1].op, "aten.relu.default");  // 2
  EXPECT_EQ(s.ops[2].op, "aten.mm.default");  // 1
}

TEST(GraphSummary, FormattedSummaryShowsSeparatedAndRawCounts) {
  GraphSummary s;
  s.name = "big";
  s.params = 8030261248;
  std::string text = format_summary(s);
  EXPECT_NE(text.find("8,030,261,248 (8030261248)"), std::string::npos) << text;
  EXPECT_NE(text.find("big"), std::string::npos) << text;
}

TEST(WithThousands, GroupsDigitsByThreeFromTheRight) {
  EXPECT_EQ(with_thousands(0), "0");
  EXPECT_EQ(with_thousands(999), "999");
  EXPECT_EQ(with_thousands(1000), "1,000");
  EXPECT_EQ(with_thousands(123456), "123,456");
  EXPECT_EQ(with_thousands(8030261248), "8,030,261,248");
  EXPECT_EQ(with_thousands(-1234567), "-1,234,567");
}

}  // namespace
}  // namespace autopar
