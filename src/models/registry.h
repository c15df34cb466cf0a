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
// --layers, --dtype). Unset fields take the model config's defaults.
struct ModelOptions {
  std::string name;
  std::optional<int64_t> batch;
  std::optional<int64_t> seq;
  std::optional<int64_t> layers;
  std::optional<DType> dtype;
};

// Sorted names: "llama3-405b", "llama3-70b", "llama3-8b", "llama3-debugmodel", "mlp".
std::vector<std::string> model_names();

// Unknown names get an error listing model_names().
Expected<Graph> build_model(const ModelOptions& options);

}  // namespace autopar
