// Gradient rules: for each differentiable op, how to emit the backward ops that
// turn the gradient of its outputs into gradients of its inputs.
//
// The rules form one table indexed by OpId (grad_table.cc), like the op table:
// every op is either differentiable with a rule or listed as not
// differentiable, and a test walks all ops to check that. Rules emit aten-style
// backward ops through a GraphEmitter, so every emitted node is shape-checked
// by the op table. One op family per file in rules/.
#pragma once

#include <span>
#include <vector>

#include "autodiff/emitter.h"
#include "ir/graph.h"

namespace autopar {

// Finds the getitem node selecting output `index` of a multi-output node, or
// emits one. The forward trace usually already has it (saved for backward).
class GetItemIndex {
 public:
  explicit GetItemIndex(const Graph& graph);
  NodeId get(GraphEmitter& emit, NodeId node, int64_t index);

 private:
  std::vector<std::vector<NodeId>> items_;  // [node][index], kNoNode when absent
};

// What a rule sees: the forward node, the gradient of each of its outputs
// (kNoNode where none flowed), and which inputs need a gradient. The node and
// its input metas are copies: emitting appends to the graph's node vector, so
// references into it would dangle.
struct GradContext {
  GraphEmitter& emit;
  GetItemIndex& getitems;
  NodeId node;
  Node fwd_node;
  std::vector<TensorMeta> input_metas;  // the single output of each input
  std::vector<NodeId> grads;            // one per output of `node`
  std::vector<bool> wants;              // one per input of `node`

  const Node& fwd() const { return fwd_node; }
  NodeId input(int i) const { return fwd_node.inputs[static_cast<size_t>(i)]; }
  const TensorMeta& in(int i) const { return input_metas[static_cast<size_t>(i)]; }
  NodeId grad() const { return grads[0]; }
  bool want(int i) const { return wants[static_cast<size_t>(i)]; }
};

// Returns one gradient per input of the node (kNoNode for inputs that need
// none). Errors are recorded in ctx.emit.
using GradFn = std::vector<NodeId> (*)(GradContext& ctx);

// The rule for `op`, or nullptr when the op is not differentiable.
GradFn grad_rule(OpId op);
bool is_differentiable(OpId op);
// The ops listed as having no gradient (leaves and backward-only ops), sorted by OpId.
std::span<const OpId> non_differentiable_ops();
// Ops that only imported joint graphs contain (their backward ops are traced
// by PyTorch); they have no rule and autodiff refuses them. Sorted by OpId.
std::span<const OpId> imported_only_ops();
bool is_imported_only(OpId op);

namespace grad {

// rules/matmul.cc
std::vector<NodeId> addmm(GradContext& ctx);
std::vector<NodeId> bmm(GradContext& ctx);
std::vector<NodeId> mm(GradContext& ctx);
// rules/views.cc (views, layout and complex views)
std::vector<NodeId> clone(GradContext& ctx);
std::vector<NodeId> conj(GradContext& ctx);
std::vector<NodeId> expand(GradContext& ctx);
std::vector<NodeId> getitem(GradContext& ctx);
std::vector<NodeId> t(GradContext& ctx);
std::vector<NodeId> transpose(GradContext& ctx);
std::vector<NodeId> view(GradContext& ctx);  // view, _unsafe_view, unsqueeze
std::vector<NodeId> view_as_complex(GradContext& ctx);
std::vector<NodeId> view_as_real(GradContext& ctx);
// rules/pointwise.cc
std::vector<NodeId> add_scalar(GradContext& ctx);
std::vector<NodeId> add_tensor(GradContext& ctx);
std::vector<NodeId> div_scalar(GradContext& ctx);
std::vector<NodeId> mul_scalar(GradContext& ctx);
std::vector<NodeId> mul_tensor(GradContext& ctx);
std::vector<NodeId> pow_tensor_scalar(GradContext& ctx);
std::vector<NodeId> relu(GradContext& ctx);
std::vector<NodeId> rsqrt(GradContext& ctx);
std::vector<NodeId> silu(GradContext& ctx);
std::vector<NodeId> to_copy(GradContext& ctx);
// rules/nn.cc (reductions, embedding, loss, attention)
std::vector<NodeId> embedding(GradContext& ctx);
std::vector<NodeId> log_softmax(GradContext& ctx);
std::vector<NodeId> mean_dim(GradContext& ctx);
std::vector<NodeId> nll_loss_forward(GradContext& ctx);
std::vector<NodeId> sdpa_flash_cpu(GradContext& ctx);
std::vector<NodeId> sum_dim(GradContext& ctx);

}  // namespace grad
}  // namespace autopar
