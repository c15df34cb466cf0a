// Optimizer: updates one rank's local parameter shards from gradients already
// redistributed into the parameters' shardings. Both updates are elementwise,
// so running them on shards gives exactly the shards of the full update; the
// --check reference runs the same class on full tensors.
//   sgd    p -= lr * g
//   adamw  torch.optim.AdamW defaults: betas (0.9, 0.999), eps 1e-8,
//          weight_decay 0.01 (decoupled), bias correction
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

#include "planner/auto_plan.h"

namespace autopar {

struct OptimizerConfig {
  Optimizer kind = Optimizer::kAdamW;
  double lr = 1e-3;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0.01;
};

class OptimizerState {
 public:
  explicit OptimizerState(OptimizerConfig config) : config_(config) {}
  // params[i] is updated in place with grads[i]; the list must stay the same
  // across steps (moments are kept per index).
  void step(std::vector<at::Tensor>& params, const std::vector<at::Tensor>& grads);
  // Allocates the state for these params now (zeros, as the first step would),
  // so a run holds it from the start, as the memory model counts it.
  void allocate(const std::vector<at::Tensor>& params);
  // Bytes of optimizer state held (two moments per element for AdamW).
  double state_bytes() const;
  // The state tensors (AdamW: every first moment, then every second moment).
  std::vector<at::Tensor> state() const;

 private:
  OptimizerConfig config_;
  int64_t steps_ = 0;
  std::vector<at::Tensor> m_, v_;
};

}  // namespace autopar
