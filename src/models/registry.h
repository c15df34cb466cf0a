// Built-in models. Each builds the joint forward+backward graph of one training
// step (forward, loss, and autodiff's backward) with no outside model code.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/expected.h"
#include "ir/graph.h"

namespace autopar {

// The options every graph-building subcommand accepts (--model, --batch, --seq,
// --layers, --dtype). Unset fields take the model config's defaults:
//   llama3-8b, llama3-70b, llama3-405b: batch 2, seq 8192, bf16 (RoPE, RMSNorm
//     and the loss compute in f32, as torchtitan does)
//   llama3-debugmodel: batch 8, seq 32, 6 layers, f32
//   mlp: batch 32, 64 inputs, 2 hidden layers of 256, 16 classes, f32;
//     --layers sets the hidden layer count, --seq is rejected (no sequence dim)
// Overrides must be positive; --dtype takes f32, bf16 or f16. Errors name the
// option and its value. Configs and builders: models/llama3.h, models/mlp.h.
struct ModelOptions {
  std::string name;
  std::optional<int64_t> batch = std::nullopt;
  std::optional<int64_t> seq = std::nullopt;
  std::optional<int64_t> layers = std::nullopt;
  std::optional<DType> dtype = std::nullopt;
};

// Sorted names: "llama3-405b", "llama3-70b", "llama3-8b", "llama3-debugmodel", "mlp".
std::vector<std::string> model_names();

// Unknown names get an error listing model_names().
Expected<Graph> build_model(const ModelOptions& options);

}  // namespace autopar
