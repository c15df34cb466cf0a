// Convolution, batch norm, max pooling and hardtanh (relu6), with their
// backward ops, as libtorch calls. Sharded calls need no offsets: every rule
// of these ops (sharding/rules/cnn.cc) gives each device whole planes. Batch
// norm on a batch shard (the sync option) reduces its statistics across the
// devices through KernelContext::sync_sum, as torch.nn.SyncBatchNorm does.
// Outputs an output_mask turns off are empty [0] tensors (PyTorch: None).
#include <ATen/ops/convolution.h>
#include <ATen/ops/convolution_backward.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/hardtanh.h>
#include <ATen/ops/hardtanh_backward.h>
#include <ATen/ops/max_pool2d_with_indices.h>
#include <ATen/ops/max_pool2d_with_indices_backward.h>
#include <ATen/ops/native_batch_norm.h>
#include <ATen/ops/native_batch_norm_backward.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/rsqrt.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/sum.h>

#include "runtime/kernels/kernel_call.h"

namespace autopar::kernels {
namespace {

// The groups of this device's call: a sharded depthwise conv holds fewer
// groups than the full one. Input channels / weight's channels per group.
int64_t local_groups(const at::Tensor& input, const at::Tensor& weight) {
  return input.size(1) / weight.size(1);
}

// Every dim but the channels (dim 1): what batch norm reduces over.
std::vector<int64_t> reduced_dims(const at::Tensor& x) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d != 1) dims.push_back(d);
  }
  return dims;
}

// A [C] statistic shaped to broadcast over x ([1, C, 1, ...]).
at::Tensor per_channel(const at::Tensor& stat, const at::Tensor& x) {
  std::vector<int64_t> shape(static_cast<size_t>(x.dim()), 1);
  shape[1] = stat.size(0);
  return stat.reshape(shape);
}

// Values per channel over every device of the sync group.
double synced_count(const KernelCall& call, const at::Tensor& x) {
  return static_cast<double>(x.numel() / x.size(1)) * static_cast<double>(call.context.sync_devices);
}

// Training batch norm with statistics over every device's shard: the mean
// from an all-reduced sum, then the (biased) variance from an all-reduced
// centred sum of squares.
KernelResult synced_batch_norm(const KernelCall& call) {
  const at::Tensor& x = call.in[0];
  const Attrs& a = call.attrs();
  double count = synced_count(call, x);
  at::Tensor sum = x.sum(reduced_dims(x));
  if (Status s = call.context.sync_sum(sum); !s) return s.error();
  at::Tensor mean = sum / count;
  at::Tensor centred = x - per_channel(mean, x);
  at::Tensor squares = (centred * centred).sum(reduced_dims(x));
  if (Status s = call.context.sync_sum(squares); !s) return s.error();
  at::Tensor invstd = (squares / count + a.get_scalar("eps")).rsqrt();
  at::Tensor out = centred * per_channel(invstd, x) * per_channel(call.in[1], x) +
                   per_channel(call.in[2], x);
  return Tensors{out, mean, invstd};
}

// Its backward: grad_input needs the whole batch's sums of grad_out and of
// grad_out * x_hat (one [2, C] all-reduce), which are the bias and weight
// gradients.
KernelResult synced_batch_norm_backward(const KernelCall& call) {
  const at::Tensor& g = call.in[0];
  const at::Tensor& x = call.in[1];
  bool stats = call.in.size() == 7;
  const at::Tensor& mean = call.in[stats ? 5 : 3];
  const at::Tensor& invstd = call.in[stats ? 6 : 4];
  at::Tensor x_hat = (x - per_channel(mean, x)) * per_channel(invstd, x);
  at::Tensor sums = at::stack({g.sum(reduced_dims(x)), (g * x_hat).sum(reduced_dims(x))});
  if (Status s = call.context.sync_sum(sums); !s) return s.error();
  double count = synced_count(call, x);
  at::Tensor sum_g = sums[0];
  at::Tensor sum_gx = sums[1];
  std::array<bool, 3> mask = output_mask(call.attrs());
  at::Tensor grad_input;
  if (mask[0]) {
    grad_input = per_channel(call.in[2] * invstd, x) *
                 (g - per_channel(sum_g / count, x) - x_hat * per_channel(sum_gx / count, x));
  }
  return masked_outputs({grad_input, mask[1] ? sum_gx : at::Tensor(), mask[2] ? sum_g : at::Tensor()},
                        g);
}

}  // namespace

