// Shape rules and costs of the model zoo's ops (PyTorch import), one case
// and one error per family, with the arithmetic worked by hand.
#include <gtest/gtest.h>

#include "ir/graph.h"
#include "ir/op_def.h"
#include "op_graph.h"

namespace autopar {
namespace {

using V = std::vector<int64_t>;
using F = std::vector<double>;

using Zoo = testing::OpGraph;

void expect_error(const Expected<NodeId>& id, std::string_view part) {
  ASSERT_FALSE(id) << "expected an error containing: " << part;
  EXPECT_NE(id.error().message.find(part), std::string::npos) << id.error().message;
}

TEST(ZooOps, ActivationsKeepTheShapeAndCountTheirElementwiseWork) {
  Zoo z;
  NodeId x = z.in({2, 8});
  Expected<NodeId> s = z.g.add(OpId::kSigmoid, {x});
  EXPECT_EQ(z.out(s), "f32[2, 8]");
  EXPECT_EQ(z.flops(*s), 4.0 * 16);        // neg, exp, add, div per element
  EXPECT_EQ(z.bytes(*s), 2.0 * 16 * 4);    // read 16 floats, write 16
  Expected<NodeId> g = z.g.add(OpId::kTanhBackward, {x, x});
  EXPECT_EQ(z.out(g), "f32[2, 8]");
  EXPECT_EQ(z.flops(*g), 3.0 * 16);
}

TEST(ZooOps, ActivationBackwardRejectsAGradOfAnotherShapeAndGeluAnUnknownForm) {
  Zoo z;
  expect_error(z.g.add(OpId::kHardswishBackward, {z.in({2, 8}), z.in({2, 4})}),
               "must have one shape and dtype");
  expect_error(z.g.add(OpId::kGelu, {z.in({2, 8})}, {{"approximate", std::string("fast")}}),
               "approximate must be 'none' or 'tanh'");
  EXPECT_EQ(z.out(z.g.add(OpId::kGelu, {z.in({2, 8})}, {{"approximate", std::string("tanh")}})),
            "f32[2, 8]");
}

TEST(ZooOps, PointwiseOpsBroadcastLikeAddTensor) {
  Zoo z;
  EXPECT_EQ(z.out(z.g.add(OpId::kDivTensor, {z.in({4, 6}), z.in({6})})), "f32[4, 6]");
  EXPECT_EQ(z.out(z.g.add(OpId::kSubTensor, {z.in({4, 1}), z.in({6})}, {{"alpha", 2.0}})),
            "f32[4, 6]");
  // condition [4, 1], self [1, 6], other [6] -> [4, 6]
  Expected<NodeId> w =
      z.g.add(OpId::kWhereSelf, {z.in({4, 1}, DType::boolean), z.in({1, 6}), z.in({6})});
  EXPECT_EQ(z.out(w), "f32[4, 6]");
  EXPECT_EQ(z.flops(*w), 24.0);
  EXPECT_EQ(z.out(z.g.add(OpId::kMaskedFillScalar, {z.in({4, 6}), z.in({6}, DType::boolean)},
                          {{"value", 0.0}})),
            "f32[4, 6]");
  EXPECT_EQ(z.out(z.g.add(OpId::kClamp, {z.in({4, 6})}, {{"max", 6.0}})), "f32[4, 6]");
}

TEST(ZooOps, PointwiseOpsRejectBadMasksAndAClampWithoutBounds) {
  Zoo z;
  expect_error(z.g.add(OpId::kMaskedFillScalar, {z.in({4, 6}), z.in({4, 6})}, {{"value", 0.0}}),
               "mask must be bool");
  expect_error(z.g.add(OpId::kMaskedFillScalar,
                       {z.in({4, 6}), z.in({2, 4, 6}, DType::boolean)}, {{"value", 0.0}}),
               "does not broadcast to");
  expect_error(z.g.add(OpId::kWhereSelf, {z.in({4, 6}), z.in({4, 6}), z.in({4, 6})}),
               "condition must be bool");
  expect_error(z.g.add(OpId::kClamp, {z.in({4, 6})}), "needs min or max");
}

TEST(ZooOps, BaddbmmIsABatchedAddmm) {
  Zoo z;
  Expected<NodeId> y = z.g.add(OpId::kBaddbmm, {z.in({4, 8}), z.in({2, 4, 6}), z.in({2, 6, 8})});
  EXPECT_EQ(z.out(y), "f32[2, 4, 8]");
  // 2 * b m k n = 2 * 2*4*6*8, plus one add per output (64)
  EXPECT_EQ(z.flops(*y), 2.0 * 2 * 4 * 6 * 8 + 64);
  expect_error(z.g.add(OpId::kBaddbmm, {z.in({3, 8}), z.in({2, 4, 6}), z.in({2, 6, 8})}),
               "does not broadcast to");
}

TEST(ZooOps, AvgPoolCountsItsWindowsAndAdaptivePoolItsOverlappingOnes) {
  Zoo z;
  Expected<NodeId> p = z.g.add(OpId::kAvgPool2d, {z.in({2, 4, 6, 6})},
                               {{"kernel_size", V{3, 3}}, {"stride", V{2, 2}}, {"padding", V{1, 1}}});
  // (6 + 2 - 2 - 1) / 2 + 1 = 3; 9 adds and one divide per output (2*4*3*3 = 72)
  EXPECT_EQ(z.out(p), "f32[2, 4, 3, 3]");
  EXPECT_EQ(z.flops(*p), 10.0 * 72);
  Expected<NodeId> a = z.g.add(OpId::kAdaptiveAvgPool2d, {z.in({2, 4, 6, 5})},
                               {{"output_size", V{4, 1}}});
  // rows 6 -> 4: windows [0,2) [1,3) [3,5) [4,6): 8 rows; cols 5 -> 1: 5.
  // 8 planes * 8 * 5 adds + 8 * 4 divides
  EXPECT_EQ(z.out(a), "f32[2, 4, 4, 1]");
  EXPECT_EQ(z.flops(*a), 8.0 * 8 * 5 + 32);
  Expected<NodeId> b = z.g.add(OpId::kAdaptiveAvgPool2dBackward, {z.in({2, 4, 4, 1}), z.in({2, 4, 6, 5})});
  EXPECT_EQ(z.out(b), "f32[2, 4, 6, 5]");
  EXPECT_EQ(z.flops(*b), z.flops(*a));
}

TEST(ZooOps, UpsamplingTakesOutputSizeOrTruncatedScaleFactors) {
  Zoo z;
  // 3 * 2.5 = 7.5 -> 7 (truncated, as aten); 5 * 2 = 10
  EXPECT_EQ(z.out(z.g.add(OpId::kUpsampleNearest2d, {z.in({1, 2, 3, 5})},
                          {{"scale_factors", F{2.5, 2.0}}})),
            "f32[1, 2, 7, 10]");
  Expected<NodeId> bl = z.g.add(OpId::kUpsampleBilinear2d, {z.in({1, 2, 3, 5})},
                                {{"output_size", V{6, 10}}, {"align_corners", true}});
  EXPECT_EQ(z.out(bl), "f32[1, 2, 6, 10]");
  EXPECT_EQ(z.flops(*bl), 8.0 * 120);
  EXPECT_EQ(z.out(z.g.add(OpId::kUpsampleNearest2dBackward, {z.in({1, 2, 6, 10})},
                          {{"output_size", V{6, 10}}, {"input_size", V{1, 2, 3, 5}}})),
            "f32[1, 2, 3, 5]");
}

TEST(ZooOps, PoolingRejectsWideningPaddingAndUpsamplingTwoSizes) {
  Zoo z;
  expect_error(z.g.add(OpId::kAvgPool2d, {z.in({2, 4, 6, 6})},
                       {{"kernel_size", V{2, 2}}, {"padding", V{2, 2}}}),
               "padding at most half the kernel");
  expect_error(z.g.add(OpId::kUpsampleNearest2d, {z.in({1, 2, 3, 5})},
                       {{"output_size", V{6, 10}}, {"scale_factors", F{2.0, 2.0}}}),
               "exactly one of output_size and scale_factors");
  expect_error(z.g.add(OpId::kUpsampleBilinear2dBackward, {z.in({1, 2, 6, 9})},
                       {{"output_size", V{6, 10}}, {"input_size", V{1, 2, 3, 5}},
                        {"align_corners", false}}),
               "must be the forward output [1, 2, 6, 10]");
}

Attrs groups(int64_t n, int64_t c, int64_t hxw, int64_t group) {
  return {{"N", n}, {"C", c}, {"HxW", hxw}, {"group", group}, {"eps", 1e-5}};
}

TEST(ZooOps, GroupNormSavesPerSampleGroupStatistics) {
  Zoo z;
  NodeId x = z.in({2, 8, 4, 4});
  Expected<NodeId> y = z.g.add(OpId::kNativeGroupNorm, {x, z.in({8}), z.in({8})}, groups(2, 8, 16, 4));
  EXPECT_EQ(z.out(y), "f32[2, 8, 4, 4] f32[2, 4] f32[2, 4]");
  EXPECT_EQ(z.flops(*y), 8.0 * 256);
  Attrs backward{{"N", int64_t{2}}, {"C", int64_t{8}}, {"HxW", int64_t{16}}, {"group", int64_t{4}},
                 {"output_mask", V{1, 0, 0}}};
  NodeId stat = z.in({2, 4});
  EXPECT_EQ(z.out(z.g.add(OpId::kNativeGroupNormBackward, {x, x, stat, stat}, backward)),
            "f32[2, 8, 4, 4] f32[0] f32[0]");
}

TEST(ZooOps, GroupNormRejectsSizesThatDisagreeAndGroupsThatDoNotDivide) {
  Zoo z;
  NodeId x = z.in({2, 8, 4, 4});
  expect_error(z.g.add(OpId::kNativeGroupNorm, {x}, groups(2, 8, 15, 4)), "do not describe the input");
  expect_error(z.g.add(OpId::kNativeGroupNorm, {x}, groups(2, 8, 16, 3)), "group=3 must divide C=8");
  NodeId stat = z.in({2, 4});
  Attrs backward{{"N", int64_t{2}}, {"C", int64_t{8}}, {"HxW", int64_t{16}}, {"group", int64_t{4}},
                 {"output_mask", V{1, 1, 1}}};
  expect_error(z.g.add(OpId::kNativeGroupNormBackward, {x, x, stat, stat}, backward),
               "without weight gives no weight or bias gradients");
}

TEST(ZooOps, StackAddsADimAndSqueezeDropsSizeOneDims) {
  Zoo z;
  NodeId x = z.in({4, 6});
  EXPECT_EQ(z.out(z.g.add(OpId::kStack, {x, x, x}, {{"dim", int64_t{-1}}})), "f32[4, 6, 3]");
  EXPECT_EQ(z.out(z.g.add(OpId::kSqueeze, {z.in({1, 4, 1, 6})})), "f32[4, 6]");
  EXPECT_EQ(z.out(z.g.add(OpId::kSqueezeDim, {z.in({4, 1, 6})}, {{"dim", int64_t{1}}})), "f32[4, 6]");
  // squeeze.dim of a dim that is not 1 changes nothing
  EXPECT_EQ(z.out(z.g.add(OpId::kSqueezeDim, {x}, {{"dim", int64_t{0}}})), "f32[4, 6]");
  expect_error(z.g.add(OpId::kStack, {x, z.in({4, 5})}), "differs from input 0");
}

TEST(ZooOps, NllLoss2dReducesOverPixelsUnlessReductionIsNone) {
  Zoo z;
  NodeId self = z.in({2, 3, 4, 5});
  NodeId target = z.in({2, 4, 5}, DType::i64);
  Attrs mean{{"reduction", int64_t{1}}, {"ignore_index", int64_t{-100}}};
  Attrs none{{"reduction", int64_t{0}}, {"ignore_index", int64_t{-100}}};
  Expected<NodeId> l = z.g.add(OpId::kNllLoss2dForward, {self, target, z.in({3})}, mean);
  EXPECT_EQ(z.out(l), "f32[] f32[]");
  EXPECT_EQ(z.flops(*l), 2.0 * 40);  // a pick and a weight multiply per pixel
  EXPECT_EQ(z.out(z.g.add(OpId::kNllLoss2dForward, {self, target}, none)), "f32[2, 4, 5] f32[]");
  EXPECT_EQ(z.out(z.g.add(OpId::kNllLoss2dBackward, {z.in({}), self, target, z.in({})}, mean)),
            "f32[2, 3, 4, 5]");
  expect_error(z.g.add(OpId::kNllLoss2dForward, {self, z.in({2, 5, 4}, DType::i64)}, mean),
               "target must be i64[2, 4, 5]");
}

TEST(ZooOps, FillOpsWriteOnlyTheirOutputAndComparisonsGiveBool) {
  Zoo z;
  NodeId x = z.in({4, 6});
  Expected<NodeId> zeros = z.g.add(OpId::kZerosLike, {x}, {{"dtype", DType::bf16}});
  EXPECT_EQ(z.out(zeros), "bf16[4, 6]");
  EXPECT_EQ(z.bytes(*zeros), 24.0 * 2);  // writes 24 bf16, reads nothing
  Expected<NodeId> fill = z.g.add(OpId::kFillScalar, {x}, {{"value", 1.5}});
  EXPECT_EQ(z.bytes(*fill), 24.0 * 4);
  EXPECT_EQ(z.out(z.g.add(OpId::kNeScalar, {x}, {{"other", 0.0}})), "bool[4, 6]");
  EXPECT_EQ(z.out(z.g.add(OpId::kEqScalar, {z.in({4}, DType::i64)}, {{"other", int64_t{3}}})), "bool[4]");
}

TEST(ZooOps, FullReductionsGiveAScalarAndSumPromotesIntegers) {
  Zoo z;
  Expected<NodeId> m = z.g.add(OpId::kMean, {z.in({4, 6})});
  EXPECT_EQ(z.out(m), "f32[]");
  EXPECT_EQ(z.flops(*m), 24.0);
  EXPECT_EQ(z.out(z.g.add(OpId::kSum, {z.in({4}, DType::boolean)})), "i64[]");
  EXPECT_EQ(z.out(z.g.add(OpId::kSum, {z.in({4})}, {{"dtype", DType::f64}})), "f64[]");
  expect_error(z.g.add(OpId::kSum, {z.in({4})}, {{"dim", V{0}}}), "has no attribute 'dim'");
}

TEST(ZooOps, ConstantPadNdPadsFromTheLastDimAndRollKeepsTheShape) {
  Zoo z;
  // pad (1, 2) on the last dim, (0, 3) on the one before: [2, 3, 4] -> [2, 6, 7]
  Expected<NodeId> p = z.g.add(OpId::kConstantPadNd, {z.in({2, 3, 4})}, {{"pad", V{1, 2, 0, 3}}});
  EXPECT_EQ(z.out(p), "f32[2, 6, 7]");
  EXPECT_EQ(z.bytes(*p), (24.0 + 84.0) * 4);
  // negative pads crop: 4 - 1 - 1 = 2
  EXPECT_EQ(z.out(z.g.add(OpId::kConstantPadNd, {z.in({2, 4})}, {{"pad", V{-1, -1}}})), "f32[2, 2]");
  expect_error(z.g.add(OpId::kConstantPadNd, {z.in({2, 4})}, {{"pad", V{1}}}), "(left, right) pairs");
  EXPECT_EQ(z.out(z.g.add(OpId::kRoll, {z.in({2, 4})}, {{"shifts", V{1, -1}}, {"dims", V{0, 1}}})),
            "f32[2, 4]");
  expect_error(z.g.add(OpId::kRoll, {z.in({2, 4})}, {{"shifts", V{1, 2}}}), "one value per dim");
}

}  // namespace
}  // namespace autopar
