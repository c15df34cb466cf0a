// Embedding, log-softmax and negative log-likelihood loss, with their backward ops.
#include "ir/ops/rules.h"

namespace autopar::rules {
namespace {

bool is_index_dtype(DType dtype) { return dtype == DType::i64 || dtype == DType::i32; }


}  // namespace

Outputs embedding_shape(const OpCall& call) {
  const TensorMeta& weight = call.in(0);
  const TensorMeta& indices = call.in(1);
  if (Status s = require_rank(weight, 2, "embedding weight"); !s) return s.error();
  if (!is_index_dtype(indices.dtype)) {
    return make_error("embedding indices must be i64 or i32, got {}", to_string(indices));
  }
  TensorMeta out{indices.shape, weight.dtype};
  out.shape.push_back(weight.shape[1]);
  return one(out);
}

// A gather: no arithmetic, but every output element is one table read.
double embedding_flops(const OpCall&, Metas outputs) { return out_numel(outputs); }

// Reads the indices and only the gathered rows (not the whole table), writes the output.
double embedding_bytes(const OpCall& call, Metas outputs) {
  return static_cast<double>(call.in(1).bytes()) + 2.0 * out_bytes(outputs);
}

Outputs embedding_dense_backward_shape(const OpCall& call) {
  const TensorMeta& grad = call.in(0);
  const TensorMeta& indices = call.in(1);
  if (!is_index_dtype(indices.dtype)) {
    return make_error("embedding_dense_backward indices must be i64 or i32, got {}",
                      to_string(indices));
  }
  if (grad.rank() != indices.rank() + 1) {
    return make_error("embedding_dense_backward grad {} must have one more dim than indices {}",
                      to_string(grad), to_string(indices));
  }
  return one({{call.attrs.get_int("num_weights"), grad.shape.back()}, grad.dtype});
}

// Scatter-add of every gradient row.
double embedding_dense_backward_flops(const OpCall& call, Metas) {
  return static_cast<double>(call.in(0).numel());
}

Outputs log_softmax_shape(const OpCall& call) {
  const TensorMeta& x = call.in(0);
  if (normalize_dim(call.attrs.get_int("dim"), x.rank()) < 0) {
    return make_error("_log_softmax dim {} is out of range for {}", call.attrs.get_int("dim"),
                      to_string(x));
  }
  return one(x);
}

// max, subtract, exp, sum, log, subtract: about 5 per element.
double log_softmax_flops(const OpCall&, Metas outputs) { return 5.0 * out_numel(outputs); }

Outputs log_softmax_backward_shape(const OpCall& call) {
  const TensorMeta& grad = call.in(0);
  const TensorMeta& output = call.in(1);
  if (grad.shape != output.shape) {
    return make_error("_log_softmax_backward_data grad {} and output {} differ", to_string(grad),
                      to_string(output));
  }
  return one({grad.shape, call.attrs.get_dtype("input_dtype")});
}

Outputs nll_loss_forward_shape(const OpCall& call) {
  const TensorMeta& self = call.in(0);
  const TensorMeta& target = call.in(1);
  if (Status s = require_rank(self, 2, "nll_loss_forward self"); !s) return s.error();
  if (target.rank() != 1 || target.shape[0] != self.shape[0] || !is_index_dtype(target.dtype)) {
    return make_error("nll_loss_forward target must be i64[{}], got {}", self.shape[0],
                      to_string(target));
  }
  TensorMeta scalar{{}, self.dtype};
  if (call.attrs.get_int("reduction") == kReductionNone) {
    return std::vector<TensorMeta>{{{self.shape[0]}, self.dtype}, scalar};
  }
  return std::vector<TensorMeta>{scalar, scalar};
}

// One pick per row of self: input 0 of the forward, input 1 of the backward
// (whose input 0 is the scalar grad_output).
double nll_loss_flops(const OpCall& call, Metas) {
  const TensorMeta& self = call.in(0).rank() == 2 ? call.in(0) : call.in(1);
  return static_cast<double>(self.shape[0]);
}

Outputs nll_loss_backward_shape(const OpCall& call) {
  const TensorMeta& self = call.in(1);
  const TensorMeta& target = call.in(2);
  if (Status s = require_rank(self, 2, "nll_loss_backward self"); !s) return s.error();
  if (target.rank() != 1 || target.shape[0] != self.shape[0]) {
    return make_error("nll_loss_backward target must be [{}], got {}", self.shape[0],
                      to_string(target));
  }
  return one(self);
}

}  // namespace autopar::rules
