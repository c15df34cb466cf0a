// Planning a tiny CNN training step built from the ops of imported PyTorch
// graphs: conv -> batch norm -> relu -> max pool -> mean -> linear, with the
// backward ops PyTorch's make_fx traces for it.
#include <gtest/gtest.h>

#include "plan_fixtures.h"
#include "planner/baselines.h"

namespace autopar {
namespace {

using V = std::vector<int64_t>;

struct Net {
  Graph g;
  std::string error;
  NodeId ph(const char* name, PlaceholderKind kind, Shape shape, DType dtype = DType::f32) {
    return g.add_placeholder(name, kind, {std::move(shape), dtype});
  }
  NodeId op(OpId op, std::vector<NodeId> in, Attrs attrs = {}) {
    Expected<NodeId> id = g.add(op, std::move(in), std::move(attrs));
    if (!id) {
      error += id.error().message + "\n";
      return 0;
    }
    return *id;
  }
  NodeId item(NodeId n, int64_t i) { return op(OpId::kGetItem, {n}, {{"index", i}}); }
};

// Batch 8, 3 -> 8 channels, 8x8 images, 4 classes.
Graph tiny_cnn(std::string& error) {
  Net n;
  NodeId x = n.ph("x", PlaceholderKind::kInput, {8, 3, 8, 8});
  NodeId target = n.ph("target", PlaceholderKind::kInput, {8}, DType::i64);
  NodeId w = n.ph("conv_weight", PlaceholderKind::kParam, {8, 3, 3, 3});
  NodeId bn_w = n.ph("bn_weight", PlaceholderKind::kParam, {8});
  NodeId bn_b = n.ph("bn_bias", PlaceholderKind::kParam, {8});
  NodeId fc_w = n.ph("fc_weight", PlaceholderKind::kParam, {4, 8});
  NodeId fc_b = n.ph("fc_bias", PlaceholderKind::kParam, {4});
  NodeId tangent = n.ph("tangent", PlaceholderKind::kTangent, {});
  Attrs conv{{"stride", V{1, 1}}, {"padding", V{1, 1}}, {"dilation", V{1, 1}}, {"groups", int64_t{1}}};
  Attrs pool{{"kernel_size", V{2, 2}}, {"stride", V{2, 2}}};
  // forward
  NodeId c = n.op(OpId::kConvolution, {x, w}, conv);
  NodeId bn = n.op(OpId::kNativeBatchNorm, {c, bn_w, bn_b},
                   {{"training", true}, {"momentum", 0.1}, {"eps", 1e-5}});
  NodeId y = n.item(bn, 0), mean = n.item(bn, 1), invstd = n.item(bn, 2);
  NodeId r = n.op(OpId::kRelu, {y});
  NodeId mp = n.op(OpId::kMaxPool2dWithIndices, {r}, pool);
  NodeId p = n.item(mp, 0), idx = n.item(mp, 1);
  NodeId gap = n.op(OpId::kMeanDim, {p}, {{"dim", V{-1, -2}}, {"keepdim", true}});
  NodeId feat = n.op(OpId::kView, {gap}, {{"size", V{8, 8}}});
  NodeId logits = n.op(OpId::kAddmm, {fc_b, feat, n.op(OpId::kT, {fc_w})});
  NodeId ls = n.op(OpId::kLogSoftmax, {logits}, {{"dim", int64_t{1}}});
  Attrs nll{{"reduction", int64_t{1}}, {"ignore_index", int64_t{-100}}};
  NodeId loss_pair = n.op(OpId::kNllLossForward, {ls, target}, nll);
  NodeId loss = n.item(loss_pair, 0), total = n.item(loss_pair, 1);
  // backward
  NodeId g_ls = n.op(OpId::kNllLossBackward, {tangent, ls, target, total}, nll);
  NodeId g_logits = n.op(OpId::kLogSoftmaxBackwardData, {g_ls, ls},
                         {{"dim", int64_t{1}}, {"input_dtype", DType::f32}});
  NodeId g_fc_w = n.op(OpId::kMm, {n.op(OpId::kT, {g_logits}), feat});
  NodeId g_fc_b = n.op(OpId::kSumDimIntList, {g_logits}, {{"dim", V{0}}});
  NodeId g_feat = n.op(OpId::kMm, {g_logits, fc_w});
  NodeId g_gap = n.op(OpId::kView, {g_feat}, {{"size", V{8, 8, 1, 1}}});
  NodeId g_p = n.op(OpId::kDivScalar, {n.op(OpId::kExpand, {g_gap}, {{"size", V{8, 8, 4, 4}}})},
                    {{"other", 16.0}});
  NodeId g_r = n.op(OpId::kMaxPool2dWithIndicesBackward, {g_p, r, idx}, pool);
  NodeId g_y = n.op(OpId::kThresholdBackward, {g_r, r}, {{"threshold", 0.0}});
  NodeId g_bn = n.op(OpId::kNativeBatchNormBackward, {g_y, c, bn_w, mean, invstd},
                     {{"train", true}, {"eps", 1e-5}, {"output_mask", V{1, 1, 1}}});
  Attrs conv_bw = conv;
  conv_bw.set("output_mask", V{0, 1, 0});
  NodeId g_c = n.op(OpId::kConvolutionBackward, {n.item(g_bn, 0), x, w}, conv_bw);
  n.g.add_output({loss, OutputKind::kLoss, kNoNode});
  for (auto [grad, param] : {std::pair{n.item(g_c, 1), w}, {n.item(g_bn, 1), bn_w},
                             {n.item(g_bn, 2), bn_b}, {g_fc_w, fc_w}, {g_fc_b, fc_b}}) {
    n.g.add_output({grad, OutputKind::kGradient, param});
  }
  error = n.error;
  return std::move(n.g);
}

// No strategy may shard a training batch norm's batch dim (its statistics
// would be per shard).
void expect_no_batch_sharded_batch_norm(const Graph& g, const Plan& p) {
  for (NodeId id = 0; id < g.size(); ++id) {
    OpId op = g.node(id).op;
    if (op != OpId::kNativeBatchNorm && op != OpId::kNativeBatchNormBackward) continue;
    int data = op == OpId::kNativeBatchNorm ? 0 : 1;
    const Sharding& s = p.strategies.nodes[static_cast<size_t>(id)].input(
        p.choice[static_cast<size_t>(id)], data);
    for (MeshDim m = 0; m < s.ndim; ++m) {
      EXPECT_FALSE(s[m].is_shard() && s[m].dim() == 0) << g.node(id).name << " " << to_string(s);
    }
  }
}

TEST(CnnPlan, TinyConvNetPlansOn8And2x4MeshesNoWorseThanDdp) {
  std::string error;
  Graph g = tiny_cnn(error);
  ASSERT_EQ(error, "");
  for (std::vector<int64_t> mesh : {std::vector<int64_t>{8}, std::vector<int64_t>{2, 4}}) {
    Plan solved = testing::plan_or_die(g, testing::options(mesh));
    ASSERT_EQ(solved.choice.size(), static_cast<size_t>(g.size()));
    EXPECT_TRUE(solved.summary.fits);
    expect_no_batch_sharded_batch_norm(g, solved);
    // DDP pins the batch-sharded input and replicated params; the solver may
    // pick it, so it is never better than the solved plan.
    PlanOptions o = testing::options(mesh);
    Expected<std::vector<PinSpec>> pins = baseline_pins("ddp", g, solved.mesh);
    ASSERT_TRUE(pins.ok()) << pins.error().message;
    o.pins = *pins;
    Plan ddp = testing::plan_or_die(g, o);
    expect_no_batch_sharded_batch_norm(g, ddp);
    EXPECT_LE(solved.summary.step_time_s, ddp.summary.step_time_s * (1 + 1e-9));
  }
}

}  // namespace
}  // namespace autopar
