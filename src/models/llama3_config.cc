// Llama 3 configs as torchtitan defines them (torchtitan/models/llama3/__init__.py).
#include <algorithm>
#include <array>

#include "models/llama3.h"

namespace autopar {
namespace {

constexpr int64_t kBigBatch = 2;
constexpr int64_t kBigSeq = 8192;
constexpr double kMaxElements = 0x1p62;

Llama3Config big(std::string name, int64_t dim, int64_t layers, int64_t heads, double multiplier,
                 int64_t multiple_of) {
  Llama3Config c;
  c.name = std::move(name);
  c.dim = dim;
  c.n_layers = layers;
  c.n_heads = heads;
  c.n_kv_heads = 8;
  c.vocab_size = 128256;
  c.ffn_dim_multiplier = multiplier;
  c.multiple_of = multiple_of;
  c.batch = kBigBatch;
  c.seq = kBigSeq;
  c.dtype = DType::bf16;
  return c;
}

// dim 256, 16 heads over 8 kv heads so the debug model exercises GQA's repeat_kv.
Llama3Config debugmodel() {
  Llama3Config c;
  c.name = "llama3-debugmodel";
  c.dim = 256;
  c.n_layers = 6;
  c.n_heads = 16;
  c.n_kv_heads = 8;
  c.vocab_size = 2000;
  c.multiple_of = 256;
  c.batch = 8;
  c.seq = 32;
  c.dtype = DType::f32;
  return c;
}

}  // namespace

int64_t Llama3Config::ffn_hidden_dim() const {
  int64_t hidden = 2 * 4 * dim / 3;  // int(2 * hidden / 3) with hidden = 4 * dim
  if (ffn_dim_multiplier)
    hidden = static_cast<int64_t>(*ffn_dim_multiplier * static_cast<double>(hidden));
  return multiple_of * ((hidden + multiple_of - 1) / multiple_of);
}

std::optional<Llama3Config> llama3_config(std::string_view name) {
  if (name == "llama3-8b") return big("llama3-8b", 4096, 32, 32, 1.3, 1024);
  if (name == "llama3-70b") return big("llama3-70b", 8192, 80, 64, 1.3, 4096);
  if (name == "llama3-405b") return big("llama3-405b", 16384, 126, 128, 1.2, 4096);
  if (name == "llama3-debugmodel") return debugmodel();
  return std::nullopt;
}

Status validate(const Llama3Config& c) {
  const std::array<std::pair<std::string_view, int64_t>, 8> sizes = {
      {{"dim", c.dim},
       {"n_layers", c.n_layers},
       {"n_heads", c.n_heads},
       {"n_kv_heads", c.n_kv_heads},
       {"vocab_size", c.vocab_size},
       {"multiple_of", c.multiple_of},
       {"batch", c.batch},
       {"seq", c.seq}}};
  for (const auto& [field, value] : sizes) {
    if (value <= 0) return make_error("{}: {} must be positive, got {}", c.name, field, value);
  }
  if (c.dim % c.n_heads != 0) {
    return make_error("{}: n_heads {} does not divide dim {}", c.name, c.n_heads, c.dim);
  }
  if (c.n_heads % c.n_kv_heads != 0) {
    return make_error("{}: n_kv_heads {} does not divide n_heads {}", c.name, c.n_kv_heads,
                      c.n_heads);
  }
  if (c.head_dim() % 2 != 0) {
    return make_error("{}: head_dim {} (dim {} / n_heads {}) must be even for rotary embeddings",
                      c.name, c.head_dim(), c.dim, c.n_heads);
  }
  // The logits [batch * seq, vocab] must count their elements in int64.
  double logits = static_cast<double>(c.batch) * static_cast<double>(c.seq) *
                  static_cast<double>(std::max(c.vocab_size, c.ffn_hidden_dim()));
  if (logits > kMaxElements) {
    return make_error("{}: batch {} x seq {} is too large (a tensor would hold {:.3g} elements)",
                      c.name, c.batch, c.seq, logits);
  }
  if (c.dtype != DType::f32 && c.dtype != DType::bf16 && c.dtype != DType::f16) {
    return make_error("{}: dtype {} is not supported (use f32, bf16 or f16)", c.name,
                      dtype_name(c.dtype));
  }
  return ok_status();
}

}  // namespace autopar
