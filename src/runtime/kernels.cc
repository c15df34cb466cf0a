// Kernel dispatch: one function per op (kernels/*.cc, one family per file),
// output checks against the expected local metadata, libtorch errors as values.
#include "runtime/kernels.h"

#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>

#include "runtime/kernels/kernel_call.h"

namespace autopar {
namespace kernels {

// No default: -Wswitch (an error here) flags an op added without a case.
KernelFn kernel_for(OpId op) {
  switch (op) {
    case OpId::kPlaceholder: return nullptr;  // values come from init.h / the executor
    case OpId::kGetItem: return nullptr;      // the executor picks a producer output
    case OpId::kGeneric: return generic;
    case OpId::kAddmm: return addmm;
    case OpId::kBaddbmm: return baddbmm;
    case OpId::kBmm: return bmm;
    case OpId::kMm: return mm;
    case OpId::kClone: return clone;
    case OpId::kExpand: return expand;
    case OpId::kT: return t;
    case OpId::kTranspose: return transpose;
    case OpId::kUnsafeView: return view;
    case OpId::kUnsqueeze: return unsqueeze;
    case OpId::kView: return view;
    case OpId::kConj: return conj;
    case OpId::kViewAsComplex: return view_as_complex;
    case OpId::kViewAsReal: return view_as_real;
    case OpId::kAddScalar: return add_scalar;
    case OpId::kAddTensor: return add_tensor;
    case OpId::kClamp: return clamp;
    case OpId::kDivScalar: return div_scalar;
    case OpId::kDivTensor: return div_tensor;
    case OpId::kEqScalar: return eq_scalar;
    case OpId::kFillScalar: return fill_scalar;
    case OpId::kMaskedFillScalar: return masked_fill;
    case OpId::kMulScalar: return mul_scalar;
    case OpId::kMulTensor: return mul_tensor;
    case OpId::kNeScalar: return ne_scalar;
    case OpId::kOnesLike: return ones_like;
    case OpId::kPowTensorScalar: return pow_tensor_scalar;
    case OpId::kRelu: return relu;
    case OpId::kRsqrt: return rsqrt;
    case OpId::kSilu: return silu;
    case OpId::kSiluBackward: return silu_backward;
    case OpId::kSubTensor: return sub_tensor;
    case OpId::kThresholdBackward: return threshold_backward;
    case OpId::kToCopy: return to_copy;
    case OpId::kWhereSelf: return where_self;
    case OpId::kZerosLike: return zeros_like;
    case OpId::kMean: return mean;
    case OpId::kMeanDim: return mean_dim;
    case OpId::kSum: return sum;
    case OpId::kSumDimIntList: return sum_dim;
    case OpId::kEmbedding: return embedding;
    case OpId::kEmbeddingDenseBackward: return embedding_dense_backward;
    case OpId::kLogSoftmax: return log_softmax;
    case OpId::kLogSoftmaxBackwardData: return log_softmax_backward;
    case OpId::kNllLossBackward: return nll_loss_backward;
    case OpId::kNllLossForward: return nll_loss_forward;
    case OpId::kSdpaFlashCpu: return sdpa_flash_cpu;
    case OpId::kSdpaFlashCpuBackward: return sdpa_flash_cpu_backward;
    case OpId::kBernoulliP: return bernoulli_p;
    // PyTorch import: CNN ops
    case OpId::kConvolution: return convolution;
    case OpId::kConvolutionBackward: return convolution_backward;
    case OpId::kHardtanh: return hardtanh;
    case OpId::kHardtanhBackward: return hardtanh_backward;
    case OpId::kMaxPool2dWithIndices: return max_pool2d_with_indices;
    case OpId::kMaxPool2dWithIndicesBackward: return max_pool2d_with_indices_backward;
    case OpId::kNativeBatchNorm: return native_batch_norm;
    case OpId::kNativeBatchNormBackward: return native_batch_norm_backward;
    // PyTorch import: transformer ops
    case OpId::kCat: return cat;
    case OpId::kGelu: return gelu;
    case OpId::kGeluBackward: return gelu_backward;
    case OpId::kNativeLayerNorm: return native_layer_norm;
    case OpId::kNativeLayerNormBackward: return native_layer_norm_backward;
    case OpId::kPermute: return permute;
    case OpId::kSelectBackward: return select_backward;
    case OpId::kSelectInt: return select_int;
    case OpId::kSliceBackward: return slice_backward;
    case OpId::kSliceTensor: return slice_tensor;
    case OpId::kSoftmax: return softmax;
    case OpId::kSoftmaxBackwardData: return softmax_backward;
    // PyTorch import: model-zoo activations
    case OpId::kHardsigmoid: return hardsigmoid;
    case OpId::kHardsigmoidBackward: return hardsigmoid_backward;
    case OpId::kHardswish: return hardswish;
    case OpId::kHardswishBackward: return hardswish_backward;
    case OpId::kSigmoid: return sigmoid;
    case OpId::kSigmoidBackward: return sigmoid_backward;
    case OpId::kTanh: return tanh;
    case OpId::kTanhBackward: return tanh_backward;
    // PyTorch import: pooling and upsampling
    case OpId::kAdaptiveAvgPool2d: return adaptive_avg_pool2d;
    case OpId::kAdaptiveAvgPool2dBackward: return adaptive_avg_pool2d_backward;
    case OpId::kAvgPool2d: return avg_pool2d;
    case OpId::kAvgPool2dBackward: return avg_pool2d_backward;
    case OpId::kUpsampleBilinear2d: return upsample_bilinear2d;
    case OpId::kUpsampleBilinear2dBackward: return upsample_bilinear2d_backward;
    case OpId::kUpsampleNearest2d: return upsample_nearest2d;
    case OpId::kUpsampleNearest2dBackward: return upsample_nearest2d_backward;
    // PyTorch import: group norm
    case OpId::kNativeGroupNorm: return native_group_norm;
    case OpId::kNativeGroupNormBackward: return native_group_norm_backward;
    // PyTorch import: shape ops
    case OpId::kConstantPadNd: return constant_pad_nd;
    case OpId::kRoll: return roll;
    case OpId::kSqueeze: return view;
    case OpId::kSqueezeDim: return view;
    case OpId::kStack: return stack;
    // PyTorch import: per-pixel loss
    case OpId::kNllLoss2dBackward: return nll_loss2d_backward;
    case OpId::kNllLoss2dForward: return nll_loss2d_forward;
    case OpId::kCount: return nullptr;
  }
  return nullptr;
}

}  // namespace kernels

namespace {

using namespace kernels;

std::string tensor_string(const at::Tensor& t) {
  Expected<DType> dtype = from_scalar_type(t.scalar_type());
  Shape shape(t.sizes().begin(), t.sizes().end());
  if (!dtype) return std::string(c10::toString(t.scalar_type())) + shape_to_string(shape);
  return to_string(TensorMeta{shape, *dtype});
}

Status check_outputs(const Node& node, const Tensors& got, std::span<const TensorMeta> want) {
  if (got.size() != want.size()) {
    return make_error("node {} ({}): kernel gave {} outputs, expected {}", node.name,
                      node_op_name(node), got.size(), want.size());
  }
  for (size_t i = 0; i < got.size(); ++i) {
    const at::Tensor& t = got[i];
    bool same = t.defined() && t.scalar_type() == to_scalar_type(want[i].dtype) &&
                t.sizes() == at::IntArrayRef(want[i].shape);
    if (!same) {
      return make_error("node {} ({}): output {} is {}, expected {}", node.name, node_op_name(node),
                        i, t.defined() ? tensor_string(t) : "undefined", to_string(want[i]));
    }
  }
  return ok_status();
}

}  // namespace

namespace kernels {

int64_t KernelCall::input_offset(size_t i, size_t d) const {
  if (i >= context.input_offsets.size() || d >= context.input_offsets[i].size()) return 0;
  return context.input_offsets[i][d];
}

int64_t KernelCall::output_offset(size_t o, size_t d) const {
  if (o >= context.output_offsets.size() || d >= context.output_offsets[o].size()) return 0;
  return context.output_offsets[o][d];
}

at::Scalar scalar_attr(const Attrs& attrs, std::string_view name, double fallback) {
  const AttrValue* value = attrs.find(name);
  if (value == nullptr) return at::Scalar(fallback);
  if (const int64_t* i = std::get_if<int64_t>(value)) return at::Scalar(*i);
  return at::Scalar(attrs.get_scalar(name));
}

bool bool_or(const Attrs& attrs, std::string_view name, bool fallback) {
  return attrs.has(name) ? attrs.get_bool(name) : fallback;
}

std::vector<int64_t> ints_or(const Attrs& attrs, std::string_view name,
                             std::vector<int64_t> fallback) {
  if (!attrs.has(name) || attrs.get_ints(name).empty()) return fallback;
  return attrs.get_ints(name);
}

c10::optional<at::Tensor> optional_input(const KernelCall& call, size_t i) {
  if (i >= call.in.size()) return c10::nullopt;
  return call.in[i];
}

std::array<bool, 3> output_mask(const Attrs& attrs) {
  std::array<bool, 3> mask{true, true, true};
  if (!attrs.has("output_mask")) return mask;
  const std::vector<int64_t>& v = attrs.get_ints("output_mask");
  for (size_t i = 0; i < mask.size() && i < v.size(); ++i) mask[i] = v[i] != 0;
  return mask;
}

Tensors masked_outputs(std::tuple<at::Tensor, at::Tensor, at::Tensor> grads, const at::Tensor& like) {
  auto or_empty = [&](const at::Tensor& t) { return t.defined() ? t : at::empty({0}, like.options()); };
  auto& [a, b, c] = grads;
  return Tensors{or_empty(a), or_empty(b), or_empty(c)};
}

}  // namespace kernels

Expected<std::vector<at::Tensor>> run_kernel(const Node& node, std::span<const at::Tensor> inputs,
                                             std::span<const TensorMeta> local_outputs,
                                             const KernelContext& context) {
  KernelFn fn = kernel_for(node.op);
  if (fn == nullptr) {
    return make_error(
        "node {} ({}) has no kernel: placeholders and getitem are run by the executor", node.name,
        node_op_name(node));
  }
  if (inputs.size() != node.inputs.size()) {
    return make_error("node {} ({}) got {} input tensors, expected {}", node.name, node_op_name(node),
                      inputs.size(), node.inputs.size());
  }
  KernelCall call{node, inputs, local_outputs, context};
  try {
    KernelResult result = fn(call);
    if (!result) {
      return make_error_like(result.error(), "node {} ({}): {}", node.name, node_op_name(node), result.error().message);
    }
    if (Status s = check_outputs(node, *result, local_outputs); !s) return s.error();
    return result;
  } catch (const std::exception& e) {
    std::string inputs_text;
    for (const at::Tensor& t : inputs)
      inputs_text += (inputs_text.empty() ? "" : ", ") + tensor_string(t);
    return make_error("node {} ({}) on ({}): libtorch: {}", node.name, node_op_name(node),
                      inputs_text, std::string(e.what()).substr(0, 400));
  }
}

bool has_kernel(OpId op) { return kernel_for(op) != nullptr; }

at::ScalarType to_scalar_type(DType dtype) {
  switch (dtype) {
    case DType::f32: return at::kFloat;
    case DType::bf16: return at::kBFloat16;
    case DType::f16: return at::kHalf;
    case DType::f64: return at::kDouble;
    case DType::i64: return at::kLong;
    case DType::i32: return at::kInt;
    case DType::boolean: return at::kBool;
    case DType::c64: return at::kComplexFloat;
  }
  return at::kFloat;
}

Expected<DType> from_scalar_type(at::ScalarType type) {
  switch (type) {
    case at::kFloat: return DType::f32;
    case at::kBFloat16: return DType::bf16;
    case at::kHalf: return DType::f16;
    case at::kDouble: return DType::f64;
    case at::kLong: return DType::i64;
    case at::kInt: return DType::i32;
    case at::kBool: return DType::boolean;
    case at::kComplexFloat: return DType::c64;
    default: break;
  }
  return make_error("libtorch dtype {} has no IR dtype", c10::toString(type));
}

}  // namespace autopar
