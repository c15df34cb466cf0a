#include "models/mlp.h"

#include <string>
#include <vector>

#include "autodiff/autodiff.h"
#include "autodiff/emitter.h"
#include "models/layers.h"

namespace autopar {
namespace {

struct Linear {
  NodeId weight = kNoNode;
  NodeId bias = kNoNode;
  std::string scope;
};

Linear add_linear(Graph& g, std::string scope, int64_t in, int64_t out, DType dtype) {
  Linear l;
  l.weight = layers::add_param(g, scope + ".weight", {out, in}, dtype, scope);
  l.bias = layers::add_param(g, scope + ".bias", {out}, dtype, scope);
  l.scope = std::move(scope);
  return l;
}

}  // namespace

Expected<Graph> build_mlp(const MlpConfig& c) {
  Graph g;
  g.name = "mlp";
  std::vector<Linear> hidden;
  for (int64_t i = 0; i < c.hidden_layers; ++i) {
    hidden.push_back(add_linear(g, "layers." + std::to_string(i), i == 0 ? c.in_features : c.hidden,
                                c.hidden, c.dtype));
  }
  Linear output =
      add_linear(g, "output", c.hidden_layers == 0 ? c.in_features : c.hidden, c.classes, c.dtype);
  NodeId inputs = g.add_placeholder("inputs", PlaceholderKind::kInput,
                                    {{c.batch, c.in_features}, c.dtype}, "inputs");
  NodeId labels =
      g.add_placeholder("labels", PlaceholderKind::kInput, {{c.batch}, DType::i64}, "labels");
  GraphEmitter e(g);
  NodeId h = inputs;
  for (const Linear& l : hidden) {
    e.set_scope(l.scope);
    h = e.add(OpId::kRelu, {layers::linear_with_bias(e, h, l.weight, l.bias)});
  }
  e.set_scope(output.scope);
  NodeId logits = layers::linear_with_bias(e, h, output.weight, output.bias);
  e.set_scope("loss");
  NodeId loss = layers::cross_entropy(e, logits, labels);
  if (Status s = e.status(); !s) return make_error_like(s.error(), "mlp: {}", s.error().message);
  return build_joint_graph(g, {loss, {}});
}

}  // namespace autopar
