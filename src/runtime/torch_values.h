// Values written by the PyTorch exporter (python/autopar_export.py
// --with-values DIR): parameter values, the example batch, and PyTorch's own
// loss and gradients for that batch. `autopar run --check-against-torch DIR`
// starts from these instead of init.h's seeded values and compares its first
// step's loss and gradients with PyTorch's.
//
// DIR/index.json: {"format": "autopar.values", "version": 1, "tensors": [
//   {"role": "param"|"input"|"loss"|"grad"|"buffer", "name": "fc.weight", "file": "0_param_fc_weight.bin",
//    "shape": [16, 8], "dtype": "f32"}, ...]}
// Each file is the tensor's raw little-endian row-major bytes. "buffer" is a
// buffer's value after PyTorch's step (its initial value is in the graph).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "ir/expected.h"
#include "ir/graph.h"

namespace autopar {

struct TorchValues {
  std::map<std::string, at::Tensor> params;  // by module parameter name
  std::map<std::string, at::Tensor> inputs;  // by input name (placeholder target)
  std::map<std::string, at::Tensor> grads;   // by module parameter name
  std::map<std::string, at::Tensor> buffers; // after the step, by buffer name
  at::Tensor loss;
};

// Errors name the file and what is wrong (missing, wrong size, unknown dtype).
Expected<TorchValues> read_torch_values(const std::string& dir);

// Every placeholder's full value (by NodeId) from `values`: params and inputs
// by target, tangents ones, buffers and constants the values the graph
// carries (or the exporter's by target). Errors name a placeholder with no value or a shape
// that differs from the graph's.
Expected<std::vector<at::Tensor>> torch_placeholders(const Graph& graph, const TorchValues& values);

}  // namespace autopar
