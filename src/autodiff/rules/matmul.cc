// Contractions: d(a @ b) = grad @ b^T for a and a^T @ grad for b.
#include "autodiff/grad_rules.h"

namespace autopar::grad {
namespace {

// Scales by a non-unit alpha/beta, as addmm's backward does.
NodeId scaled(GradContext& ctx, NodeId g, std::string_view attr) {
  const Attrs& attrs = ctx.fwd().attrs;
  if (!attrs.has(attr) || attrs.get_scalar(attr) == 1.0) return g;
  return ctx.emit.add(OpId::kMulScalar, {g}, {{"other", attrs.get_scalar(attr)}});
}

NodeId transposed_last_two(GradContext& ctx, NodeId x) {
  return ctx.emit.add(OpId::kTranspose, {x}, {{"dim0", int64_t{1}}, {"dim1", int64_t{2}}});
}

}  // namespace

std::vector<NodeId> mm(GradContext& ctx) {
  GraphEmitter& e = ctx.emit;
  std::vector<NodeId> out(2, kNoNode);
  if (ctx.want(0)) out[0] = e.add(OpId::kMm, {ctx.grad(), e.add(OpId::kT, {ctx.input(1)})});
  if (ctx.want(1)) out[1] = e.add(OpId::kMm, {e.add(OpId::kT, {ctx.input(0)}), ctx.grad()});
  return out;
}

std::vector<NodeId> bmm(GradContext& ctx) {
  GraphEmitter& e = ctx.emit;
  std::vector<NodeId> out(2, kNoNode);
  if (ctx.want(0)) {
    out[0] = e.add(OpId::kBmm, {ctx.grad(), transposed_last_two(ctx, ctx.input(1))});
  }
  if (ctx.want(1)) {
    out[1] = e.add(OpId::kBmm, {transposed_last_two(ctx, ctx.input(0)), ctx.grad()});
  }
  return out;
}

// addmm(bias, a, b) = beta * bias + alpha * (a @ b).
std::vector<NodeId> addmm(GradContext& ctx) {
  GraphEmitter& e = ctx.emit;
  std::vector<NodeId> out(3, kNoNode);
  if (ctx.want(0)) out[0] = e.sum_to(scaled(ctx, ctx.grad(), "beta"), ctx.in(0).shape);
  NodeId g = (ctx.want(1) || ctx.want(2)) ? scaled(ctx, ctx.grad(), "alpha") : kNoNode;
  if (ctx.want(1)) out[1] = e.add(OpId::kMm, {g, e.add(OpId::kT, {ctx.input(2)})});
  if (ctx.want(2)) out[2] = e.add(OpId::kMm, {e.add(OpId::kT, {ctx.input(1)}), g});
  return out;
}

}  // namespace autopar::grad
