// Kernels of the model zoo's ops (PyTorch import): each equals the direct
// ATen call on the same inputs, also on strided inputs; the kernels that
// rebuild arguments for a shard equal the slice of the full result.
#include <ATen/core/Tensor.h>
#include <ATen/ops/_adaptive_avg_pool2d.h>
#include <ATen/ops/_adaptive_avg_pool2d_backward.h>
#include <ATen/ops/allclose.h>
#include <ATen/ops/avg_pool2d.h>
#include <ATen/ops/avg_pool2d_backward.h>
#include <ATen/ops/baddbmm.h>
#include <ATen/ops/clamp.h>
#include <ATen/ops/constant_pad_nd.h>
#include <ATen/ops/div.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/gelu_backward.h>
#include <ATen/ops/hardsigmoid.h>
#include <ATen/ops/hardsigmoid_backward.h>
#include <ATen/ops/hardswish.h>
#include <ATen/ops/hardswish_backward.h>
#include <ATen/ops/masked_fill.h>
#include <ATen/ops/mean.h>
#include <ATen/ops/native_group_norm.h>
#include <ATen/ops/native_group_norm_backward.h>
#include <ATen/ops/nll_loss2d_backward.h>
#include <ATen/ops/nll_loss2d_forward.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/roll.h>
#include <ATen/ops/sigmoid.h>
#include <ATen/ops/sigmoid_backward.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/sub.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/tanh.h>
#include <ATen/ops/tanh_backward.h>
#include <ATen/ops/upsample_bilinear2d.h>
#include <ATen/ops/upsample_bilinear2d_backward.h>
#include <ATen/ops/upsample_nearest2d.h>
#include <ATen/ops/upsample_nearest2d_backward.h>
#include <ATen/ops/where.h>
#include <gtest/gtest.h>

#include "ir/graph.h"
#include "runtime/kernels.h"

