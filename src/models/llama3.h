// Llama 3 in the torchtitan layout (torchtitan/models/llama3): configs for the
// 8B/70B/405B models and the small debug model, and the builder of its forward
// graph (token embedding, RMSNorm, grouped-query attention with complex RoPE,
// SwiGLU feed-forward, output projection, cross-entropy).
//
// Param names and order are torchtitan's (tok_embeddings.weight,
// layers.<i>.attention.wq.weight, ..., norm.weight, output.weight). The
// freqs_cis buffer (c64 [seq, head_dim / 2]) holds torchtitan's
// precompute_freqs_cis(head_dim, seq, rope_theta) at run time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ir/expected.h"
#include "ir/graph.h"

namespace autopar {

struct Llama3Config {
  std::string name;
  int64_t dim = 0;
  int64_t n_layers = 0;
  int64_t n_heads = 0;
  int64_t n_kv_heads = 0;
  int64_t vocab_size = 0;
  std::optional<double> ffn_dim_multiplier;
  int64_t multiple_of = 256;
  double norm_eps = 1e-5;
  double rope_theta = 500000;
  // One training step's shape.
  int64_t batch = 0;
  int64_t seq = 0;
  DType dtype = DType::f32;

  int64_t head_dim() const { return dim / n_heads; }
  // torchtitan's FeedForward hidden size:
  // multiple_of * ceil(int(multiplier * int(2 * 4 * dim / 3)) / multiple_of).
  int64_t ffn_hidden_dim() const;
};

// The named config with its default batch, seq and dtype; nullopt if unknown.
std::optional<Llama3Config> llama3_config(std::string_view name);

// Checks sizes: positive, heads dividing dim, kv heads dividing heads, an even
// head_dim (RoPE pairs), a floating dtype. Errors name the field and value.
Status validate(const Llama3Config& config);

// The forward graph: params, freqs_cis, tokens i64 [B, S], labels i64 [B, S];
// returns it with the id of the scalar f32 loss node.
struct ForwardGraph {
  Graph graph;
  NodeId loss = kNoNode;
};
Expected<ForwardGraph> build_llama3_forward(const Llama3Config& config);

// The joint forward+backward graph of one training step.
Expected<Graph> build_llama3(const Llama3Config& config);

}  // namespace autopar
