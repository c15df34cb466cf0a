#include "autodiff/autodiff.h"

#include <algorithm>
#include <array>
#include <map>
#include <string>

#include "autodiff/emitter.h"
#include "autodiff/grad_rules.h"

namespace autopar {

GetItemIndex::GetItemIndex(const Graph& graph) : items_(static_cast<size_t>(graph.size())) {
  for (NodeId id = 0; id < graph.size(); ++id) {
    const Node& node = graph.node(id);
    if (node.op != OpId::kGetItem) continue;
    auto& slots = items_[static_cast<size_t>(node.inputs[0])];
    auto index = static_cast<size_t>(node.attrs.get_int("index"));
    if (slots.size() <= index) slots.resize(index + 1, kNoNode);
    if (slots[index] == kNoNode) slots[index] = id;
  }
}

NodeId GetItemIndex::get(GraphEmitter& emit, NodeId node, int64_t index) {
  if (items_.size() <= static_cast<size_t>(node)) items_.resize(static_cast<size_t>(node) + 1);
  auto& slots = items_[static_cast<size_t>(node)];
  auto i = static_cast<size_t>(index);
  if (slots.size() <= i) slots.resize(i + 1, kNoNode);
  if (slots[i] == kNoNode) slots[i] = emit.getitem(node, index);
  return slots[i];
}

namespace {

struct Joint {
  Graph graph;
  std::vector<NodeId> remap;  // forward id -> joint id
  NodeId tangent = kNoNode;
  NodeId first_forward = 0;  // joint id of the first non-placeholder
  NodeId end_forward = 0;    // one past the last forward node
};

// Placeholders are ordered params, buffers, inputs, as AOT autograd orders them.
int placeholder_rank(PlaceholderKind kind) {
  switch (kind) {
    case PlaceholderKind::kParam:
      return 0;
    case PlaceholderKind::kBuffer:
      return 1;
    case PlaceholderKind::kInput:
      return 2;
    default:
      return -1;
  }
}

Expected<std::vector<NodeId>> sorted_placeholders(const Graph& fwd) {
  std::vector<NodeId> ids;
  bool seen_compute = false;
  for (NodeId id = 0; id < fwd.size(); ++id) {
    const Node& node = fwd.node(id);
    if (!node.is_placeholder()) {
      seen_compute = true;
      continue;
    }
    if (seen_compute) {
      return make_error("placeholder '{}' (node #{}) comes after compute nodes", node.name, id);
    }
    if (placeholder_rank(node.kind) < 0) {
      return make_error(
          "placeholder '{}' has kind {}; a forward graph takes param, buffer or input", node.name,
          placeholder_kind_name(node.kind));
    }
    ids.push_back(id);
  }
  std::stable_sort(ids.begin(), ids.end(), [&](NodeId a, NodeId b) {
    return placeholder_rank(fwd.node(a).kind) < placeholder_rank(fwd.node(b).kind);
  });
  return ids;
}

Expected<Joint> copy_forward(const Graph& fwd, NodeId loss) {
  Expected<std::vector<NodeId>> placeholders = sorted_placeholders(fwd);
  if (!placeholders) return placeholders.error();
  Joint joint;
  joint.graph.name = fwd.name;
  joint.remap.assign(static_cast<size_t>(fwd.size()), kNoNode);
  for (NodeId id : *placeholders) {
    joint.remap[static_cast<size_t>(id)] = *joint.graph.append(fwd.node(id));
  }
  joint.tangent =
      joint.graph.add_placeholder("tangents_1", PlaceholderKind::kTangent, fwd.node(loss).meta());
  joint.first_forward = joint.graph.size();
  for (NodeId id = static_cast<NodeId>(placeholders->size()); id < fwd.size(); ++id) {
    Node node = fwd.node(id);
    for (NodeId& input : node.inputs) input = joint.remap[static_cast<size_t>(input)];
    Expected<NodeId> copied = joint.graph.append(std::move(node));
    if (!copied) return copied.error();
    joint.remap[static_cast<size_t>(id)] = *copied;
  }
  joint.end_forward = joint.graph.size();
  return joint;
}

bool carries_gradient(DType dtype) { return is_floating(dtype) || is_complex(dtype); }

// A node needs a gradient when it is differentiable, floating, and depends on a param.
std::vector<bool> requires_grad(const Joint& joint, const std::vector<NodeId>& params) {
  const Graph& g = joint.graph;
  std::vector<bool> needs_grad(static_cast<size_t>(g.size()), false);
  for (NodeId p : params) needs_grad[static_cast<size_t>(p)] = true;
  for (NodeId id = joint.first_forward; id < g.size(); ++id) {
    const Node& node = g.node(id);
    if (!is_differentiable(node.op) || !carries_gradient(node.meta().dtype)) continue;
    needs_grad[static_cast<size_t>(id)] =
        std::any_of(node.inputs.begin(), node.inputs.end(),
                    [&](NodeId input) { return needs_grad[static_cast<size_t>(input)]; });
  }
  return needs_grad;
}

class Backward {
 public:
  Backward(Joint& joint, std::vector<bool> needs_grad)
      : joint_(joint),
        emit_(joint.graph),
        getitems_(joint.graph),
        needs_grad_(std::move(needs_grad)),
        grads_(static_cast<size_t>(joint.graph.size())) {}

