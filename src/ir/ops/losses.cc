// PyTorch import: the per-pixel negative log-likelihood of segmentation
// models (F.cross_entropy on [N, C, H, W] logits traces to log_softmax and
// nll_loss2d_forward / nll_loss2d_backward). Mirrors nll_loss_* (nn.cc) with
// two more dims and the optional per-class weight.
#include "ir/ops/rules.h"

namespace autopar::rules {
namespace {

// self [N, C, H, W], target [N, H, W] (integer), weight [C] when given.
Status check_loss_inputs(const TensorMeta& self, const TensorMeta& target, const TensorMeta* weight,
                         std::string_view what) {
  if (self.rank() != 4) return make_error("{} self must be [N, C, H, W], got {}", what, to_string(self));
  Shape pixels{self.shape[0], self.shape[2], self.shape[3]};
  if (target.shape != pixels || (target.dtype != DType::i64 && target.dtype != DType::i32)) {
    return make_error("{} target must be i64{}, got {}", what, shape_to_string(pixels),
                      to_string(target));
  }
  if (weight != nullptr && (weight->rank() != 1 || weight->shape[0] != self.shape[1])) {
    return make_error("{} weight must be [{}] (one per class), got {}", what, self.shape[1],
                      to_string(*weight));
  }
  return ok_status();
}

}  // namespace

// (self, target, weight?) -> (loss, total_weight): loss is [N, H, W] for
// reduction none, else a scalar; total_weight is a scalar (0 for none).
Outputs nll_loss2d_forward_shape(const OpCall& call) {
  const TensorMeta& self = call.in(0);
  const TensorMeta* weight = call.num_inputs() == 3 ? &call.in(2) : nullptr;
  if (Status s = check_loss_inputs(self, call.in(1), weight, "nll_loss2d_forward"); !s) {
    return s.error();
  }
  TensorMeta scalar{{}, self.dtype};
  if (call.attrs.get_int("reduction") == kReductionNone) {
    return std::vector<TensorMeta>{{call.in(1).shape, self.dtype}, scalar};
  }
  return std::vector<TensorMeta>{scalar, scalar};
}

// (grad_output, self, target, weight?, total_weight) -> grad_self.
Outputs nll_loss2d_backward_shape(const OpCall& call) {
  const TensorMeta& self = call.in(1);
  const TensorMeta* weight = call.num_inputs() == 5 ? &call.in(3) : nullptr;
  if (Status s = check_loss_inputs(self, call.in(2), weight, "nll_loss2d_backward"); !s) {
    return s.error();
  }
  bool none = call.attrs.get_int("reduction") == kReductionNone;
  const TensorMeta& grad = call.in(0);
  if (grad.shape != (none ? call.in(2).shape : Shape{}) || call.in(call.num_inputs() - 1).rank() != 0) {
    return make_error("nll_loss2d_backward grad_output {} must be {} and total_weight {} a scalar",
                      to_string(grad), none ? "the target's shape" : "a scalar",
                      to_string(call.in(call.num_inputs() - 1)));
  }
  return one(self);
}

// One pick (and weight multiply) per pixel: target's numel, input 1 of the
// forward and input 2 of the backward.
double nll_loss2d_flops(const OpCall& call, Metas) {
  const TensorMeta& target = call.in(0).rank() == 4 ? call.in(1) : call.in(2);
  return 2.0 * static_cast<double>(target.numel());
}

}  // namespace autopar::rules