KernelResult convolution(const KernelCall& call) {
  const Attrs& a = call.attrs();
  return one(at::convolution(call.in[0], call.in[1], optional_input(call, 2), a.get_ints("stride"),
                             a.get_ints("padding"), a.get_ints("dilation"),
                             bool_or(a, "transposed", false), ints_or(a, "output_padding", {0}),
                             local_groups(call.in[0], call.in[1])));
}

// The bias gradient's size is the grad_output's channels (the output shape
// says [0] when masked out).
KernelResult convolution_backward(const KernelCall& call) {
  const Attrs& a = call.attrs();
  std::array<bool, 3> mask = output_mask(a);
  std::vector<int64_t> bias_sizes{call.in[0].size(1)};
  return masked_outputs(
      at::convolution_backward(call.in[0], call.in[1], call.in[2], at::IntArrayRef(bias_sizes),
                               a.get_ints("stride"),
                               a.get_ints("padding"), a.get_ints("dilation"),
                               bool_or(a, "transposed", false), ints_or(a, "output_padding", {0}),
                               local_groups(call.in[1], call.in[2]), mask),
      call.in[0]);
}

KernelResult hardtanh(const KernelCall& call) {
  return one(at::hardtanh(call.in[0], scalar_attr(call.attrs(), "min_val", -1.0),
                          scalar_attr(call.attrs(), "max_val", 1.0)));
}

KernelResult hardtanh_backward(const KernelCall& call) {
  return one(at::hardtanh_backward(call.in[0], call.in[1],
                                   scalar_attr(call.attrs(), "min_val", -1.0),
                                   scalar_attr(call.attrs(), "max_val", 1.0)));
}

KernelResult max_pool2d_with_indices(const KernelCall& call) {
  const Attrs& a = call.attrs();
  std::vector<int64_t> kernel = a.get_ints("kernel_size");
  auto [out, indices] = at::max_pool2d_with_indices(
      call.in[0], kernel, ints_or(a, "stride", kernel), ints_or(a, "padding", {0}),
      ints_or(a, "dilation", {1}), bool_or(a, "ceil_mode", false));
  return Tensors{out, indices};
}

// (grad_output, input, indices) -> grad_input.
KernelResult max_pool2d_with_indices_backward(const KernelCall& call) {
  const Attrs& a = call.attrs();
  std::vector<int64_t> kernel = a.get_ints("kernel_size");
  return one(at::max_pool2d_with_indices_backward(
      call.in[0], call.in[1], kernel, ints_or(a, "stride", kernel), ints_or(a, "padding", {0}),
      ints_or(a, "dilation", {1}), bool_or(a, "ceil_mode", false), call.in[2]));
}

// (input, weight, bias, [running_mean, running_var]). Training mode
// normalizes with the batch statistics and ignores the running ones; they are
// not passed, so libtorch does not update the buffers in place (the graph has
// no output for the update; inputs stay unchanged). Eval mode returns empty
// save_mean / save_invstd.
KernelResult native_batch_norm(const KernelCall& call) {
  const Attrs& a = call.attrs();
  bool training = a.get_bool("training");
  if (training && call.context.sync_sum) return synced_batch_norm(call);
  auto [out, mean, invstd] = at::native_batch_norm(
      call.in[0], call.in[1], call.in[2], training ? c10::nullopt : optional_input(call, 3),
      training ? c10::nullopt : optional_input(call, 4), training, a.get_scalar("momentum"),
      a.get_scalar("eps"));
  if (!training) {
    mean = at::empty({0}, out.options());
    invstd = at::empty({0}, out.options());
  }
  return Tensors{out, mean, invstd};
}

// (grad_out, input, weight, [running_mean, running_var,] save_mean, save_invstd).
KernelResult native_batch_norm_backward(const KernelCall& call) {
  const Attrs& a = call.attrs();
  if (a.get_bool("train") && call.context.sync_sum) return synced_batch_norm_backward(call);
  bool stats = call.in.size() == 7;
  c10::optional<at::Tensor> running_mean, running_var;
  if (stats) running_mean = call.in[3], running_var = call.in[4];
  const at::Tensor& save_mean = call.in[stats ? 5 : 3];
  const at::Tensor& save_invstd = call.in[stats ? 6 : 4];
  return masked_outputs(
      at::native_batch_norm_backward(call.in[0], call.in[1], call.in[2], running_mean, running_var,
                                     save_mean, save_invstd, a.get_bool("train"),
                                     a.get_scalar("eps"), output_mask(a)),
      call.in[0]);
}

}  // namespace autopar::kernels
