#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "ir/printer.h"
#include "test_graphs.h"

namespace autopar {
namespace {

TEST(Printer, PrintsOneLinePerNodeThenTheReturnLine) {
  Graph g = testing::linear_training_graph();
  EXPECT_EQ(print_graph(g),
            "%x = placeholder[input](target=x)  # f32[4, 3]\n"
            "%w = placeholder[param](target=fc.weight)  # f32[3, 2]\n"
            "%target = placeholder[input](target=target)  # i64[4]\n"
            "%tangent = placeholder[tangent]()  # f32[]\n"
            "%mm = aten.mm.default(%x, %w)  # f32[4, 2]  @fc\n"
            "%_log_softmax = aten._log_softmax.default(%mm, dim=1, half_to_float=False)"
            "  # f32[4, 2]\n"
            "%nll_loss_forward = aten.nll_loss_forward.default(%_log_softmax, %target, "
            "reduction=1, ignore_index=-100)  # (f32[], f32[])\n"
            "%getitem = getitem(%nll_loss_forward, index=0)  # f32[]\n"
            "%getitem_1 = getitem(%nll_loss_forward, index=1)  # f32[]\n"
            "%nll_loss_backward = aten.nll_loss_backward.default(%tangent, %_log_softmax, "
            "%target, %getitem_1, reduction=1, ignore_index=-100)  # f32[4, 2]\n"
            "%_log_softmax_backward_data = aten._log_softmax_backward_data.default("
            "%nll_loss_backward, %_log_softmax, dim=1, input_dtype=f32)  # f32[4, 2]\n"
            "%t = aten.t.default(%x)  # f32[3, 4]\n"
            "%mm_1 = aten.mm.default(%t, %_log_softmax_backward_data)  # f32[3, 2]  @fc\n"
            "return (loss=%getitem, grad(%w)=%mm_1)\n");
}

TEST(Printer, MultiOutputNodePrintsATupleComment) {
  Graph g = testing::linear_training_graph();
  NodeId nll = *g.find("nll_loss_forward");
  EXPECT_EQ(format_node(g, nll),
            "%nll_loss_forward = aten.nll_loss_forward.default(%_log_softmax, %target, "
            "reduction=1, ignore_index=-100)  # (f32[], f32[])");
}

TEST(Printer, AttributesFollowTheSchemaOrderNotTheOrderTheyWereSet) {
  Graph g;
  NodeId bias = g.add_placeholder("b", PlaceholderKind::kParam, {{2}, DType::f32});
  NodeId x = g.add_placeholder("x", PlaceholderKind::kInput, {{4, 3}, DType::f32});
  NodeId w = g.add_placeholder("w", PlaceholderKind::kParam, {{3, 2}, DType::f32});
  // Set alpha before beta; aten.addmm's schema declares beta first.
  NodeId addmm = *g.add(OpId::kAddmm, {bias, x, w}, {{"alpha", int64_t{2}}, {"beta", 0.5}});
  EXPECT_EQ(format_node(g, addmm),
            "%addmm = aten.addmm.default(%b, %x, %w, beta=0.5, alpha=2)  # f32[4, 2]");
}

TEST(Printer, FloatScalarsKeepADecimalPointSoTheyDifferFromInts) {
  EXPECT_EQ(format_attr_value(AttrValue(2.0)), "2.0");
  EXPECT_EQ(format_attr_value(AttrValue(int64_t{2})), "2");
  EXPECT_EQ(format_attr_value(AttrValue(-3.0)), "-3.0");
  EXPECT_EQ(format_attr_value(AttrValue(1e-05)), "1e-05");
  EXPECT_EQ(format_attr_value(AttrValue(0.1)), "0.1");
  EXPECT_EQ(format_attr_value(AttrValue(-std::numeric_limits<double>::infinity())), "-inf");
  EXPECT_EQ(format_attr_value(AttrValue(std::nan(""))), "nan");
}

TEST(Printer, IntListsBoolsAndDtypesPrintAsPythonWould) {
  EXPECT_EQ(format_attr_value(AttrValue(std::vector<int64_t>{16384, -1})), "[16384, -1]");
  EXPECT_EQ(format_attr_value(AttrValue(std::vector<int64_t>{})), "[]");
  EXPECT_EQ(format_attr_value(AttrValue(true)), "True");
  EXPECT_EQ(format_attr_value(AttrValue(DType::bf16)), "bf16");
}

TEST(Printer, ViewPrintsItsSizeAfterTheTensorInput) {
  Graph g;
  NodeId x = g.add_placeholder("x", PlaceholderKind::kInput, {{4, 8, 16}, DType::bf16});
  NodeId view = *g.add(OpId::kView, {x}, {{"size", std::vector<int64_t>{32, 16}}});
  // 4 * 8 = 32 rows of 16.
  EXPECT_EQ(format_node(g, view), "%view = aten.view.default(%x, size=[32, 16])  # bf16[32, 16]");
}

TEST(Printer, PlaceholderNamesItsKindAndTarget) {
  Graph g;
  NodeId wq = g.add_placeholder("layers_0_attention_wq_weight", PlaceholderKind::kParam,
                                {{4096, 4096}, DType::f32}, "layers.0.attention.wq.weight");
  NodeId tokens = g.add_placeholder("tokens", PlaceholderKind::kInput, {{8, 2048}, DType::i64});
  EXPECT_EQ(format_node(g, wq),
            "%layers_0_attention_wq_weight = placeholder[param]"
            "(target=layers.0.attention.wq.weight)  # f32[4096, 4096]");
  EXPECT_EQ(format_node(g, tokens), "%tokens = placeholder[input]()  # i64[8, 2048]");
}

TEST(Printer, ScopeCommentCanBeTurnedOff) {
  Graph g = testing::linear_training_graph();
  NodeId mm = *g.find("mm");
  EXPECT_EQ(format_node(g, mm), "%mm = aten.mm.default(%x, %w)  # f32[4, 2]  @fc");
  EXPECT_EQ(format_node(g, mm, {.show_scope = false}), "%mm = aten.mm.default(%x, %w)  # f32[4, 2]");
}

TEST(Printer, ReturnLineTagsTheLossAndEachGradientWithItsParam) {
  Graph g = testing::linear_training_graph();
  NodeId x = *g.find("x");
  g.add_output({x, OutputKind::kGradient, *g.find("target")});
  EXPECT_EQ(format_outputs(g), "return (loss=%getitem, grad(%w)=%mm_1, grad(%target)=%x)");
}

TEST(Printer, GraphWithoutOutputsPrintsAnEmptyReturn) {
  Graph g;
  g.add_placeholder("x", PlaceholderKind::kInput, {{2}, DType::f32});
  EXPECT_EQ(print_graph(g), "%x = placeholder[input]()  # f32[2]\nreturn ()\n");
}

TEST(Printer, BrokenGraphPrintsMarkersInsteadOfCrashing) {
  Graph g;
  g.add_placeholder("x", PlaceholderKind::kInput, {{2}, DType::f32});
  Node bad;
  bad.name = "relu";
  bad.op = OpId::kRelu;
  bad.inputs = {7};
  bad.attrs.set("bogus", int64_t{1});
  bad.outputs = {{{2}, DType::f32}};
  NodeId id = *g.append(bad);
  g.add_output({id, OutputKind::kGradient, 42});
  EXPECT_EQ(print_graph(g),
            "%x = placeholder[input]()  # f32[2]\n"
            "%relu = aten.relu.default(%<invalid #7>, bogus=1)  # f32[2]\n"
            "return (grad(%<invalid #42>)=%relu)\n");
}

}  // namespace
}  // namespace autopar
