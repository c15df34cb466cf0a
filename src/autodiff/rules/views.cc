// Views, layout and complex views: the gradient goes through the inverse view.
#include "autodiff/grad_rules.h"

namespace autopar::grad {

// getitem selects one output; the driver routes the gradient to that output.
std::vector<NodeId> getitem(GradContext& ctx) { return {ctx.grad()}; }

// A copy in the forward pass is the identity for gradients.
std::vector<NodeId> clone(GradContext& ctx) { return {ctx.grad()}; }

std::vector<NodeId> conj(GradContext& ctx) { return {ctx.emit.add(OpId::kConj, {ctx.grad()})}; }

std::vector<NodeId> expand(GradContext& ctx) {
  return {ctx.emit.sum_to(ctx.grad(), ctx.in(0).shape)};
}

std::vector<NodeId> t(GradContext& ctx) { return {ctx.emit.add(OpId::kT, {ctx.grad()})}; }

std::vector<NodeId> transpose(GradContext& ctx) {
  const Attrs& attrs = ctx.fwd().attrs;
  return {ctx.emit.add(OpId::kTranspose, {ctx.grad()},
                       {{"dim0", attrs.get_int("dim0")}, {"dim1", attrs.get_int("dim1")}})};
}

// view, _unsafe_view and unsqueeze only change the shape: view the gradient back.
std::vector<NodeId> view(GradContext& ctx) { return {ctx.emit.view(ctx.grad(), ctx.in(0).shape)}; }

std::vector<NodeId> view_as_complex(GradContext& ctx) {
  return {ctx.emit.add(OpId::kViewAsReal, {ctx.grad()})};
}

std::vector<NodeId> view_as_real(GradContext& ctx) {
  return {ctx.emit.add(OpId::kViewAsComplex, {ctx.grad()})};
}

}  // namespace autopar::grad
