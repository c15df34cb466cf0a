// Reductions, embedding, log-softmax, NLL loss and fused attention: each
// differentiates through its aten backward op where aten has one.
#include "autodiff/grad_rules.h"

namespace autopar::grad {
namespace {

struct ReducedDims {
  Shape keepdim_shape;  // the input shape with reduced dims set to 1
  int64_t count = 1;    // elements reduced into each output element
};

ReducedDims reduced_dims(const TensorMeta& x, const Attrs& attrs) {
  ReducedDims out{x.shape, 1};
  const std::vector<int64_t>& dims = attrs.get_ints("dim");
  for (int64_t d = 0; d < x.rank(); ++d) {
    bool reduced = dims.empty();
    for (int64_t dim : dims) reduced = reduced || normalize_dim(dim, x.rank()) == d;
    if (!reduced) continue;
    out.count *= x.shape[static_cast<size_t>(d)];
    out.keepdim_shape[static_cast<size_t>(d)] = 1;
  }
  return out;
}

// Broadcasts a reduction's gradient back over the reduced dims.
NodeId expand_back(GradContext& ctx, const ReducedDims& reduced) {
  GraphEmitter& e = ctx.emit;
  NodeId g = ctx.grad();
  if (e.meta(g).shape != reduced.keepdim_shape) g = e.view(g, reduced.keepdim_shape);
  return e.add(OpId::kExpand, {g}, {{"size", ctx.in(0).shape}});
}

}  // namespace

std::vector<NodeId> sum_dim(GradContext& ctx) {
  return {expand_back(ctx, reduced_dims(ctx.in(0), ctx.fwd().attrs))};
}

std::vector<NodeId> mean_dim(GradContext& ctx) {
  ReducedDims reduced = reduced_dims(ctx.in(0), ctx.fwd().attrs);
  NodeId expanded = expand_back(ctx, reduced);
  return {ctx.emit.add(OpId::kDivScalar, {expanded}, {{"other", reduced.count}})};
}

// embedding(weight, indices): indices get no gradient.
std::vector<NodeId> embedding(GradContext& ctx) {
  std::vector<NodeId> out(2, kNoNode);
  if (!ctx.want(0)) return out;
  const Attrs& attrs = ctx.fwd().attrs;
  int64_t padding_idx = attrs.has("padding_idx") ? attrs.get_int("padding_idx") : -1;
  out[0] = ctx.emit.add(OpId::kEmbeddingDenseBackward, {ctx.grad(), ctx.input(1)},
                        {{"num_weights", ctx.in(0).shape[0]},
                         {"padding_idx", padding_idx},
                         {"scale_grad_by_freq", false}});
  return out;
}

std::vector<NodeId> log_softmax(GradContext& ctx) {
  return {
      ctx.emit.add(OpId::kLogSoftmaxBackwardData, {ctx.grad(), ctx.node},
                   {{"dim", ctx.fwd().attrs.get_int("dim")}, {"input_dtype", ctx.in(0).dtype}})};
}

// nll_loss_forward(self, target) -> (loss, total_weight); target gets no gradient.
std::vector<NodeId> nll_loss_forward(GradContext& ctx) {
  std::vector<NodeId> out(2, kNoNode);
  if (!ctx.want(0) || ctx.grad() == kNoNode) return out;
  const Attrs& attrs = ctx.fwd().attrs;
  NodeId total_weight = ctx.getitems.get(ctx.emit, ctx.node, 1);
  out[0] = ctx.emit.add(
      OpId::kNllLossBackward, {ctx.grad(), ctx.input(0), ctx.input(1), total_weight},
      {{"reduction", attrs.get_int("reduction")}, {"ignore_index", attrs.get_int("ignore_index")}});
  return out;
}

// (out, logsumexp) = attention(q, k, v); the backward kernel recomputes the
// scores from q, k, v, out and logsumexp and returns (grad q, grad k, grad v).
std::vector<NodeId> sdpa_flash_cpu(GradContext& ctx) {
  std::vector<NodeId> out(3, kNoNode);
  if (ctx.grad() == kNoNode) return out;  // only logsumexp was used: it has no gradient
  GraphEmitter& e = ctx.emit;
  NodeId attn_out = ctx.getitems.get(e, ctx.node, 0);
  NodeId logsumexp = ctx.getitems.get(e, ctx.node, 1);
  NodeId backward = e.add(
      OpId::kSdpaFlashCpuBackward,
      {ctx.grad(), ctx.input(0), ctx.input(1), ctx.input(2), attn_out, logsumexp}, ctx.fwd().attrs);
  for (int i = 0; i < 3; ++i) {
    if (ctx.want(i)) out[static_cast<size_t>(i)] = ctx.getitems.get(e, backward, i);
  }
  return out;
}

}  // namespace autopar::grad