  Status run(NodeId loss);
  NodeId grad_of(NodeId id) const {
    const auto& slots = grads_[static_cast<size_t>(id)];
    return slots.empty() ? kNoNode : slots[0];
  }

 private:
  Status differentiate(NodeId id);
  Status accumulate(NodeId consumer, NodeId input, size_t index, NodeId grad);

  Joint& joint_;
  GraphEmitter emit_;
  GetItemIndex getitems_;
  std::vector<bool> needs_grad_;
  std::vector<std::vector<NodeId>> grads_;  // [node][output]; empty when none flowed
};

Status Backward::run(NodeId loss) {
  const size_t outputs = joint_.graph.node(loss).outputs.size();
  grads_[static_cast<size_t>(loss)].assign(outputs, kNoNode);
  grads_[static_cast<size_t>(loss)][0] = joint_.tangent;
  // Only forward nodes have slots in grads_; backward nodes are appended past them.
  for (NodeId id = static_cast<NodeId>(grads_.size()) - 1; id >= joint_.first_forward; --id) {
    if (!needs_grad_[static_cast<size_t>(id)] || grads_[static_cast<size_t>(id)].empty()) continue;
    if (Status s = differentiate(id); !s) return s;
  }
  return ok_status();
}

Status Backward::differentiate(NodeId id) {
  const Graph& g = joint_.graph;
  GradContext ctx{emit_, getitems_, id, g.node(id), {}, grads_[static_cast<size_t>(id)], {}};
  for (NodeId input : ctx.fwd_node.inputs) {
    ctx.input_metas.push_back(g.node(input).meta());
    ctx.wants.push_back(needs_grad_[static_cast<size_t>(input)]);
  }
  emit_.set_scope(ctx.fwd_node.scope);
  std::vector<NodeId> input_grads = grad_rule(ctx.fwd_node.op)(ctx);
  if (!emit_.ok()) {
    return make_error_like(emit_.status().error(), "gradient of node '{}' ({}): {}", ctx.fwd_node.name,
                           node_op_name(ctx.fwd_node), emit_.status().error().message);
  }
  if (input_grads.size() != ctx.fwd_node.inputs.size()) {
    return make_error("gradient rule of {} returned {} gradients for {} inputs (node '{}')",
                      node_op_name(ctx.fwd_node), input_grads.size(), ctx.fwd_node.inputs.size(),
                      ctx.fwd_node.name);
  }
  size_t index = ctx.fwd_node.op == OpId::kGetItem
                     ? static_cast<size_t>(ctx.fwd_node.attrs.get_int("index"))
                     : 0;
  for (size_t i = 0; i < input_grads.size(); ++i) {
    if (input_grads[i] == kNoNode || !ctx.wants[i]) continue;
    if (Status s = accumulate(id, ctx.fwd_node.inputs[i], index, input_grads[i]); !s) return s;
  }
  return ok_status();
}

// Adds one contribution to the gradient of output `index` of `input`; a value
// used several times gets its contributions summed with add.Tensor.
Status Backward::accumulate(NodeId consumer, NodeId input, size_t index, NodeId grad) {
  const Graph& g = joint_.graph;
  const TensorMeta& want = g.node(input).outputs[index];
  if (g.node(grad).meta() != want) {
    return make_error("gradient rule of {} (node '{}') gave {} for input '{}' which is {}",
                      node_op_name(g.node(consumer)), g.node(consumer).name,
                      to_string(g.node(grad).meta()), g.node(input).name, to_string(want));
  }
  auto& slots = grads_[static_cast<size_t>(input)];
  if (slots.empty()) slots.assign(g.node(input).outputs.size(), kNoNode);
  slots[index] = slots[index] == kNoNode ? grad : emit_.add(OpId::kAddTensor, {slots[index], grad});
  return emit_.status();
}

Expected<std::vector<NodeId>> checked_params(const Graph& fwd, const AutodiffRequest& request) {
  if (request.loss < 0 || request.loss >= fwd.size()) {
    return make_error("loss id {} is not a node of the {}-node forward graph", request.loss,
                      fwd.size());
  }
  const Node& loss = fwd.node(request.loss);
  if (loss.outputs.size() != 1 || loss.meta().rank() != 0 || !is_floating(loss.meta().dtype)) {
    return make_error("loss '{}' must be one floating scalar, got {}", loss.name,
                      to_string(loss.meta()));
  }
  std::vector<NodeId> params = request.params;
  if (params.empty()) {
    for (NodeId id = 0; id < fwd.size(); ++id) {
      if (fwd.node(id).is_placeholder() && fwd.node(id).kind == PlaceholderKind::kParam) {
        params.push_back(id);
      }
    }
  }
  std::vector<bool> seen(static_cast<size_t>(fwd.size()), false);
  for (NodeId p : params) {
    if (p < 0 || p >= fwd.size() || fwd.node(p).kind != PlaceholderKind::kParam) {
      return make_error("requested gradient of node id {}, which is not a param placeholder", p);
    }
    if (seen[static_cast<size_t>(p)]) {
      return make_error("param '{}' is requested twice", fwd.node(p).name);
    }
    seen[static_cast<size_t>(p)] = true;
  }
  return params;
}

// Ops of imported joint graphs (convolution, ...) have no gradient rule here;
// differentiating through one must fail, not silently drop the gradient.
Status refuse_imported_only(const Graph& fwd) {
  for (NodeId id = 0; id < fwd.size(); ++id) {
    const Node& node = fwd.node(id);
    if (!is_imported_only(node.op)) continue;
    return make_error("node '{}' ({}) has no gradient rule: the op appears only in imported joint "
                      "graphs (export the training step with python/autopar_export.py instead)",
                      node.name, node_op_name(node));
  }
  return ok_status();
}

// Links each forward value to its gradient node. A rule may pass its output's
// gradient on unchanged (add gives both inputs the sum's gradient); such a node
// is linked only to the latest value, whose gradient it is: the inputs' own
// gradients are it after the forward's input redistribution is reversed, which
// no node holds. The loss's gradient is the tangent placeholder: no link.
void add_gradient_links(Joint& joint, const Backward& backward) {
  Graph& g = joint.graph;
  std::map<NodeId, NodeId> owner;  // grad node -> latest value it is the gradient of
  for (NodeId id = joint.first_forward; id < joint.end_forward; ++id) {
    NodeId grad = backward.grad_of(id);
    if (grad > id && g.node(id).outputs.size() == 1) owner[grad] = id;
  }
  for (NodeId id = joint.first_forward; id < joint.end_forward; ++id) {
    NodeId grad = backward.grad_of(id);
    auto it = owner.find(grad);
    if (it != owner.end() && it->second == id) g.add_gradient_link({id, grad});
  }
}

}  // namespace

Expected<Graph> build_joint_graph(const Graph& forward, const AutodiffRequest& request) {
  if (Status s = refuse_imported_only(forward); !s) return s.error();
  Expected<std::vector<NodeId>> params = checked_params(forward, request);
  if (!params) return params.error();
  Expected<Joint> joint = copy_forward(forward, request.loss);
  if (!joint) return joint.error();
  for (NodeId& p : *params) p = joint->remap[static_cast<size_t>(p)];
  NodeId loss = joint->remap[static_cast<size_t>(request.loss)];

  Backward backward(*joint, requires_grad(*joint, *params));
  if (Status s = backward.run(loss); !s) return s.error();

  Graph& g = joint->graph;
  g.add_output({loss, OutputKind::kLoss, kNoNode});
  std::string unreached;
  for (NodeId p : *params) {
    NodeId grad = backward.grad_of(p);
    if (grad == kNoNode) unreached += (unreached.empty() ? "" : ", ") + g.node(p).name;
    g.add_output({grad, OutputKind::kGradient, p});
  }
  if (!unreached.empty()) {
    return make_error("the loss '{}' does not depend on these params, so they get no gradient: {}",
                      g.node(loss).name, unreached);
  }
  add_gradient_links(*joint, backward);
  return std::move(g);
}

}  // namespace autopar
