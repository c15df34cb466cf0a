// Embedding (masked lookup on a row-sharded table), log-softmax and nll_loss,
// with their backward ops.
#include <ATen/ops/_log_softmax.h>
#include <ATen/ops/_log_softmax_backward_data.h>
#include <ATen/ops/bincount.h>
#include <ATen/ops/embedding.h>
#include <ATen/ops/nll_loss_backward.h>
#include <ATen/ops/nll_loss_forward.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/zeros.h>

#include "runtime/kernels/kernel_call.h"

namespace autopar::kernels {
namespace {

// Indices shifted into this shard's rows [offset, offset + rows), and a mask of
// the indices that fall outside it (shifted to row 0 so the lookup stays legal).
struct ShardIndices {
  at::Tensor local;
  at::Tensor outside;
};

ShardIndices shard_indices(const at::Tensor& indices, int64_t offset, int64_t rows) {
  at::Tensor shifted = indices.to(at::kLong).sub(offset);
  at::Tensor outside = shifted.lt(0).logical_or(shifted.ge(rows));
  return {shifted.masked_fill(outside, 0), outside};
}

}  // namespace

// Row-sharded table: rows outside this shard give zeros, so the sum over the
// shards is the full lookup (the rule marks the output Partial).
KernelResult embedding(const KernelCall& call) {
  const at::Tensor& weight = call.in[0];
  const at::Tensor& indices = call.in[1];
  int64_t offset = call.input_offset(0, 0);
  bool split = offset != 0 || (!call.context.input_full_shapes.empty() &&
                               !call.context.input_full_shapes[0].empty() &&
                               call.context.input_full_shapes[0][0] != weight.size(0));
  if (!split) return one(at::embedding(weight, indices));
  ShardIndices local = shard_indices(indices, offset, weight.size(0));
  at::Tensor out = at::embedding(weight, local.local);
  return one(out.masked_fill(local.outside.unsqueeze(-1), 0));
}

// Scatter-adds gradient rows into this shard's rows of the table gradient
// (output rows start at output offset 0; the local row count is the expected
// output's). padding_idx (a full-table row) gets no gradient. With
// scale_grad_by_freq the counts are those of the local indices.
KernelResult embedding_dense_backward(const KernelCall& call) {
  const at::Tensor& grad = call.in[0];
  int64_t rows = call.out[0].shape[0];
  int64_t width = grad.size(-1);
  at::Tensor flat_grad = grad.reshape({-1, width});
  at::Tensor flat_idx = call.in[1].reshape({-1}).to(at::kLong);
  int64_t padding_idx = call.attrs().get_int_or("padding_idx", -1);
  at::Tensor keep = at::ones_like(flat_idx, at::kBool);
  if (padding_idx >= 0) keep = flat_idx.ne(padding_idx);
  if (call.attrs().has("scale_grad_by_freq") && call.attrs().get_bool("scale_grad_by_freq")) {
    at::Tensor counts = at::bincount(flat_idx).index_select(0, flat_idx);
    flat_grad = flat_grad.div(counts.unsqueeze(1).to(flat_grad.scalar_type()));
  }
  ShardIndices local = shard_indices(flat_idx, call.output_offset(0, 0), rows);
  at::Tensor rows_kept = keep.logical_and(local.outside.logical_not()).nonzero().squeeze(1);
  at::Tensor out = at::zeros({rows, width}, grad.options());
  out.index_add_(0, local.local.index_select(0, rows_kept), flat_grad.index_select(0, rows_kept));
  return one(out);
}

KernelResult log_softmax(const KernelCall& call) {
  bool half_to_float = call.attrs().has("half_to_float") && call.attrs().get_bool("half_to_float");
  return one(at::_log_softmax(call.in[0], call.attrs().get_int("dim"), half_to_float));
}

KernelResult log_softmax_backward(const KernelCall& call) {
  return one(at::_log_softmax_backward_data(call.in[0], call.in[1], call.attrs().get_int("dim"),
                                            to_scalar_type(call.attrs().get_dtype("input_dtype"))));
}

// (grad_output, self, target, total_weight) -> grad_self.
KernelResult nll_loss_backward(const KernelCall& call) {
  return one(at::nll_loss_backward(call.in[0], call.in[1], call.in[2], /*weight=*/{},
                                   call.attrs().get_int("reduction"),
                                   call.attrs().get_int("ignore_index"), call.in[3]));
}

// (self, target) -> (loss, total_weight); reduction 0 none, 1 mean, 2 sum.
KernelResult nll_loss_forward(const KernelCall& call) {
  auto [loss, total_weight] =
      at::nll_loss_forward(call.in[0], call.in[1], /*weight=*/{}, call.attrs().get_int("reduction"),
                           call.attrs().get_int("ignore_index"));
  return Tensors{loss, total_weight};
}

}  // namespace autopar::kernels
