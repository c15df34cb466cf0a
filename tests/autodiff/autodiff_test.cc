#include "autodiff/autodiff.h"

#include <gtest/gtest.h>

#include <map>

#include "test_graphs.h"

namespace autopar {
namespace {

using namespace autopar::testing;
using Ops = std::vector<std::string>;

TEST(Autodiff, MmBackwardIsTwoMatmulsWithTransposedOperands) {
  Graph g;
  NodeId a = g.add_placeholder("a", PlaceholderKind::kParam, {{16, 32}, DType::f32});
  NodeId b = g.add_placeholder("b", PlaceholderKind::kParam, {{32, 8}, DType::f32});
  NodeId loss = sum_all(g, must(g.add(OpId::kMm, {a, b})));
  Graph joint = joint_of(g, loss);

  // sum backward: view the scalar to [1, 1], expand to [16, 8]; then
  // grad a = mm(grad, t(b)) : [16, 8] @ [8, 32] = [16, 32]
  // grad b = mm(t(a), grad) : [32, 16] @ [16, 8] = [32, 8]
  EXPECT_EQ(backward_ops(joint, g.size()), (Ops{"view", "expand", "t", "mm", "t", "mm"}));
  NodeId grad_a = grad_output(joint, "a");
  NodeId grad_b = grad_output(joint, "b");
  ASSERT_NE(grad_a, kNoNode);
  ASSERT_NE(grad_b, kNoNode);
  EXPECT_EQ(to_string(joint.node(grad_a).meta()), "f32[16, 32]");
  EXPECT_EQ(to_string(joint.node(grad_b).meta()), "f32[32, 8]");
  EXPECT_EQ(joint.node(joint.node(grad_a).inputs[1]).name, "t");    // t(b)
  EXPECT_EQ(joint.node(joint.node(grad_b).inputs[0]).name, "t_1");  // t(a)
  ASSERT_EQ(joint.outputs().size(), 3u);
  EXPECT_EQ(joint.outputs()[0].kind, OutputKind::kLoss);
  EXPECT_EQ(joint.node(joint.outputs()[0].node).name, "sum");
}

TEST(Autodiff, PlaceholdersAreParamsThenBuffersThenInputsThenTheTangent) {
  Graph g;
  NodeId x = g.add_placeholder("x", PlaceholderKind::kInput, {{2, 4}, DType::f32});
  NodeId s = g.add_placeholder("s", PlaceholderKind::kBuffer, {{4}, DType::f32});
  NodeId w = g.add_placeholder("w", PlaceholderKind::kParam, {{4, 3}, DType::f32});
  NodeId xs = must(g.add(OpId::kMulTensor, {x, s}));
  NodeId loss = sum_all(g, must(g.add(OpId::kMm, {xs, w})));
  Graph joint = joint_of(g, loss);

  ASSERT_GE(joint.size(), 4);
  EXPECT_EQ(joint.node(0).name, "w");
  EXPECT_EQ(joint.node(1).name, "s");
  EXPECT_EQ(joint.node(2).name, "x");
  EXPECT_EQ(joint.node(3).name, "tangents_1");
  EXPECT_EQ(joint.node(3).kind, PlaceholderKind::kTangent);
  EXPECT_EQ(joint.node(3).meta(), (TensorMeta{{}, DType::f32}));  // the loss's meta
  EXPECT_FALSE(joint.node(4).is_placeholder());
}

// sum(relu(x @ w) + silu(x @ w)): the mm's value is used twice.
Graph value_used_twice() {
  Graph g;
  NodeId w = g.add_placeholder("w", PlaceholderKind::kParam, {{4, 4}, DType::f32});
  NodeId x = g.add_placeholder("x", PlaceholderKind::kInput, {{2, 4}, DType::f32});
  NodeId h = must(g.add(OpId::kMm, {x, w}));
  NodeId r = must(g.add(OpId::kRelu, {h}));
  NodeId s = must(g.add(OpId::kSilu, {h}));
  sum_all(g, must(g.add(OpId::kAddTensor, {r, s})));
  return g;
}

TEST(Autodiff, GradientsOfAValueUsedTwiceAreSummedWithAddTensor) {
  Graph g = value_used_twice();
  Graph joint = joint_of(g, g.size() - 1);

  // Reverse order: silu's contribution, relu's, their sum, then only w's half of mm
  // (x is an input and gets no gradient).
  EXPECT_EQ(backward_ops(joint, g.size()),
            (Ops{"view", "expand", "silu_backward", "threshold_backward", "add", "t", "mm"}));
  NodeId sum_node = *joint.find("add_1");
  EXPECT_EQ(joint.node(sum_node).op, OpId::kAddTensor);
  EXPECT_EQ(joint.node(joint.node(sum_node).inputs[0]).op, OpId::kSiluBackward);
  EXPECT_EQ(joint.node(joint.node(sum_node).inputs[1]).op, OpId::kThresholdBackward);
  EXPECT_EQ(joint.node(grad_output(joint, "w")).inputs[1], sum_node);
}

// Each differentiated forward value is linked to its whole gradient: the
// summed one for a value used twice. A gradient passed on unchanged (add's to
// its inputs) is linked only to the value it is the gradient of.
TEST(Autodiff, EveryDifferentiatedValueIsLinkedToTheGradientFlowingBackToIt) {
  Graph g = value_used_twice();
  Graph joint = joint_of(g, g.size() - 1);

  std::map<std::string, std::string> grad_of;
  for (const GradientLink& link : joint.gradient_links()) {
    EXPECT_EQ(joint.node(link.grad).meta(), joint.node(link.value).meta());
    grad_of[joint.node(link.value).name] = joint.node(link.grad).name;
  }
  // The loss's gradient is the tangent placeholder: no link. The sum of r and
  // s gets the expanded tangent, which add passes on to r and s unchanged.
  EXPECT_EQ(grad_of, (std::map<std::string, std::string>{{"mm", "add_1"}, {"add", "expand"}}));
}

TEST(Autodiff, BroadcastAddSumsTheGradientBackToTheBiasShape) {
  Graph g;
  NodeId bias = g.add_placeholder("bias", PlaceholderKind::kParam, {{8}, DType::f32});
  NodeId x = g.add_placeholder("x", PlaceholderKind::kInput, {{4, 8}, DType::f32});
  NodeId loss = sum_all(g, must(g.add(OpId::kAddTensor, {x, bias})));
  Graph joint = joint_of(g, loss);

  // [4, 8] -> sum over dim 0 keepdim -> [1, 8] -> view [8]
  EXPECT_EQ(backward_ops(joint, g.size()), (Ops{"view", "expand", "sum", "view"}));
  NodeId summed = *joint.find("sum_1");
  EXPECT_EQ(joint.node(summed).attrs.get_ints("dim"), (std::vector<int64_t>{0}));
  EXPECT_TRUE(joint.node(summed).attrs.get_bool("keepdim"));
  EXPECT_EQ(joint.node(grad_output(joint, "bias")).meta(), (TensorMeta{{8}, DType::f32}));
}

TEST(Autodiff, BackwardNodesCarryTheScopeOfTheForwardNodeTheyDifferentiate) {
  Graph g;
  NodeId w = g.add_placeholder("w", PlaceholderKind::kParam, {{4, 4}, DType::f32});
  NodeId x = g.add_placeholder("x", PlaceholderKind::kInput, {{2, 4}, DType::f32});
  NodeId h = must(g.add(OpId::kMm, {x, w}, {}, "layers.3.attention"));
  NodeId loss = must(g.add(OpId::kSumDimIntList, {h}, {{"dim", std::vector<int64_t>{}}}, "loss"));
  Graph joint = joint_of(g, loss);

  for (NodeId id = g.size() + 1; id < joint.size(); ++id) {
    const Node& node = joint.node(id);
    bool from_mm = node.op == OpId::kMm || node.op == OpId::kT;
    EXPECT_EQ(node.scope, from_mm ? "layers.3.attention" : "loss") << node.name;
  }
}

TEST(Autodiff, ComplexMulBackwardMultipliesByTheConjugate) {
  Graph g;
  NodeId x = g.add_placeholder("x", PlaceholderKind::kParam, {{2, 4, 2}, DType::f32});
  NodeId freqs = g.add_placeholder("freqs", PlaceholderKind::kBuffer, {{4}, DType::c64});
  NodeId c = must(g.add(OpId::kViewAsComplex, {x}));
  NodeId m = must(g.add(OpId::kMulTensor, {c, freqs}));
  NodeId loss = sum_all(g, must(g.add(OpId::kViewAsReal, {m})));
  Graph joint = joint_of(g, loss);

  // The buffer needs no gradient, so only grad * conj(freqs) is emitted.
  EXPECT_EQ(backward_ops(joint, g.size()),
            (Ops{"view", "expand", "view_as_complex", "_conj", "mul", "view_as_real"}));
  EXPECT_EQ(to_string(joint.node(*joint.find("mul_1")).meta()), "c64[2, 4]");
  EXPECT_EQ(joint.node(grad_output(joint, "x")).meta(), (TensorMeta{{2, 4, 2}, DType::f32}));
}

TEST(Autodiff, MeanBackwardExpandsAndDividesByTheReducedCount) {
  Graph g;
  NodeId x = g.add_placeholder("x", PlaceholderKind::kParam, {{4, 6}, DType::f32});
  NodeId mean =
      must(g.add(OpId::kMeanDim, {x}, {{"dim", std::vector<int64_t>{-1}}, {"keepdim", true}}));
  NodeId loss = sum_all(g, mean);
  Graph joint = joint_of(g, loss);

  EXPECT_EQ(backward_ops(joint, g.size()), (Ops{"view", "expand", "expand", "div"}));
  EXPECT_EQ(joint.node(*joint.find("div")).attrs.get_scalar("other"), 6.0);  // dim -1 has 6
}

TEST(Autodiff, PowBackwardIsGradTimesExponentTimesPowerMinusOne) {
  Graph g;
  NodeId x = g.add_placeholder("x", PlaceholderKind::kParam, {{3}, DType::f32});
  NodeId loss = sum_all(g, must(g.add(OpId::kPowTensorScalar, {x}, {{"exponent", 2.0}})));
  Graph joint = joint_of(g, loss);

  // grad * (2 * x^1)
  EXPECT_EQ(backward_ops(joint, g.size()), (Ops{"view", "expand", "pow", "mul", "mul"}));
  EXPECT_EQ(joint.node(*joint.find("pow_1")).attrs.get_scalar("exponent"), 1.0);
  EXPECT_EQ(joint.node(*joint.find("mul")).attrs.get_scalar("other"), 2.0);
}

TEST(Autodiff, NllLossBackwardTakesTheTotalWeightThroughGetItemOne) {
  Graph g;
  NodeId logits = g.add_placeholder("logits", PlaceholderKind::kParam, {{4, 5}, DType::f32});
  NodeId labels = g.add_placeholder("labels", PlaceholderKind::kInput, {{4}, DType::i64});
  NodeId lsm =
      must(g.add(OpId::kLogSoftmax, {logits}, {{"dim", int64_t{1}}, {"half_to_float", false}}));
  NodeId nll = must(g.add(OpId::kNllLossForward, {lsm, labels},
                          {{"reduction", int64_t{1}}, {"ignore_index", int64_t{-100}}}));
  NodeId loss = must(g.add(OpId::kGetItem, {nll}, {{"index", int64_t{0}}}));
  Graph joint = joint_of(g, loss);

  EXPECT_EQ(backward_ops(joint, g.size()),
            (Ops{"getitem", "nll_loss_backward", "_log_softmax_backward_data"}));
  const Node& backward = joint.node(*joint.find("nll_loss_backward"));
  ASSERT_EQ(backward.inputs.size(), 4u);
  EXPECT_EQ(joint.node(backward.inputs[0]).name, "tangents_1");
  EXPECT_EQ(joint.node(backward.inputs[3]).attrs.get_int("index"), 1);  // total_weight
  EXPECT_EQ(backward.attrs.get_int("ignore_index"), -100);
}

TEST(Autodiff, AttentionBackwardReturnsQueryKeyAndValueGradientsThroughGetItem) {
  Graph g;
  TensorMeta qkv{{1, 2, 4, 8}, DType::f32};
  NodeId q = g.add_placeholder("q", PlaceholderKind::kParam, qkv);
  NodeId k = g.add_placeholder("k", PlaceholderKind::kParam, qkv);
  NodeId v = g.add_placeholder("v", PlaceholderKind::kParam, qkv);
  NodeId attn = must(g.add(OpId::kSdpaFlashCpu, {q, k, v}, {{"is_causal", true}}));
  NodeId out = must(g.add(OpId::kGetItem, {attn}, {{"index", int64_t{0}}}));
  must(g.add(OpId::kGetItem, {attn}, {{"index", int64_t{1}}}));  // logsumexp, saved
  NodeId loss = sum_all(g, out);
  Graph joint = joint_of(g, loss);

  EXPECT_EQ(backward_ops(joint, g.size()),
            (Ops{"view", "expand", "_scaled_dot_product_flash_attention_for_cpu_backward",
                 "getitem", "getitem", "getitem"}));
  for (std::string_view name : {"q", "k", "v"}) {
    NodeId grad = grad_output(joint, name);
    ASSERT_NE(grad, kNoNode) << name;
    EXPECT_EQ(joint.node(grad).meta(), qkv) << name;
  }
  const Node& backward =
      joint.node(*joint.find("_scaled_dot_product_flash_attention_for_cpu_backward"));
  EXPECT_EQ(backward.inputs[4], *joint.find("getitem"));    // the forward's out
  EXPECT_EQ(backward.inputs[5], *joint.find("getitem_1"));  // the forward's logsumexp
  EXPECT_TRUE(backward.attrs.get_bool("is_causal"));
}

TEST(Autodiff, AParamTheLossDoesNotUseIsAnErrorNamingIt) {
  Graph g;
  NodeId used = g.add_placeholder("used", PlaceholderKind::kParam, {{3}, DType::f32});
  g.add_placeholder("unused", PlaceholderKind::kParam, {{3}, DType::f32});
  NodeId loss = sum_all(g, used);
  Expected<Graph> joint = build_joint_graph(g, {loss, {}});
  ASSERT_FALSE(joint.ok());
  EXPECT_EQ(joint.error().message,
            "the loss 'sum' does not depend on these params, so they get no gradient: unused");
}

TEST(Autodiff, AnOpOfImportedGraphsOnlyIsRefusedNamingTheNode) {
  Graph g;
  NodeId w = g.add_placeholder("w", PlaceholderKind::kParam, {{3}, DType::f32});
  NodeId relu6 = must(g.add(OpId::kHardtanh, {w}, {{"min_val", 0.0}, {"max_val", 6.0}}));
  Expected<Graph> joint = build_joint_graph(g, {sum_all(g, relu6), {}});
  ASSERT_FALSE(joint.ok());
  EXPECT_EQ(joint.error().message,
            "node 'hardtanh' (aten.hardtanh.default) has no gradient rule: the op appears only in "
            "imported joint graphs (export the training step with python/autopar_export.py "
            "instead)");
}

TEST(Autodiff, ANonScalarLossIsAnError) {
  Graph g;
  NodeId w = g.add_placeholder("w", PlaceholderKind::kParam, {{3}, DType::f32});
  NodeId relu = must(g.add(OpId::kRelu, {w}));
  Expected<Graph> joint = build_joint_graph(g, {relu, {}});
  ASSERT_FALSE(joint.ok());
  EXPECT_EQ(joint.error().message, "loss 'relu' must be one floating scalar, got f32[3]");
}

TEST(Autodiff, OnlyRequestedParamsGetGradientOutputsInRequestOrder) {
  Graph g;
  NodeId a = g.add_placeholder("a", PlaceholderKind::kParam, {{3}, DType::f32});
  NodeId b = g.add_placeholder("b", PlaceholderKind::kParam, {{3}, DType::f32});
  NodeId loss = sum_all(g, must(g.add(OpId::kMulTensor, {a, b})));
  Expected<Graph> joint = build_joint_graph(g, {loss, {b}});
  ASSERT_TRUE(joint.ok()) << joint.error().message;
  ASSERT_EQ(joint->outputs().size(), 2u);  // loss + grad of b
  EXPECT_EQ(joint->node(joint->outputs()[1].param).name, "b");
  // d(a*b)/db = grad * a; nothing is emitted for a.
  EXPECT_EQ(backward_ops(*joint, g.size()), (Ops{"view", "expand", "mul"}));
}

}  // namespace
}  // namespace autopar
