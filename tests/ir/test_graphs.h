// Hand-built graphs shared by the printer, JSON and verifier tests.
#pragma once

#include "ir/graph.h"

namespace autopar::testing {

// x @ w, a loss over it, and nothing else (no gradients): 4 nodes.
//   x: f32[4, 3] (input), w: f32[3, 2] (param)
//   mm = x @ w          f32[4, 2]
//   sum = sum(mm, [0, 1]) f32[]     (the loss)
inline Graph matmul_loss_graph() {
  Graph g;
  g.name = "matmul_loss";
  NodeId x = g.add_placeholder("x", PlaceholderKind::kInput, {{4, 3}, DType::f32}, "x");
  NodeId w = g.add_placeholder("w", PlaceholderKind::kParam, {{3, 2}, DType::f32}, "fc.weight");
  NodeId mm = *g.add(OpId::kMm, {x, w}, {}, "fc");
  NodeId sum = *g.add(OpId::kSumDimIntList, {mm}, {{"dim", std::vector<int64_t>{0, 1}}});
  g.add_output({sum, OutputKind::kLoss});
  return g;
}

// One linear layer trained with log-softmax + NLL loss: forward and backward.
//   x f32[4, 3] @ w f32[3, 2] -> logits f32[4, 2]; target i64[4]; tangent f32[] (d loss = 1)
//   grad w = t(x) f32[3, 4] @ d_logits f32[4, 2] = f32[3, 2]
inline Graph linear_training_graph() {
  Graph g;
  g.name = "linear";
  NodeId x = g.add_placeholder("x", PlaceholderKind::kInput, {{4, 3}, DType::f32}, "x");
  NodeId w = g.add_placeholder("w", PlaceholderKind::kParam, {{3, 2}, DType::f32}, "fc.weight");
  NodeId target = g.add_placeholder("target", PlaceholderKind::kInput, {{4}, DType::i64}, "target");
  NodeId tangent = g.add_placeholder("tangent", PlaceholderKind::kTangent, {{}, DType::f32});
  NodeId mm = *g.add(OpId::kMm, {x, w}, {}, "fc");
  NodeId lsm = *g.add(OpId::kLogSoftmax, {mm}, {{"dim", int64_t{1}}, {"half_to_float", false}});
  Attrs nll_attrs{{"reduction", int64_t{1}}, {"ignore_index", int64_t{-100}}};
  NodeId nll = *g.add(OpId::kNllLossForward, {lsm, target}, nll_attrs);
  NodeId loss = *g.add(OpId::kGetItem, {nll}, {{"index", int64_t{0}}});
  NodeId total_weight = *g.add(OpId::kGetItem, {nll}, {{"index", int64_t{1}}});
  NodeId d_lsm = *g.add(OpId::kNllLossBackward, {tangent, lsm, target, total_weight}, nll_attrs);
  NodeId d_mm = *g.add(OpId::kLogSoftmaxBackwardData, {d_lsm, lsm},
                       {{"dim", int64_t{1}}, {"input_dtype", DType::f32}});
  NodeId xt = *g.add(OpId::kT, {x});
  NodeId d_w = *g.add(OpId::kMm, {xt, d_mm}, {}, "fc");
  g.add_output({loss, OutputKind::kLoss});
  g.add_output({d_w, OutputKind::kGradient, w});
  g.add_gradient_link({mm, d_mm});
  g.add_gradient_link({lsm, d_lsm});
  return g;
}

}  // namespace autopar::testing
