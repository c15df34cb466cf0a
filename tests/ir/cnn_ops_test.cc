// Shape rules and costs of the CNN ops (src/ir/ops/cnn.cc), with the output
// size formula floor((in + 2p - d(k-1) - 1) / s) + 1 worked by hand.
#include <gtest/gtest.h>

#include "ir/graph.h"
#include "ir/op_def.h"
#include "op_graph.h"

namespace autopar {
namespace {

using V = std::vector<int64_t>;

using Cnn = testing::OpGraph;

Attrs conv(V stride, V padding, V dilation = {1, 1}, int64_t groups = 1) {
  return {{"stride", stride}, {"padding", padding}, {"dilation", dilation}, {"groups", groups}};
}

TEST(CnnOps, ResnetStemConvHalvesSpatialDimsAndCountsTwoFlopsPerMac) {
  Cnn c;
  Expected<NodeId> y =
      c.g.add(OpId::kConvolution, {c.in({2, 3, 64, 64}), c.in({64, 3, 7, 7})}, conv({2, 2}, {3, 3}));
  // (64 + 2*3 - 1*(7-1) - 1) / 2 + 1 = 63 / 2 + 1 = 32
  EXPECT_EQ(c.out(y), "f32[2, 64, 32, 32]");
  // 2 * outputs (2*64*32*32 = 131072) * MACs per output (3*7*7 = 147)
  EXPECT_EQ(c.flops(*y), 2.0 * 131072 * 147);
}

TEST(CnnOps, DilatedConvWithoutPaddingShrinksByTheDilatedKernel) {
  Cnn c;
  Expected<NodeId> y =
      c.g.add(OpId::kConvolution, {c.in({1, 4, 10, 10}), c.in({8, 4, 3, 3}), c.in({8})},
              conv({1, 1}, {0, 0}, {2, 2}));
  // (10 + 0 - 2*(3-1) - 1) / 1 + 1 = 6; the bias adds one flop per output
  EXPECT_EQ(c.out(y), "f32[1, 8, 6, 6]");
  EXPECT_EQ(c.flops(*y), 2.0 * (8 * 36) * (4 * 9) + 8 * 36);
}

TEST(CnnOps, DepthwiseConvHasOneInputChannelPerGroup) {
  Cnn c;
  Expected<NodeId> y = c.g.add(OpId::kConvolution, {c.in({2, 32, 16, 16}), c.in({32, 1, 3, 3})},
                               conv({2, 2}, {1, 1}, {1, 1}, 32));
  // (16 + 2 - 2 - 1) / 2 + 1 = 15 / 2 + 1 = 8; MACs per output: 1 * 3 * 3
  EXPECT_EQ(c.out(y), "f32[2, 32, 8, 8]");
  EXPECT_EQ(c.flops(*y), 2.0 * (2 * 32 * 8 * 8) * 9);
}

TEST(CnnOps, ConvRejectsWeightsThatDoNotFitTheGroups) {
  Cnn c;
  Expected<NodeId> y = c.g.add(OpId::kConvolution, {c.in({2, 32, 16, 16}), c.in({32, 2, 3, 3})},
                               conv({1, 1}, {1, 1}, {1, 1}, 32));
  ASSERT_FALSE(y);
  EXPECT_NE(y.error().message.find("do not fit groups=32"), std::string::npos) << y.error().message;
}

TEST(CnnOps, ConvBackwardGivesMaskedOutGradientsAsEmptyTensors) {
  Cnn c;
  Attrs attrs = conv({2, 2}, {3, 3});
  attrs.set("output_mask", V{0, 1, 0});
  Expected<NodeId> g = c.g.add(OpId::kConvolutionBackward,
                               {c.in({2, 64, 32, 32}), c.in({2, 3, 64, 64}), c.in({64, 3, 7, 7})},
                               attrs);
  EXPECT_EQ(c.out(g), "f32[0] f32[64, 3, 7, 7] f32[0]");
  // only the weight gradient: one forward-sized conv, 2 * 131072 * 147
  EXPECT_EQ(c.flops(*g), 2.0 * 131072 * 147);
}

TEST(CnnOps, ConvBackwardRejectsAGradOfTheWrongShape) {
  Cnn c;
  Expected<NodeId> g = c.g.add(OpId::kConvolutionBackward,
                               {c.in({2, 64, 31, 32}), c.in({2, 3, 64, 64}), c.in({64, 3, 7, 7})},
                               conv({2, 2}, {3, 3}));
  ASSERT_FALSE(g);
  EXPECT_NE(g.error().message.find("must be the forward output [2, 64, 32, 32]"),
            std::string::npos)
      << g.error().message;
}

TEST(CnnOps, ResnetMaxPoolHalvesSpatialDimsAndReturnsI64Indices) {
  Cnn c;
  Expected<NodeId> p = c.g.add(OpId::kMaxPool2dWithIndices, {c.in({2, 64, 32, 32})},
                               {{"kernel_size", V{3, 3}}, {"stride", V{2, 2}}, {"padding", V{1, 1}}});
  // (32 + 2 - 2 - 1) / 2 + 1 = 31 / 2 + 1 = 16; 9 comparisons per output
  EXPECT_EQ(c.out(p), "f32[2, 64, 16, 16] i64[2, 64, 16, 16]");
  EXPECT_EQ(c.flops(*p), 9.0 * (2 * 64 * 16 * 16));
}

TEST(CnnOps, MaxPoolCeilModeKeepsThePartialLastWindow) {
  Cnn c;
  Attrs floor{{"kernel_size", V{2}}};  // one int for both dims; stride defaults to the kernel
  Attrs ceil{{"kernel_size", V{2}}, {"ceil_mode", true}};
  // span = 7 - 1*(2-1) - 1 = 5: floor 5/2 + 1 = 3, ceil (5+1)/2 + 1 = 4 (window 4 starts at 6 < 7)
  EXPECT_EQ(c.out(c.g.add(OpId::kMaxPool2dWithIndices, {c.in({1, 1, 7, 7})}, floor)),
            "f32[1, 1, 3, 3] i64[1, 1, 3, 3]");
  EXPECT_EQ(c.out(c.g.add(OpId::kMaxPool2dWithIndices, {c.in({1, 1, 7, 7})}, ceil)),
            "f32[1, 1, 4, 4] i64[1, 1, 4, 4]");
}

TEST(CnnOps, MaxPoolBackwardGivesTheInputShape) {
  Cnn c;
  Expected<NodeId> g = c.g.add(
      OpId::kMaxPool2dWithIndicesBackward,
      {c.in({2, 4, 3, 3}), c.in({2, 4, 6, 6}), c.in({2, 4, 3, 3}, DType::i64)},
      {{"kernel_size", V{3, 3}}, {"stride", V{2, 2}}, {"padding", V{1, 1}}});
  EXPECT_EQ(c.out(g), "f32[2, 4, 6, 6]");
}

Attrs bn(bool training) { return {{"training", training}, {"momentum", 0.1}, {"eps", 1e-5}}; }

TEST(CnnOps, TrainingBatchNormSavesPerChannelStatisticsAndEvalSavesNone) {
  Cnn c;
  NodeId x = c.in({2, 16, 8, 8});
  std::vector<NodeId> in{x, c.in({16}), c.in({16}), c.in({16}), c.in({16})};
  EXPECT_EQ(c.out(c.g.add(OpId::kNativeBatchNorm, in, bn(true))),
            "f32[2, 16, 8, 8] f32[16] f32[16]");
  EXPECT_EQ(c.out(c.g.add(OpId::kNativeBatchNorm, in, bn(false))),
            "f32[2, 16, 8, 8] f32[0] f32[0]");
  Expected<NodeId> one_stat = c.g.add(OpId::kNativeBatchNorm, {x, in[1], in[2], in[3]}, bn(true));
  ASSERT_FALSE(one_stat);
  EXPECT_NE(one_stat.error().message.find("3 or 5 inputs"), std::string::npos);
}

TEST(CnnOps, BatchNormRejectsAStatisticOfTheWrongChannelCount) {
  Cnn c;
  Expected<NodeId> y =
      c.g.add(OpId::kNativeBatchNorm, {c.in({2, 16, 8, 8}), c.in({16}), c.in({15})}, bn(true));
  ASSERT_FALSE(y);
  EXPECT_NE(y.error().message.find("must be [16]"), std::string::npos) << y.error().message;
}

TEST(CnnOps, BatchNormBackwardGivesInputWeightAndBiasGradients) {
  Cnn c;
  std::vector<NodeId> in{c.in({2, 16, 8, 8}), c.in({2, 16, 8, 8})};
  for (int i = 0; i < 5; ++i) in.push_back(c.in({16}));
  Expected<NodeId> g = c.g.add(OpId::kNativeBatchNormBackward, in,
                               {{"train", true}, {"eps", 1e-5}, {"output_mask", V{1, 1, 1}}});
  EXPECT_EQ(c.out(g), "f32[2, 16, 8, 8] f32[16] f32[16]");
  EXPECT_EQ(c.flops(*g), 8.0 * (2 * 16 * 8 * 8));
}

TEST(CnnOps, AtenNamesAreTheOnesMakeFxPrints) {
  for (std::string_view name :
       {"aten.convolution.default", "aten.convolution_backward.default", "aten.hardtanh.default",
        "aten.hardtanh_backward.default", "aten.max_pool2d_with_indices.default",
        "aten.max_pool2d_with_indices_backward.default", "aten.native_batch_norm.default",
        "aten.native_batch_norm_backward.default"}) {
    EXPECT_TRUE(find_op(name).has_value()) << name;
  }
}

}  // namespace
}  // namespace autopar