namespace autopar {
namespace {

using V = std::vector<int64_t>;
using F = std::vector<double>;

TensorMeta meta_of(const at::Tensor& t) {
  return {Shape(t.sizes().begin(), t.sizes().end()), *from_scalar_type(t.scalar_type())};
}

// `t`'s values with other strides (its first and last dims swapped in
// memory), as a permute or transpose kernel hands them on.
at::Tensor strided(const at::Tensor& t) {
  if (t.dim() < 2) return t;
  return t.transpose(0, -1).contiguous().transpose(0, -1);
}

// The op's kernel on `inputs`, outputs inferred by the op table (a graph of
// placeholders holding the inputs' metadata). The kernel must give the same
// outputs on strided inputs.
std::vector<at::Tensor> run(OpId op, const std::vector<at::Tensor>& inputs, Attrs attrs = {}) {
  Graph g;
  std::vector<NodeId> ids;
  for (const at::Tensor& t : inputs) {
    ids.push_back(g.add_placeholder(g.fresh_name("x"), PlaceholderKind::kInput, meta_of(t)));
  }
  Expected<NodeId> id = g.add(op, ids, std::move(attrs));
  EXPECT_TRUE(id) << id.error().message;
  if (!id) return {};
  const Node& node = g.node(*id);
  Expected<std::vector<at::Tensor>> r = run_kernel(node, inputs, node.outputs);
  EXPECT_TRUE(r) << r.error().message;
  if (!r) return {};
  std::vector<at::Tensor> other;
  for (const at::Tensor& t : inputs) other.push_back(strided(t));
  Expected<std::vector<at::Tensor>> s = run_kernel(node, other, node.outputs);
  EXPECT_TRUE(s) << "strided inputs: " << s.error().message;
  for (size_t o = 0; s && o < r->size(); ++o) {
    bool same = (*r)[o].is_floating_point() ? at::allclose((*s)[o], (*r)[o], 1e-5, 1e-6)
                                            : (*s)[o].equal((*r)[o]);
    EXPECT_TRUE(same) << node_op_name(node) << " output " << o << " on strided inputs";
  }
  return *r;
}

// The kernel's only output equals `want`.
void expect_one(const std::vector<at::Tensor>& got, const at::Tensor& want, std::string_view what) {
  ASSERT_EQ(got.size(), 1u) << what;
  EXPECT_TRUE(got[0].sizes() == want.sizes() && at::allclose(got[0], want, 1e-5, 1e-6)) << what;
}

at::Tensor randn(V shape) { return at::randn(shape); }

TEST(ZooKernels, ActivationsAreAtensOwn) {
  at::Tensor x = randn({3, 5}).mul(4);  // reaches the flat parts of the hard ones
  at::Tensor g = randn({3, 5});
  expect_one(run(OpId::kSigmoid, {x}), at::sigmoid(x), "sigmoid");
  expect_one(run(OpId::kSigmoidBackward, {g, at::sigmoid(x)}), at::sigmoid_backward(g, at::sigmoid(x)),
             "sigmoid_backward");
  expect_one(run(OpId::kTanh, {x}), at::tanh(x), "tanh");
  expect_one(run(OpId::kTanhBackward, {g, at::tanh(x)}), at::tanh_backward(g, at::tanh(x)),
             "tanh_backward");
  expect_one(run(OpId::kHardswish, {x}), at::hardswish(x), "hardswish");
  expect_one(run(OpId::kHardswishBackward, {g, x}), at::hardswish_backward(g, x), "hardswish_backward");
  expect_one(run(OpId::kHardsigmoid, {x}), at::hardsigmoid(x), "hardsigmoid");
  expect_one(run(OpId::kHardsigmoidBackward, {g, x}), at::hardsigmoid_backward(g, x),
             "hardsigmoid_backward");
}

TEST(ZooKernels, GeluTakesItsTanhForm) {
  at::Tensor x = randn({3, 5});
  at::Tensor g = randn({3, 5});
  Attrs tanh{{"approximate", std::string("tanh")}};
  std::vector<at::Tensor> approx = run(OpId::kGelu, {x}, tanh);
  expect_one(approx, at::gelu(x, "tanh"), "gelu tanh");
  EXPECT_FALSE(at::allclose(approx[0], at::gelu(x), 1e-7, 1e-7)) << "the erf form differs";
  expect_one(run(OpId::kGeluBackward, {g, x}, tanh), at::gelu_backward(g, x, "tanh"),
             "gelu_backward tanh");
  expect_one(run(OpId::kGeluBackward, {g, x}), at::gelu_backward(g, x), "gelu_backward erf");
}

TEST(ZooKernels, PointwiseOpsAreAtensOwn) {
  at::Tensor x = randn({4, 6});
  at::Tensor row = randn({6}).abs().add(0.5);
  at::Tensor cond = randn({4, 1}).gt(0);
  expect_one(run(OpId::kDivTensor, {x, row}), at::div(x, row), "div.Tensor");
  expect_one(run(OpId::kSubTensor, {x, row}, {{"alpha", 2.0}}), at::sub(x, row, 2.0), "sub.Tensor");
  expect_one(run(OpId::kWhereSelf, {cond, x, row}), at::where(cond, x, row), "where.self");
  at::Tensor m = randn({6}).gt(0);
  expect_one(run(OpId::kMaskedFillScalar, {x, m}, {{"value", -3.0}}), at::masked_fill(x, m, -3.0),
             "masked_fill.Scalar");
  expect_one(run(OpId::kClamp, {x}, {{"min", -0.5}}), at::clamp(x, -0.5), "clamp min only");
  expect_one(run(OpId::kClamp, {x}, {{"min", -0.5}, {"max", 0.25}}), at::clamp(x, -0.5, 0.25),
             "clamp");
}

TEST(ZooKernels, FillsComparisonsAndFullReductionsAreAtensOwn) {
  at::Tensor x = randn({4, 6});
  expect_one(run(OpId::kZerosLike, {x}, {{"dtype", DType::bf16}}), x.new_zeros({4, 6}).to(at::kBFloat16),
             "zeros_like");
  expect_one(run(OpId::kOnesLike, {x}), x.new_ones({4, 6}), "ones_like");
  expect_one(run(OpId::kFillScalar, {x}, {{"value", 2.5}}), x.new_full({4, 6}, 2.5), "fill.Scalar");
  std::vector<at::Tensor> ne = run(OpId::kNeScalar, {x.round()}, {{"other", 0.0}});
  ASSERT_EQ(ne.size(), 1u);
  EXPECT_TRUE(ne[0].equal(x.round().ne(0.0)));
  std::vector<at::Tensor> eq = run(OpId::kEqScalar, {x.round()}, {{"other", 0.0}});
  ASSERT_EQ(eq.size(), 1u);
  EXPECT_TRUE(eq[0].equal(x.round().eq(0.0)));
  expect_one(run(OpId::kMean, {x}), at::mean(x), "mean.default");
  expect_one(run(OpId::kSum, {x}, {{"dtype", DType::f64}}), at::sum(x, at::kDouble), "sum.default");
}

TEST(ZooKernels, PaddingAndRollAreAtensOwn) {
  at::Tensor x = randn({2, 3, 4});
  expect_one(run(OpId::kConstantPadNd, {x}, {{"pad", V{1, 2, 0, 1}}, {"value", 0.5}}),
             at::constant_pad_nd(x, {1, 2, 0, 1}, 0.5), "constant_pad_nd");
  expect_one(run(OpId::kRoll, {x}, {{"shifts", V{1, -2}}, {"dims", V{0, 2}}}),
             at::roll(x, {1, -2}, {0, 2}), "roll");
  expect_one(run(OpId::kRoll, {x}, {{"shifts", V{5}}}), at::roll(x, {5}), "roll flattened");
}

TEST(ZooKernels, BaddbmmIsAtensOwn) {
  at::Tensor self = randn({4, 8});
  at::Tensor a = randn({2, 4, 6});
  at::Tensor b = randn({2, 6, 8});
  expect_one(run(OpId::kBaddbmm, {self, a, b}, {{"beta", 0.5}, {"alpha", 2.0}}),
             at::baddbmm(self, a, b, 0.5, 2.0), "baddbmm");
}

TEST(ZooKernels, PoolingAndUpsamplingAreAtensOwn) {
  at::Tensor x = randn({2, 3, 7, 7});
  Attrs pool{{"kernel_size", V{3, 3}}, {"stride", V{2, 2}}, {"padding", V{1, 1}},
             {"ceil_mode", true}, {"count_include_pad", false}};
  at::Tensor pooled = at::avg_pool2d(x, {3, 3}, {2, 2}, {1, 1}, true, false);
  expect_one(run(OpId::kAvgPool2d, {x}, pool), pooled, "avg_pool2d");
  at::Tensor g = randn(V(pooled.sizes().begin(), pooled.sizes().end()));
  expect_one(run(OpId::kAvgPool2dBackward, {g, x}, pool),
             at::avg_pool2d_backward(g, x, {3, 3}, {2, 2}, {1, 1}, true, false, c10::nullopt),
             "avg_pool2d_backward");
  expect_one(run(OpId::kAdaptiveAvgPool2d, {x}, {{"output_size", V{3, 2}}}),
             at::_adaptive_avg_pool2d(x, {3, 2}), "_adaptive_avg_pool2d");
  at::Tensor ga = randn({2, 3, 3, 2});
  expect_one(run(OpId::kAdaptiveAvgPool2dBackward, {ga, x}), at::_adaptive_avg_pool2d_backward(ga, x),
             "_adaptive_avg_pool2d_backward");
  std::vector<double> scale{2.0, 1.5};
  at::Tensor up = at::upsample_nearest2d(x, c10::nullopt, at::ArrayRef<double>(scale));
  expect_one(run(OpId::kUpsampleNearest2d, {x}, {{"scale_factors", F{2.0, 1.5}}}), up,
             "upsample_nearest2d");
  at::Tensor gu = randn({2, 3, 14, 10});
  expect_one(run(OpId::kUpsampleNearest2dBackward, {gu},
                 {{"input_size", V{2, 3, 7, 7}}, {"scale_factors", F{2.0, 1.5}}}),
             at::upsample_nearest2d_backward(gu, c10::nullopt, {2, 3, 7, 7}, at::ArrayRef<double>(scale)),
             "upsample_nearest2d_backward");
  expect_one(run(OpId::kUpsampleBilinear2d, {x}, {{"output_size", V{14, 10}}, {"align_corners", true}}),
             at::upsample_bilinear2d(x, at::IntArrayRef{14, 10}, true, c10::nullopt),
             "upsample_bilinear2d");
  expect_one(run(OpId::kUpsampleBilinear2dBackward, {gu},
                 {{"output_size", V{14, 10}}, {"input_size", V{2, 3, 7, 7}}, {"align_corners", true}}),
             at::upsample_bilinear2d_backward(gu, at::IntArrayRef{14, 10}, {2, 3, 7, 7}, true,
                                              c10::nullopt),
             "upsample_bilinear2d_backward");
}

// A channel shard of upsampling's backward: input_size names the full
// [2, 4, 3, 3]; this device holds channels 2..3, so its output is [2, 2, 3, 3].
TEST(ZooKernels, UpsamplingBackwardOnAChannelShardTakesItsSizeFromTheLocalOutput) {
  at::Tensor g = randn({2, 4, 6, 6});
  Node node;
  node.name = "up_bw";
  node.op = OpId::kUpsampleNearest2dBackward;
  node.inputs = {0};
  node.attrs = {{"input_size", V{2, 4, 3, 3}}, {"scale_factors", F{2.0, 2.0}}};
  std::vector<at::Tensor> in{g.slice(1, 2, 4)};
  TensorMeta out{{2, 2, 3, 3}, DType::f32};
  Expected<std::vector<at::Tensor>> r = run_kernel(node, in, {&out, 1});
  ASSERT_TRUE(r) << r.error().message;
  std::vector<double> scale{2.0, 2.0};
  at::Tensor full = at::upsample_nearest2d_backward(g, c10::nullopt, {2, 4, 3, 3}, at::ArrayRef<double>(scale));
  EXPECT_TRUE(at::allclose((*r)[0], full.slice(1, 2, 4)));
}

TEST(ZooKernels, GroupNormIsAtensOwn) {
  at::Tensor x = randn({2, 8, 3, 3});
  at::Tensor w = randn({8});
  at::Tensor b = randn({8});
  Attrs attrs{{"N", int64_t{2}}, {"C", int64_t{8}}, {"HxW", int64_t{9}}, {"group", int64_t{4}},
              {"eps", 1e-5}};
  std::vector<at::Tensor> got = run(OpId::kNativeGroupNorm, {x, w, b}, attrs);
  auto [out, mean, rstd] = at::native_group_norm(x, w, b, 2, 8, 9, 4, 1e-5);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_TRUE(at::allclose(got[0], out) && at::allclose(got[1], mean) && at::allclose(got[2], rstd));
  at::Tensor g = randn({2, 8, 3, 3});
  Attrs backward{{"N", int64_t{2}}, {"C", int64_t{8}}, {"HxW", int64_t{9}}, {"group", int64_t{4}},
                 {"output_mask", V{1, 1, 1}}};
  std::vector<at::Tensor> grads = run(OpId::kNativeGroupNormBackward, {g, x, mean, rstd, w}, backward);
  auto [gx, gw, gb] = at::native_group_norm_backward(g, x, mean, rstd, w, 2, 8, 9, 4, {true, true, true});
  ASSERT_EQ(grads.size(), 3u);
  EXPECT_TRUE(at::allclose(grads[0], gx, 1e-4, 1e-5) && at::allclose(grads[1], gw, 1e-4, 1e-5) &&
              at::allclose(grads[2], gb, 1e-4, 1e-5));
}

// Channels 4..7 of 8 in 4 groups of 2 are groups 2 and 3: the kernel calls
// aten with C = 4 and 2 groups, and gets the full result's slice.
TEST(ZooKernels, GroupNormOnAShardOfWholeGroupsNormalizesEachGroupAlone) {
  at::Tensor x = randn({2, 8, 3, 3});
  Node node;
  node.name = "gn";
  node.op = OpId::kNativeGroupNorm;
  node.inputs = {0};
  node.attrs = {{"N", int64_t{2}}, {"C", int64_t{8}}, {"HxW", int64_t{9}}, {"group", int64_t{4}},
                {"eps", 1e-5}};
  std::vector<at::Tensor> in{x.slice(1, 4, 8)};
  std::vector<TensorMeta> out{{{2, 4, 3, 3}, DType::f32}, {{2, 2}, DType::f32}, {{2, 2}, DType::f32}};
  Expected<std::vector<at::Tensor>> r = run_kernel(node, in, out);
  ASSERT_TRUE(r) << r.error().message;
  auto [full, mean, rstd] = at::native_group_norm(x, {}, {}, 2, 8, 9, 4, 1e-5);
  EXPECT_TRUE(at::allclose((*r)[0], full.slice(1, 4, 8), 1e-5, 1e-6));
  EXPECT_TRUE(at::allclose((*r)[1], mean.slice(1, 2, 4)));
}

TEST(ZooKernels, StackAndSqueezeAreAtensOwn) {
  at::Tensor a = randn({4, 6});
  at::Tensor b = randn({4, 6});
  expect_one(run(OpId::kStack, {a, b}, {{"dim", int64_t{1}}}), at::stack({a, b}, 1), "stack");
  at::Tensor x = randn({4, 1, 6, 1});
  expect_one(run(OpId::kSqueeze, {x}), x.squeeze(), "squeeze");
  expect_one(run(OpId::kSqueezeDim, {x}, {{"dim", int64_t{1}}}), x.squeeze(1), "squeeze.dim");
}

TEST(ZooKernels, NllLoss2dIsAtensOwn) {
  at::Tensor self = randn({2, 3, 4, 5});
  at::Tensor target = at::randint(3, {2, 4, 5}, at::kLong);
  at::Tensor w = randn({3}).abs();
  for (int64_t reduction : {0, 1, 2}) {
    Attrs attrs{{"reduction", reduction}, {"ignore_index", int64_t{-100}}};
    std::vector<at::Tensor> got = run(OpId::kNllLoss2dForward, {self, target, w}, attrs);
    auto [loss, total] = at::nll_loss2d_forward(self, target, w, reduction, -100);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_TRUE(at::allclose(got[0], loss) && at::allclose(got[1], total)) << reduction;
    at::Tensor g = reduction == 0 ? randn({2, 4, 5}) : randn({});
    expect_one(run(OpId::kNllLoss2dBackward, {g, self, target, w, total}, attrs),
               at::nll_loss2d_backward(g, self, target, w, reduction, -100, total),
               "nll_loss2d_backward");
  }
}

}  // namespace
}  // namespace autopar
