// The Llama 3 forward graph, node for node as torchtitan's Transformer traces
// to aten ops (torchtitan/models/llama3/model/model.py), then autodiff.
#include "models/llama3.h"

#include <string>
#include <vector>

#include "autodiff/autodiff.h"
#include "autodiff/emitter.h"
#include "models/layers.h"

namespace autopar {
namespace {

struct LayerParams {
  NodeId wq, wk, wv, wo, w1, w2, w3, attention_norm, ffn_norm;
};

struct Params {
  NodeId tok_embeddings = kNoNode;
  std::vector<LayerParams> layers;
  NodeId norm = kNoNode;
  NodeId output = kNoNode;
};

// In torchtitan's registration order: tok_embeddings, then per layer attention
// (wq, wk, wv, wo), feed_forward (w1, w2, w3), attention_norm, ffn_norm; then
// norm, output.
Params add_params(Graph& g, const Llama3Config& c) {
  const int64_t q_dim = c.n_heads * c.head_dim();
  const int64_t kv_dim = c.n_kv_heads * c.head_dim();
  const int64_t hidden = c.ffn_hidden_dim();
  Params p;
  p.tok_embeddings = layers::add_param(g, "tok_embeddings.weight", {c.vocab_size, c.dim}, c.dtype,
                                       "tok_embeddings");
  for (int64_t i = 0; i < c.n_layers; ++i) {
    std::string prefix = "layers." + std::to_string(i) + ".";
    std::string attn = prefix + "attention";
    std::string ffn = prefix + "feed_forward";
    auto add = [&](const std::string& scope, std::string_view leaf, Shape shape) {
      return layers::add_param(g, scope + "." + std::string(leaf), std::move(shape), c.dtype,
                               scope);
    };
    LayerParams l{};
    l.wq = add(attn, "wq.weight", {q_dim, c.dim});
    l.wk = add(attn, "wk.weight", {kv_dim, c.dim});
    l.wv = add(attn, "wv.weight", {kv_dim, c.dim});
    l.wo = add(attn, "wo.weight", {c.dim, q_dim});
    l.w1 = add(ffn, "w1.weight", {hidden, c.dim});
    l.w2 = add(ffn, "w2.weight", {c.dim, hidden});
    l.w3 = add(ffn, "w3.weight", {hidden, c.dim});
    l.attention_norm = add(prefix + "attention_norm", "weight", {c.dim});
    l.ffn_norm = add(prefix + "ffn_norm", "weight", {c.dim});
    p.layers.push_back(l);
  }
  p.norm = layers::add_param(g, "norm.weight", {c.dim}, c.dtype, "norm");
  p.output = layers::add_param(g, "output.weight", {c.vocab_size, c.dim}, c.dtype, "output");
  return p;
}

class Llama3Builder {
 public:
  Llama3Builder(const Llama3Config& config, Graph& graph)
      : c_(config), g_(graph), e_(graph), params_(add_params(graph, config)) {
    freqs_cis_ = g_.add_placeholder("freqs_cis", PlaceholderKind::kBuffer,
                                    {{c_.seq, c_.head_dim() / 2}, DType::c64}, "freqs_cis");
    tokens_ = g_.add_placeholder("tokens", PlaceholderKind::kInput,
                                 {{c_.batch, c_.seq}, DType::i64}, "tokens");
    labels_ = g_.add_placeholder("labels", PlaceholderKind::kInput,
                                 {{c_.batch, c_.seq}, DType::i64}, "labels");
  }

  Expected<NodeId> run();

 private:
  NodeId block(NodeId h, int64_t layer);
  NodeId attention(NodeId x, const LayerParams& p);
  std::pair<NodeId, NodeId> rotary(NodeId xq, NodeId xk);
  NodeId rotate(NodeId x, NodeId freqs, int64_t heads);
  NodeId repeat_kv(NodeId x);
  NodeId feed_forward(NodeId x, const LayerParams& p);

