// PyTorch import: transformer ops. Backward ops of select/slice build their
// output at the expected local size (input_sizes is the full size; the rule
// never shards the selected/sliced dim, so the index and range stay global).
#include <ATen/ops/_softmax.h>
#include <ATen/ops/_softmax_backward_data.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/gelu_backward.h>
#include <ATen/ops/native_layer_norm.h>
#include <ATen/ops/native_layer_norm_backward.h>
#include <ATen/ops/zeros.h>

#include "runtime/kernels/kernel_call.h"

namespace autopar::kernels {

KernelResult cat(const KernelCall& call) {
  std::vector<at::Tensor> parts(call.in.begin(), call.in.end());
  return one(at::cat(parts, call.attrs().get_int_or("dim", 0)));
}

namespace {

// libtorch 1.13 takes c10::string_view.
c10::string_view approximate(const KernelCall& call) {
  if (!call.attrs().has("approximate")) return "none";
  const std::string& form = call.attrs().get_string("approximate");
  return c10::string_view(form.data(), form.size());
}

}  // namespace

KernelResult gelu(const KernelCall& call) { return one(at::gelu(call.in[0], approximate(call))); }

KernelResult gelu_backward(const KernelCall& call) {
  return one(at::gelu_backward(call.in[0], call.in[1], approximate(call)));
}

KernelResult native_layer_norm(const KernelCall& call) {
  auto [out, mean, rstd] =
      at::native_layer_norm(call.in[0], call.attrs().get_ints("normalized_shape"),
                            optional_input(call, 1), optional_input(call, 2),
                            call.attrs().get_scalar("eps"));
  return Tensors{out, mean, rstd};
}

KernelResult native_layer_norm_backward(const KernelCall& call) {
  auto [gx, gw, gb] = at::native_layer_norm_backward(
      call.in[0].contiguous(), call.in[1], call.attrs().get_ints("normalized_shape"), call.in[2],
      call.in[3], optional_input(call, 4), optional_input(call, 5), {true, true, true});
  // Without weight/bias aten leaves their gradients undefined: give zeros of the expected size.
  if (!gw.defined()) gw = at::zeros(call.out_shape(1), call.in[0].options());
  if (!gb.defined()) gb = at::zeros(call.out_shape(2), call.in[0].options());
  return Tensors{gx, gw, gb};
}

KernelResult permute(const KernelCall& call) {
  return one(call.in[0].permute(call.attrs().get_ints("dims")));
}

KernelResult select_int(const KernelCall& call) {
  return one(call.in[0].select(call.attrs().get_int("dim"), call.attrs().get_int("index")));
}

KernelResult select_backward(const KernelCall& call) {
  at::Tensor out = at::zeros(call.out_shape(), call.in[0].options());
  out.select(call.attrs().get_int("dim"), call.attrs().get_int("index")).copy_(call.in[0]);
  return one(out);
}

KernelResult slice_tensor(const KernelCall& call) {
  const Attrs& a = call.attrs();
  int64_t dim = a.get_int_or("dim", 0);
  int64_t end = a.get_int_or("end", call.in[0].size(dim));
  return one(call.in[0].slice(dim, a.get_int_or("start", 0), end, a.get_int_or("step", 1)));
}

KernelResult slice_backward(const KernelCall& call) {
  const Attrs& a = call.attrs();
  at::Tensor out = at::zeros(call.out_shape(), call.in[0].options());
  out.slice(a.get_int("dim"), a.get_int("start"), a.get_int("end"), a.get_int("step"))
      .copy_(call.in[0]);
  return one(out);
}

KernelResult softmax(const KernelCall& call) {
  return one(at::_softmax(call.in[0], call.attrs().get_int("dim"), false));
}

KernelResult softmax_backward(const KernelCall& call) {
  return one(at::_softmax_backward_data(call.in[0], call.in[1], call.attrs().get_int("dim"),
                                        to_scalar_type(call.attrs().get_dtype("input_dtype"))));
}

}  // namespace autopar::kernels
