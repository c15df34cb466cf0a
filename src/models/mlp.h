// A small MLP classifier: hidden layers of nn.Linear (with bias) + ReLU, a
// linear output layer and cross-entropy loss. The smallest model that still has
// matmuls, broadcast biases, fan-out and a loss, for tests and examples.
#pragma once

#include <cstdint>

#include "ir/expected.h"
#include "ir/graph.h"

namespace autopar {

struct MlpConfig {
  int64_t batch = 32;
  int64_t in_features = 64;
  int64_t hidden = 256;
  int64_t classes = 16;
  int64_t hidden_layers = 2;
  DType dtype = DType::f32;
};

// Params "layers.<i>.weight"/"layers.<i>.bias" per hidden layer, then
// "output.weight"/"output.bias"; inputs "inputs" [batch, in] and "labels" i64 [batch].
Expected<Graph> build_mlp(const MlpConfig& config);

}  // namespace autopar
