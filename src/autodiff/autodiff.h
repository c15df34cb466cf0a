// Reverse-mode autodiff: turns a forward graph ending in a scalar loss into the
// joint forward+backward graph of one training step, as PyTorch's AOT autograd
// traces it.
//
// The joint graph has all placeholders first (params, buffers, inputs, then one
// tangent "tangents_1" holding d loss / d loss = 1 at run time), the forward
// nodes in their order, then the backward nodes, each carrying the scope of the
// forward node it differentiates. Outputs: the loss, then one gradient per
// requested param, in param order. Gradients of a value used several times are
// summed with aten.add.Tensor. Per-op rules live in grad_rules.h.
#pragma once

#include <vector>

#include "ir/expected.h"
#include "ir/graph.h"

namespace autopar {

struct AutodiffRequest {
  NodeId loss = kNoNode;       // a scalar floating node of the forward graph
  std::vector<NodeId> params;  // param placeholders needing gradients; empty = all params
};

// The forward graph has placeholders first and no outputs of its own. Errors
// name the node or param at fault (a param the loss does not depend on, a
// non-scalar loss, a failed rule).
Expected<Graph> build_joint_graph(const Graph& forward, const AutodiffRequest& request);

}  // namespace autopar
