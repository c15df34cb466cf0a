// PyTorch import: the model zoo's activations (sigmoid, tanh, hardswish,
// hardsigmoid) and their backward ops, as libtorch calls. Pointwise: a shard
// needs no offsets.
#include <ATen/ops/hardsigmoid.h>
#include <ATen/ops/hardsigmoid_backward.h>
#include <ATen/ops/hardswish.h>
#include <ATen/ops/hardswish_backward.h>
#include <ATen/ops/sigmoid.h>
#include <ATen/ops/sigmoid_backward.h>
#include <ATen/ops/tanh.h>
#include <ATen/ops/tanh_backward.h>

#include "runtime/kernels/kernel_call.h"

namespace autopar::kernels {

KernelResult hardsigmoid(const KernelCall& call) { return one(at::hardsigmoid(call.in[0])); }

KernelResult hardsigmoid_backward(const KernelCall& call) {
  return one(at::hardsigmoid_backward(call.in[0], call.in[1]));
}

KernelResult hardswish(const KernelCall& call) { return one(at::hardswish(call.in[0])); }

KernelResult hardswish_backward(const KernelCall& call) {
  return one(at::hardswish_backward(call.in[0], call.in[1]));
}

KernelResult sigmoid(const KernelCall& call) { return one(at::sigmoid(call.in[0])); }

// (grad_output, output): the forward's output, not its input.
KernelResult sigmoid_backward(const KernelCall& call) {
  return one(at::sigmoid_backward(call.in[0], call.in[1]));
}

KernelResult tanh(const KernelCall& call) { return one(at::tanh(call.in[0])); }

KernelResult tanh_backward(const KernelCall& call) {
  return one(at::tanh_backward(call.in[0], call.in[1]));
}

}  // namespace autopar::kernels
