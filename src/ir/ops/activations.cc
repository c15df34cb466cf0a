// PyTorch import: the activations of the model zoo beyond relu, silu, gelu and
// hardtanh: sigmoid and tanh (LSTM gates, SE blocks, efficientnet),
// hardswish and hardsigmoid (mobilenet_v3), with their backward ops. All are
// pointwise: shapes come from pointwise.cc's rules; this file holds their
// FLOP counts (each also pays its bytes, sum_bytes in the op table).
#include "ir/ops/rules.h"

namespace autopar::rules {

// sigmoid = 1 / (1 + exp(-x)): neg, exp, add, div; its backward g * y * (1 - y): 3.
double sigmoid_flops(const OpCall&, Metas outputs) { return 4.0 * out_numel(outputs); }
double sigmoid_backward_flops(const OpCall&, Metas outputs) { return 3.0 * out_numel(outputs); }

// tanh through two exps, add, sub, div: 5; its backward g * (1 - y * y): 3.
double tanh_flops(const OpCall&, Metas outputs) { return 5.0 * out_numel(outputs); }
double tanh_backward_flops(const OpCall&, Metas outputs) { return 3.0 * out_numel(outputs); }

// hardsigmoid = clamp(x + 3, 0, 6) / 6: add, max, min, div; hardswish one mul
// more. Backward: two compares, a select and one or two muls.
double hardsigmoid_flops(const OpCall&, Metas outputs) { return 4.0 * out_numel(outputs); }
double hardswish_flops(const OpCall&, Metas outputs) { return 5.0 * out_numel(outputs); }
double hard_backward_flops(const OpCall&, Metas outputs) { return 4.0 * out_numel(outputs); }

}  // namespace autopar::rules
