#include "runtime/optimizer.h"

#include <cmath>

#include <ATen/ATen.h>

namespace autopar {

void OptimizerState::step(std::vector<at::Tensor>& params, const std::vector<at::Tensor>& grads) {
  ++steps_;
  if (config_.kind == Optimizer::kSgd) {
    for (size_t i = 0; i < params.size(); ++i) params[i].sub_(grads[i], config_.lr);
    return;
  }
  allocate(params);
  const double c1 = 1.0 - std::pow(config_.beta1, static_cast<double>(steps_));
  const double c2 = 1.0 - std::pow(config_.beta2, static_cast<double>(steps_));
  for (size_t i = 0; i < params.size(); ++i) {
    at::Tensor& p = params[i];
    // A weight's gradient often arrives transposed (the backward of mm); one
    // copy into the parameter's layout, as PyTorch's AccumulateGrad makes, is
    // cheaper than five strided passes over it.
    const at::Tensor g = grads[i].is_contiguous() ? grads[i] : grads[i].contiguous();
    p.mul_(1.0 - config_.lr * config_.weight_decay);
    m_[i].mul_(config_.beta1).add_(g, 1.0 - config_.beta1);
    v_[i].mul_(config_.beta2).addcmul_(g, g, 1.0 - config_.beta2);
    at::Tensor denom = (v_[i] / c2).sqrt_().add_(config_.eps);
    p.addcdiv_(m_[i], denom, -config_.lr / c1);
  }
}

void OptimizerState::allocate(const std::vector<at::Tensor>& params) {
  if (config_.kind != Optimizer::kAdamW || !m_.empty()) return;
  for (const at::Tensor& p : params) {
    m_.push_back(at::zeros_like(p));
    v_.push_back(at::zeros_like(p));
  }
}

double OptimizerState::state_bytes() const {
  double bytes = 0;
  for (const at::Tensor& t : m_) bytes += static_cast<double>(t.nbytes());
  for (const at::Tensor& t : v_) bytes += static_cast<double>(t.nbytes());
  return bytes;
}

std::vector<at::Tensor> OptimizerState::state() const {
  std::vector<at::Tensor> all = m_;
  all.insert(all.end(), v_.begin(), v_.end());
  return all;
}

}  // namespace autopar
