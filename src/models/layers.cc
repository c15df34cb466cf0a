#include "models/layers.h"

#include <algorithm>
#include <string>

namespace autopar::layers {
namespace {

constexpr int64_t kIgnoreIndex = -100;  // PyTorch's default for cross_entropy

}  // namespace

NodeId add_param(Graph& graph, std::string_view name, Shape shape, DType dtype,
                 std::string_view scope) {
  std::string node_name(name);
  std::replace(node_name.begin(), node_name.end(), '.', '_');
  return graph.add_placeholder(node_name, PlaceholderKind::kParam, {std::move(shape), dtype}, name,
                               scope);
}

NodeId linear(GraphEmitter& e, NodeId x, NodeId weight) {
  Shape x_shape = e.meta(x).shape;
  int64_t out_features = e.meta(weight).shape.front();
  NodeId flat = e.view(x, {-1, x_shape.back()});
  NodeId product = e.add(OpId::kMm, {flat, e.add(OpId::kT, {weight})});
  x_shape.back() = out_features;
  return e.view(product, x_shape);
}

NodeId linear_with_bias(GraphEmitter& e, NodeId x, NodeId weight, NodeId bias) {
  return e.add(OpId::kAddmm, {bias, x, e.add(OpId::kT, {weight})});
}

NodeId rms_norm(GraphEmitter& e, NodeId x, NodeId weight, double eps) {
  DType dtype = e.meta(x).dtype;
  NodeId xf = dtype == DType::f32 ? x : e.to_dtype(x, DType::f32);
  NodeId squared = e.add(OpId::kPowTensorScalar, {xf}, {{"exponent", int64_t{2}}});
  NodeId mean =
      e.add(OpId::kMeanDim, {squared}, {{"dim", std::vector<int64_t>{-1}}, {"keepdim", true}});
  NodeId shifted = e.add(OpId::kAddScalar, {mean}, {{"other", eps}});
  NodeId normed = e.add(OpId::kMulTensor, {xf, e.add(OpId::kRsqrt, {shifted})});
  NodeId cast = dtype == DType::f32 ? normed : e.to_dtype(normed, dtype);
  return e.add(OpId::kMulTensor, {cast, weight});
}

NodeId cross_entropy(GraphEmitter& e, NodeId logits, NodeId labels) {
  NodeId log_probs =
      e.add(OpId::kLogSoftmax, {logits}, {{"dim", int64_t{1}}, {"half_to_float", false}});
  NodeId nll = e.add(OpId::kNllLossForward, {log_probs, labels},
                     {{"reduction", kReductionMean}, {"ignore_index", kIgnoreIndex}});
  NodeId loss = e.getitem(nll, 0);
  e.getitem(nll, 1);  // total_weight, saved for nll_loss_backward as the tracer does
  return loss;
}

}  // namespace autopar::layers
