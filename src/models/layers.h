// Building blocks shared by the built-in models, each emitted as the aten ops
// PyTorch's tracer produces for the matching torch.nn module or functional, so
// that our graphs look like the ones AOT autograd exports for the same model.
#pragma once

#include <string_view>

#include "autodiff/emitter.h"
#include "ir/graph.h"

namespace autopar::layers {

// A param placeholder: node name is the param name with dots as underscores
// ("layers_0_attention_wq_weight"), target is the real name, scope its module.
NodeId add_param(Graph& graph, std::string_view name, Shape shape, DType dtype,
                 std::string_view scope);

// nn.Linear without bias on x [..., in] and weight [out, in]: view x to 2-D,
// t(weight), mm, view back to [..., out].
NodeId linear(GraphEmitter& e, NodeId x, NodeId weight);

// nn.Linear with bias on 2-D x: addmm(bias, x, t(weight)).
NodeId linear_with_bias(GraphEmitter& e, NodeId x, NodeId weight, NodeId bias);

// RMSNorm as torchtitan writes it: the normalisation runs in f32 (x.float()),
// the result is cast back to x's dtype, then scaled by weight.
NodeId rms_norm(GraphEmitter& e, NodeId x, NodeId weight, double eps);

// F.cross_entropy(logits [N, C], labels i64 [N]) with mean reduction and
// ignore_index -100: _log_softmax, nll_loss_forward, getitem 0 (the loss). Also
// emits getitem 1 (total_weight), which the backward pass reads.
NodeId cross_entropy(GraphEmitter& e, NodeId logits, NodeId labels);

}  // namespace autopar::layers
