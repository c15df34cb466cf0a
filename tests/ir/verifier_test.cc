#include <gtest/gtest.h>

#include "ir/verifier.h"
#include "test_graphs.h"

namespace autopar {
namespace {

Node make_node(std::string name, OpId op, std::vector<NodeId> inputs, std::vector<TensorMeta> outputs,
               Attrs attrs = {}) {
  Node node;
  node.name = std::move(name);
  node.op = op;
  node.inputs = std::move(inputs);
  node.outputs = std::move(outputs);
  node.attrs = std::move(attrs);
  return node;
}

Node make_placeholder(std::string name, PlaceholderKind kind, TensorMeta meta) {
  Node node = make_node(std::move(name), OpId::kPlaceholder, {}, {std::move(meta)});
  node.kind = kind;
  return node;
}

std::string verify_message(const Graph& g) {
  Status s = verify(g);
  return s.ok() ? "ok" : s.error().message;
}

// x f32[4, 3], w f32[3, 2] as placeholders 0 and 1; the caller appends the rest.
Graph two_placeholders() {
  Graph g;
  g.add_placeholder("x", PlaceholderKind::kInput, {{4, 3}, DType::f32});
  g.add_placeholder("w", PlaceholderKind::kParam, {{3, 2}, DType::f32});
  return g;
}

TEST(Verifier, AcceptsHandBuiltGraphs) {
  EXPECT_EQ(verify_message(testing::matmul_loss_graph()), "ok");
  EXPECT_EQ(verify_message(testing::linear_training_graph()), "ok");
}

TEST(Verifier, PlaceholderTakesNoInputs) {
  Graph g = two_placeholders();
  Node p = make_placeholder("y", PlaceholderKind::kInput, {{2}, DType::f32});
  p.inputs = {0};
  ASSERT_TRUE(g.append(p).ok());
  EXPECT_EQ(verify_message(g), "node 'y' (placeholder): a placeholder takes no inputs, got 1");
}

TEST(Verifier, PlaceholderNeedsAKind) {
  Graph g = two_placeholders();
  ASSERT_TRUE(g.append(make_placeholder("y", PlaceholderKind::kNone, {{2}, DType::f32})).ok());
  EXPECT_EQ(verify_message(g),
            "node 'y' (placeholder): placeholder has no kind (param, buffer, input, tangent or constant)");
}

TEST(Verifier, PlaceholderDeclaresExactlyOneOutput) {
  Graph g = two_placeholders();
  Node p = make_placeholder("y", PlaceholderKind::kInput, {{2}, DType::f32});
  p.outputs.push_back({{3}, DType::f32});
  ASSERT_TRUE(g.append(p).ok());
  EXPECT_EQ(verify_message(g), "node 'y' (placeholder): a placeholder declares exactly one output, got 2");
}

TEST(Verifier, PlaceholdersPrecedeAllOtherNodes) {
  Graph g = two_placeholders();
  ASSERT_TRUE(g.add(OpId::kMm, {0, 1}).ok());
  g.add_placeholder("late", PlaceholderKind::kInput, {{2}, DType::f32});
  EXPECT_EQ(verify_message(g),
            "node 'late' (placeholder): placeholders must precede all other nodes, but 'mm' "
            "(node #2) comes before it");
}

TEST(Verifier, OnlyPlaceholdersHaveAKind) {
  Graph g = two_placeholders();
  Node mm = make_node("mm", OpId::kMm, {0, 1}, {{{4, 2}, DType::f32}});
  mm.kind = PlaceholderKind::kParam;
  ASSERT_TRUE(g.append(mm).ok());
  EXPECT_EQ(verify_message(g), "node 'mm' (aten.mm.default): only placeholders have a kind, got 'param'");
}

TEST(Verifier, InputsMustComeEarlierInExecutionOrder) {
  Graph g = two_placeholders();
  // Node #2 reads itself: not yet computed when it runs.
  ASSERT_TRUE(g.append(make_node("mm", OpId::kMm, {0, 2}, {{{4, 2}, DType::f32}})).ok());
  EXPECT_EQ(verify_message(g),
            "node 'mm' (aten.mm.default): input 1 refers to node #2, which does not come before "
            "it (this is node #2)");
}

TEST(Verifier, ArityMustMatchTheOp) {
  Graph g = two_placeholders();
  ASSERT_TRUE(g.append(make_node("mm", OpId::kMm, {0}, {{{4, 2}, DType::f32}})).ok());
  EXPECT_EQ(verify_message(g),
            "node 'mm' (aten.mm.default): aten.mm.default takes 2 tensor inputs, got 1");
}

TEST(Verifier, UnknownAttributeIsRejected) {
  Graph g = two_placeholders();
  ASSERT_TRUE(g.append(make_node("mm", OpId::kMm, {0, 1}, {{{4, 2}, DType::f32}},
                                 {{"alpha", int64_t{1}}}))
                  .ok());
  EXPECT_EQ(verify_message(g),
            "node 'mm' (aten.mm.default): aten.mm.default has no attribute 'alpha' (it takes: none)");
}

TEST(Verifier, MissingAndMistypedAttributesAreRejected) {
  Graph missing = two_placeholders();
  ASSERT_TRUE(missing.append(make_node("view", OpId::kView, {0}, {{{12}, DType::f32}})).ok());
  EXPECT_EQ(verify_message(missing),
            "node 'view' (aten.view.default): aten.view.default needs attribute 'size' (int list)");

  Graph mistyped = two_placeholders();
  ASSERT_TRUE(mistyped.append(make_node("view", OpId::kView, {0}, {{{12}, DType::f32}},
                                        {{"size", int64_t{12}}}))
                  .ok());
  EXPECT_EQ(verify_message(mistyped),
            "node 'view' (aten.view.default): aten.view.default attribute 'size' must be int "
            "list, got 12");
}

TEST(Verifier, RecordedShapeMustMatchTheOpRule) {
  Graph g = two_placeholders();
  // f32[4, 3] @ f32[3, 2] is f32[4, 2], not f32[4, 3].
  ASSERT_TRUE(g.append(make_node("mm", OpId::kMm, {0, 1}, {{{4, 3}, DType::f32}})).ok());
  EXPECT_EQ(verify_message(g),
            "node 'mm' (aten.mm.default): recorded outputs f32[4, 3] differ from inferred f32[4, 2]");
}

TEST(Verifier, RecordedDtypeAndOutputCountMustMatchTheOpRule) {
  Graph dtype = two_placeholders();
  ASSERT_TRUE(dtype.append(make_node("mm", OpId::kMm, {0, 1}, {{{4, 2}, DType::bf16}})).ok());
  EXPECT_EQ(verify_message(dtype),
            "node 'mm' (aten.mm.default): recorded outputs bf16[4, 2] differ from inferred f32[4, 2]");

  Graph count = two_placeholders();
  ASSERT_TRUE(count.append(make_node("mm", OpId::kMm, {0, 1},
                                     {{{4, 2}, DType::f32}, {{4, 2}, DType::f32}}))
                  .ok());
  EXPECT_EQ(verify_message(count),
            "node 'mm' (aten.mm.default): recorded outputs (f32[4, 2], f32[4, 2]) differ from "
            "inferred f32[4, 2]");
}

TEST(Verifier, MultiOutputNodeIsConsumedOnlyThroughGetitem) {
  Graph g = testing::linear_training_graph();
  NodeId nll = *g.find("nll_loss_forward");
  ASSERT_TRUE(g.append(make_node("relu", OpId::kRelu, {nll}, {{{}, DType::f32}})).ok());
  EXPECT_EQ(verify_message(g),
            "node 'relu' (aten.relu.default): aten.relu.default input 0 has 2 outputs; select "
            "one with getitem");
}

TEST(Verifier, GraphOutputMustBeANodeOfTheGraph) {
  Graph g = testing::matmul_loss_graph();
  g.add_output({99, OutputKind::kGradient, 1});
  EXPECT_EQ(verify_message(g), "graph output 1 (grad): node id 99 is not a node of the graph");
}

TEST(Verifier, GraphOutputMustBeASingleTensor) {
  Graph g = testing::linear_training_graph();
  g.add_output({*g.find("nll_loss_forward"), OutputKind::kLoss});
  EXPECT_EQ(verify_message(g),
            "graph output 2 (loss): node 'nll_loss_forward' has 2 outputs; select one with getitem");
}

TEST(Verifier, GraphNeedsExactlyOneLoss) {
  Graph none = two_placeholders();
  EXPECT_EQ(verify_message(none), "graph has no loss output; exactly one is required");

  Graph two = testing::linear_training_graph();
  two.add_output({*two.find("getitem_1"), OutputKind::kLoss});
  EXPECT_EQ(verify_message(two),
            "graph has 2 loss outputs (graph outputs 0 and 2); exactly one is required");
}

TEST(Verifier, LossIsAFloatingScalar) {
  Graph not_scalar = testing::matmul_loss_graph();
  not_scalar.add_output({*not_scalar.find("mm"), OutputKind::kLoss});
  // Output 0 (the sum) is fine; output 1 is f32[4, 2].
  EXPECT_EQ(verify_message(not_scalar),
            "graph output 1 (loss): node 'mm' must be a floating scalar, got f32[4, 2]");

  Graph integer;
  NodeId count = integer.add_placeholder("count", PlaceholderKind::kInput, {{}, DType::i64});
  integer.add_output({count, OutputKind::kLoss});
  EXPECT_EQ(verify_message(integer),
            "graph output 0 (loss): node 'count' must be a floating scalar, got i64[]");
}

TEST(Verifier, GradientBelongsToAParamPlaceholder) {
  Graph input = testing::linear_training_graph();
  input.add_output({*input.find("mm"), OutputKind::kGradient, *input.find("x")});
  EXPECT_EQ(verify_message(input),
            "graph output 2 (grad): 'x' is not a param placeholder (its kind is input)");

  Graph computed = testing::linear_training_graph();
  computed.add_output({*computed.find("t"), OutputKind::kGradient, *computed.find("t")});
  EXPECT_EQ(verify_message(computed),
            "graph output 2 (grad): 't' is not a param placeholder (its op is aten.t.default)");

  Graph missing = testing::linear_training_graph();
  missing.add_output({*missing.find("t"), OutputKind::kGradient, kNoNode});
  EXPECT_EQ(verify_message(missing), "graph output 2 (grad): param id -1 is not a node of the graph");
}

TEST(Verifier, GradientHasItsParamsExactMeta) {
  Graph g = testing::linear_training_graph();
  g.add_output({*g.find("t"), OutputKind::kGradient, *g.find("w")});
  // w is f32[3, 2]; t(x) is f32[3, 4].
  EXPECT_EQ(verify_message(g),
            "graph output 2 (grad of 'w'): node 't' is f32[3, 4], but the param is f32[3, 2]");
}

TEST(Verifier, ParamHasAtMostOneGradient) {
  Graph g = testing::linear_training_graph();
  g.add_output({*g.find("mm_1"), OutputKind::kGradient, *g.find("w")});
  EXPECT_EQ(verify_message(g),
            "graph output 2 (grad of 'w'): the param already has a gradient (graph output 1)");
}

}  // namespace
}  // namespace autopar