  const Llama3Config& c_;
  Graph& g_;
  GraphEmitter e_;
  Params params_;
  NodeId freqs_cis_ = kNoNode;
  NodeId tokens_ = kNoNode;
  NodeId labels_ = kNoNode;
};

Expected<NodeId> Llama3Builder::run() {
  e_.set_scope("tok_embeddings");
  NodeId h = e_.add(OpId::kEmbedding, {params_.tok_embeddings, tokens_});
  for (int64_t i = 0; i < c_.n_layers; ++i) h = block(h, i);
  e_.set_scope("norm");
  h = layers::rms_norm(e_, h, params_.norm, c_.norm_eps);
  e_.set_scope("output");
  NodeId logits = layers::linear(e_, h, params_.output);
  // torchtitan's loss: cross_entropy(pred.flatten(0, 1).float(), labels.flatten(0, 1)).
  e_.set_scope("loss");
  NodeId flat = e_.view(logits, {c_.batch * c_.seq, c_.vocab_size});
  if (c_.dtype != DType::f32) flat = e_.to_dtype(flat, DType::f32);
  NodeId loss = layers::cross_entropy(e_, flat, e_.view(labels_, {c_.batch * c_.seq}));
  if (Status s = e_.status(); !s) return s.error();
  return loss;
}

NodeId Llama3Builder::block(NodeId h, int64_t layer) {
  const LayerParams& p = params_.layers[static_cast<size_t>(layer)];
  std::string prefix = "layers." + std::to_string(layer);
  e_.set_scope(prefix + ".attention_norm");
  NodeId normed = layers::rms_norm(e_, h, p.attention_norm, c_.norm_eps);
  e_.set_scope(prefix + ".attention");
  NodeId attn = attention(normed, p);
  e_.set_scope(prefix);
  h = e_.add(OpId::kAddTensor, {h, attn});
  e_.set_scope(prefix + ".ffn_norm");
  normed = layers::rms_norm(e_, h, p.ffn_norm, c_.norm_eps);
  e_.set_scope(prefix + ".feed_forward");
  NodeId ffn = feed_forward(normed, p);
  e_.set_scope(prefix);
  return e_.add(OpId::kAddTensor, {h, ffn});
}

NodeId Llama3Builder::attention(NodeId x, const LayerParams& p) {
  const int64_t b = c_.batch, s = c_.seq, hd = c_.head_dim();
  NodeId xq = e_.view(layers::linear(e_, x, p.wq), {b, s, c_.n_heads, hd});
  NodeId xk = e_.view(layers::linear(e_, x, p.wk), {b, s, c_.n_kv_heads, hd});
  NodeId xv = e_.view(layers::linear(e_, x, p.wv), {b, s, c_.n_kv_heads, hd});
  std::tie(xq, xk) = rotary(xq, xk);
  auto heads_first = [&](NodeId t) {
    return e_.add(OpId::kTranspose, {t}, {{"dim0", int64_t{1}}, {"dim1", int64_t{2}}});
  };
  NodeId q = heads_first(xq);
  NodeId k = heads_first(repeat_kv(xk));
  NodeId v = heads_first(repeat_kv(xv));
  NodeId sdpa = e_.add(OpId::kSdpaFlashCpu, {q, k, v}, {{"dropout_p", 0.0}, {"is_causal", true}});
  NodeId out = e_.getitem(sdpa, 0);
  e_.getitem(sdpa, 1);  // logsumexp, saved for the backward kernel
  NodeId seq_first = e_.add(OpId::kTranspose, {out}, {{"dim0", int64_t{1}}, {"dim1", int64_t{2}}});
  NodeId merged = e_.view(e_.add(OpId::kClone, {seq_first}), {b, s, c_.n_heads * hd});
  return layers::linear(e_, merged, p.wo);
}

// apply_rotary_emb: both q and k rotate by the same freqs_cis, viewed
// [1, S, 1, head_dim / 2] to broadcast over batch and heads.
std::pair<NodeId, NodeId> Llama3Builder::rotary(NodeId xq, NodeId xk) {
  NodeId freqs = e_.view(freqs_cis_, {1, c_.seq, 1, c_.head_dim() / 2});
  NodeId q = rotate(xq, freqs, c_.n_heads);
  NodeId k = rotate(xk, freqs, c_.n_kv_heads);
  if (c_.dtype == DType::f32) return {q, k};
  return {e_.to_dtype(q, c_.dtype), e_.to_dtype(k, c_.dtype)};  // .type_as(xq)
}

// view_as_complex(x.float().reshape(B, S, H, hd/2, 2)) * freqs, back to real.
NodeId Llama3Builder::rotate(NodeId x, NodeId freqs, int64_t heads) {
  const int64_t b = c_.batch, s = c_.seq, hd = c_.head_dim();
  NodeId xf = c_.dtype == DType::f32 ? x : e_.to_dtype(x, DType::f32);
  NodeId pairs = e_.view(xf, {b, s, heads, hd / 2, 2});
  NodeId rotated = e_.add(OpId::kMulTensor, {e_.add(OpId::kViewAsComplex, {pairs}), freqs});
  return e_.view(e_.add(OpId::kViewAsReal, {rotated}), {b, s, heads, hd});  // flatten(3)
}

// repeat_kv: x[:, :, :, None, :].expand(B, S, kv, rep, hd).reshape(B, S, kv * rep, hd).
NodeId Llama3Builder::repeat_kv(NodeId x) {
  const int64_t rep = c_.n_heads / c_.n_kv_heads;
  if (rep == 1) return x;
  const int64_t b = c_.batch, s = c_.seq, kv = c_.n_kv_heads, hd = c_.head_dim();
  NodeId unsqueezed = e_.add(OpId::kUnsqueeze, {x}, {{"dim", int64_t{3}}});
  NodeId expanded = e_.add(OpId::kExpand, {unsqueezed}, {{"size", Shape{b, s, kv, rep, hd}}});
  return e_.view(e_.add(OpId::kClone, {expanded}), {b, s, kv * rep, hd});
}

// SwiGLU: w2(silu(w1(x)) * w3(x)).
NodeId Llama3Builder::feed_forward(NodeId x, const LayerParams& p) {
  NodeId gate = e_.add(OpId::kSilu, {layers::linear(e_, x, p.w1)});
  NodeId up = layers::linear(e_, x, p.w3);
  return layers::linear(e_, e_.add(OpId::kMulTensor, {gate, up}), p.w2);
}

}  // namespace

Expected<ForwardGraph> build_llama3_forward(const Llama3Config& config) {
  if (Status s = validate(config); !s) return s.error();
  ForwardGraph forward;
  forward.graph.name = config.name;
  Llama3Builder builder(config, forward.graph);
  Expected<NodeId> loss = builder.run();
  if (!loss) return make_error_like(loss.error(), "{}: {}", config.name, loss.error().message);
  forward.loss = *loss;
  return forward;
}

Expected<Graph> build_llama3(const Llama3Config& config) {
  Expected<ForwardGraph> forward = build_llama3_forward(config);
  if (!forward) return forward.error();
  return build_joint_graph(forward->graph, {forward->loss, {}});
}

}  // namespace autopar
