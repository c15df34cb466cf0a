// Average pooling, adaptive average pooling and 2-D upsampling, with their
// backward ops, as libtorch calls. The rules (sharding/rules/pooling.cc) never
// shard the plane, so window and size arguments (all about H and W) hold for
// a shard; only upsampling's backward takes a full input_size, replaced by
// the expected local output.
#include <ATen/ops/_adaptive_avg_pool2d.h>
#include <ATen/ops/_adaptive_avg_pool2d_backward.h>
#include <ATen/ops/avg_pool2d.h>
#include <ATen/ops/avg_pool2d_backward.h>
#include <ATen/ops/upsample_bilinear2d.h>
#include <ATen/ops/upsample_bilinear2d_backward.h>
#include <ATen/ops/upsample_nearest2d.h>
#include <ATen/ops/upsample_nearest2d_backward.h>

#include "runtime/kernels/kernel_call.h"

namespace autopar::kernels {
namespace {

struct AvgPool {
  std::vector<int64_t> kernel, stride, padding;
  bool ceil_mode, count_include_pad;
  c10::optional<int64_t> divisor_override;
};

AvgPool avg_pool_args(const Attrs& a) {
  std::vector<int64_t> kernel = a.get_ints("kernel_size");
  c10::optional<int64_t> divisor;
  if (a.has("divisor_override")) divisor = a.get_int("divisor_override");
  return {kernel, ints_or(a, "stride", kernel), ints_or(a, "padding", {0}),
          bool_or(a, "ceil_mode", false), bool_or(a, "count_include_pad", true), divisor};
}

at::OptionalIntArrayRef output_size(const Attrs& a) {
  if (!a.has("output_size")) return c10::nullopt;
  return at::IntArrayRef(a.get_ints("output_size"));
}

c10::optional<at::ArrayRef<double>> scale_factors(const Attrs& a) {
  if (!a.has("scale_factors")) return c10::nullopt;
  return at::ArrayRef<double>(a.get_floats("scale_factors"));
}

}  // namespace

KernelResult avg_pool2d(const KernelCall& call) {
  AvgPool p = avg_pool_args(call.attrs());
  return one(at::avg_pool2d(call.in[0], p.kernel, p.stride, p.padding, p.ceil_mode,
                            p.count_include_pad, p.divisor_override));
}

KernelResult avg_pool2d_backward(const KernelCall& call) {
  AvgPool p = avg_pool_args(call.attrs());
  return one(at::avg_pool2d_backward(call.in[0], call.in[1], p.kernel, p.stride, p.padding,
                                     p.ceil_mode, p.count_include_pad, p.divisor_override));
}

KernelResult adaptive_avg_pool2d(const KernelCall& call) {
  return one(at::_adaptive_avg_pool2d(call.in[0], call.attrs().get_ints("output_size")));
}

KernelResult adaptive_avg_pool2d_backward(const KernelCall& call) {
  return one(at::_adaptive_avg_pool2d_backward(call.in[0], call.in[1]));
}

KernelResult upsample_nearest2d(const KernelCall& call) {
  return one(at::upsample_nearest2d(call.in[0], output_size(call.attrs()),
                                    scale_factors(call.attrs())));
}

KernelResult upsample_nearest2d_backward(const KernelCall& call) {
  return one(at::upsample_nearest2d_backward(call.in[0], output_size(call.attrs()),
                                             call.out_shape(), scale_factors(call.attrs())));
}

KernelResult upsample_bilinear2d(const KernelCall& call) {
  return one(at::upsample_bilinear2d(call.in[0], output_size(call.attrs()),
                                     call.attrs().get_bool("align_corners"),
                                     scale_factors(call.attrs())));
}

KernelResult upsample_bilinear2d_backward(const KernelCall& call) {
  return one(at::upsample_bilinear2d_backward(call.in[0], output_size(call.attrs()),
                                              call.out_shape(),
                                              call.attrs().get_bool("align_corners"),
                                              scale_factors(call.attrs())));
}

}  // namespace autopar::kernels
