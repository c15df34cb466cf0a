// Pointwise ops. Broadcast operands get their gradient summed back to their
// own shape; complex operands use the conjugate (PyTorch's convention for
// complex autograd: d(a*b)/da contributes grad * conj(b)).
#include "autodiff/grad_rules.h"

namespace autopar::grad {
namespace {

NodeId conj_if_complex(GradContext& ctx, NodeId x) {
  if (!is_complex(ctx.emit.meta(x).dtype)) return x;
  return ctx.emit.add(OpId::kConj, {x});
}

NodeId mul_scalar_node(GraphEmitter& e, NodeId x, double value) {
  return e.add(OpId::kMulScalar, {x}, {{"other", value}});
}

}  // namespace

std::vector<NodeId> add_scalar(GradContext& ctx) { return {ctx.grad()}; }

std::vector<NodeId> add_tensor(GradContext& ctx) {
  GraphEmitter& e = ctx.emit;
  std::vector<NodeId> out(2, kNoNode);
  if (ctx.want(0)) out[0] = e.sum_to(ctx.grad(), ctx.in(0).shape);
  if (ctx.want(1)) {
    const Attrs& attrs = ctx.fwd().attrs;
    NodeId g = ctx.grad();
    if (attrs.has("alpha") && attrs.get_scalar("alpha") != 1.0) {
      g = mul_scalar_node(e, g, attrs.get_scalar("alpha"));
    }
    out[1] = e.sum_to(g, ctx.in(1).shape);
  }
  return out;
}

std::vector<NodeId> div_scalar(GradContext& ctx) {
  return {ctx.emit.add(OpId::kDivScalar, {ctx.grad()},
                       {{"other", ctx.fwd().attrs.get_scalar("other")}})};
}

std::vector<NodeId> mul_scalar(GradContext& ctx) {
  return {mul_scalar_node(ctx.emit, ctx.grad(), ctx.fwd().attrs.get_scalar("other"))};
}

std::vector<NodeId> mul_tensor(GradContext& ctx) {
  GraphEmitter& e = ctx.emit;
  std::vector<NodeId> out(2, kNoNode);
  for (int i = 0; i < 2; ++i) {
    if (!ctx.want(i)) continue;
    NodeId other = conj_if_complex(ctx, ctx.input(1 - i));
    out[static_cast<size_t>(i)] =
        e.sum_to(e.add(OpId::kMulTensor, {ctx.grad(), other}), ctx.in(i).shape);
  }
  return out;
}

// d(x^e) = grad * (e * x^(e-1)).
std::vector<NodeId> pow_tensor_scalar(GradContext& ctx) {
  GraphEmitter& e = ctx.emit;
  double exponent = ctx.fwd().attrs.get_scalar("exponent");
  NodeId lowered = e.add(OpId::kPowTensorScalar, {ctx.input(0)}, {{"exponent", exponent - 1}});
  return {e.add(OpId::kMulTensor, {ctx.grad(), mul_scalar_node(e, lowered, exponent)})};
}

// d(x^-1/2) = grad * -1/2 * x^-3/2 = grad * -0.5 * rsqrt(x)^3: reuses the output.
std::vector<NodeId> rsqrt(GradContext& ctx) {
  GraphEmitter& e = ctx.emit;
  NodeId cubed = e.add(OpId::kPowTensorScalar, {ctx.node}, {{"exponent", 3.0}});
  return {e.add(OpId::kMulTensor, {ctx.grad(), mul_scalar_node(e, cubed, -0.5)})};
}

std::vector<NodeId> relu(GradContext& ctx) {
  return {
      ctx.emit.add(OpId::kThresholdBackward, {ctx.grad(), ctx.node}, {{"threshold", int64_t{0}}})};
}

std::vector<NodeId> silu(GradContext& ctx) {
  return {ctx.emit.add(OpId::kSiluBackward, {ctx.grad(), ctx.input(0)})};
}

std::vector<NodeId> to_copy(GradContext& ctx) {
  return {ctx.emit.to_dtype(ctx.grad(), ctx.in(0).dtype)};
}

}  // namespace autopar::grad
