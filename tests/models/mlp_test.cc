#include <gtest/gtest.h>

#include "model_checks.h"

namespace autopar {
namespace {

using namespace autopar::testing;

TEST(Mlp, ParamCountIsTheSumOfWeightsAndBiases) {
  Graph g = build_or_fail({.name = "mlp"});
  // 2 hidden layers: 64*256 + 256 + 256*256 + 256, output 256*16 + 16
  //   = 16384 + 256 + 65536 + 256 + 4096 + 16 = 86544
  EXPECT_EQ(param_count(g), 86544);
}

TEST(Mlp, LayersOverrideSetsTheHiddenLayerCount) {
  Graph g = build_or_fail({.name = "mlp", .layers = 1});
  // 64*256 + 256 + 256*16 + 16 = 20752
  EXPECT_EQ(param_count(g), 20752);
  EXPECT_EQ(count_op(g, OpId::kRelu), 1);
}

TEST(Mlp, EveryParamGetsOneGradientOfItsOwnMeta) {
  expect_one_matching_grad_per_param(build_or_fail({.name = "mlp"}));
}

TEST(Mlp, ForwardIsAddmmAndReluPerLayerThenCrossEntropy) {
  Graph g = build_or_fail({.name = "mlp"});
  // Forward after the 6 params, 2 inputs and the tangent (9 placeholders):
  // per hidden layer t, addmm, relu (2 x 3); output t, addmm (2); loss (4).
  std::vector<std::string> ops;
  for (NodeId id = 9; id < 9 + 12; ++id) ops.push_back(default_node_base_name(g.node(id).op));
  EXPECT_EQ(ops,
            (std::vector<std::string>{"t", "addmm", "relu", "t", "addmm", "relu", "t", "addmm",
                                      "_log_softmax", "nll_loss_forward", "getitem", "getitem"}));
  EXPECT_EQ(g.node(8).name, "tangents_1");
  EXPECT_EQ(g.node(g.outputs()[0].node).scope, "loss");
}

TEST(Mlp, BiasGradientSumsOverTheBatch) {
  Graph g = build_or_fail({.name = "mlp"});
  // The output bias gets sum(grad [32, 16], dim 0, keepdim) -> [1, 16] -> view [16].
  NodeId bias = *g.find("output_bias");
  for (const GraphOutput& out : g.outputs()) {
    if (out.param != bias) continue;
    const Node& view = g.node(out.node);
    ASSERT_EQ(view.op, OpId::kView);
    const Node& sum = g.node(view.inputs[0]);
    EXPECT_EQ(sum.op, OpId::kSumDimIntList);
    EXPECT_EQ(to_string(sum.meta()), "f32[1, 16]");
    EXPECT_EQ(sum.scope, "output");
  }
}

TEST(Mlp, TheInputsGetNoGradient) {
  Graph g = build_or_fail({.name = "mlp"});
  // mm(grad, t(weight)) for the first layer would give f32[32, 64]; only the two
  // later layers propagate a gradient to their input: [32, 256] each.
  int to_input = 0;
  for (const Node& node : g.nodes()) {
    if (node.op == OpId::kMm && node.meta().shape == Shape{32, 64}) ++to_input;
  }
  EXPECT_EQ(to_input, 0);
  EXPECT_EQ(count_op(g, OpId::kMm), 3 + 2);  // 3 weight gradients + 2 activation gradients
}

TEST(Mlp, Bf16MakesParamsAndLossBf16) {
  Graph g = build_or_fail({.name = "mlp", .dtype = DType::bf16});
  EXPECT_EQ(g.node(*g.find("layers_0_weight")).meta().dtype, DType::bf16);
  EXPECT_EQ(g.node(g.outputs()[0].node).meta(), (TensorMeta{{}, DType::bf16}));
  expect_one_matching_grad_per_param(g);
}

}  // namespace
}  // namespace autopar
