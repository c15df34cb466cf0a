// PyTorch import: shape ops of the model zoo: stack (as cat, along a new
// dim), squeeze (views), constant_pad_nd and roll (copies that move data
// along some dims). They compute nothing; stack, padding and roll pay the
// bytes they copy.
#include <algorithm>

#include "ir/ops/rules.h"

namespace autopar::rules {

// (tensors...) with dim in [-(rank + 1), rank]: the inputs (one shape and
// dtype) stacked along a new dim of size the input count.
Outputs stack_shape(const OpCall& call) {
  const TensorMeta& first = call.in(0);
  int64_t dim = call.attrs.get_int_or("dim", 0);
  int64_t at = normalize_dim(dim, first.rank() + 1);
  if (at < 0) return make_error("stack dim {} is out of range for {}", dim, to_string(first));
  for (int i = 1; i < call.num_inputs(); ++i) {
    if (call.in(i) != first) {
      return make_error("stack input {} {} differs from input 0 {}", i, to_string(call.in(i)),
                        to_string(first));
    }
  }
  TensorMeta out = first;
  out.shape.insert(out.shape.begin() + at, call.num_inputs());
  return one(out);
}

// squeeze.dim: drops the dim if it has size 1 (else no change).
Outputs squeeze_dim_shape(const OpCall& call) {
  const TensorMeta& x = call.in(0);
  int64_t dim = call.attrs.get_int("dim");
  int64_t at = normalize_dim(dim, std::max<int64_t>(x.rank(), 1));
  if (at < 0) return make_error("squeeze dim {} is out of range for {}", dim, to_string(x));
  TensorMeta out = x;
  if (x.rank() > 0 && x.shape[static_cast<size_t>(at)] == 1) out.shape.erase(out.shape.begin() + at);
  return one(out);
}

// squeeze.default: drops every size-1 dim.
Outputs squeeze_shape(const OpCall& call) {
  TensorMeta out = call.in(0);
  std::erase(out.shape, 1);
  return one(out);
}

// pad lists (left, right) pairs from the last dim backwards; negative pads crop.
Outputs constant_pad_nd_shape(const OpCall& call) {
  const TensorMeta& x = call.in(0);
  const std::vector<int64_t>& pad = call.attrs.get_ints("pad");
  if (pad.size() % 2 != 0 || static_cast<int64_t>(pad.size()) > 2 * x.rank()) {
    return make_error("constant_pad_nd pad {} must be (left, right) pairs for at most the {} dims "
                      "of {}",
                      shape_to_string(pad), x.rank(), to_string(x));
  }
  TensorMeta out = x;
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    int64_t& size = out.shape[out.shape.size() - 1 - i];
    if (__builtin_add_overflow(size, pad[2 * i], &size) ||
        __builtin_add_overflow(size, pad[2 * i + 1], &size)) {
      return make_error("constant_pad_nd pad {} makes a dim of {} overflow int64", shape_to_string(pad),
                        to_string(x));
    }
    if (size < 0) {
      return make_error("constant_pad_nd pad {} makes a dim of {} negative", shape_to_string(pad),
                        to_string(x));
    }
  }
  return one(out);
}

// shifts per dim of dims; without dims the flattened tensor rolls by one shift.
Outputs roll_shape(const OpCall& call) {
  const TensorMeta& x = call.in(0);
  const std::vector<int64_t>& shifts = call.attrs.get_ints("shifts");
  std::vector<int64_t> dims = call.attrs.get_ints_or("dims", {});
  if (dims.empty() ? shifts.size() != 1 : shifts.size() != dims.size()) {
    return make_error("roll shifts {} must have one value per dim of {} (or one without dims)",
                      shape_to_string(shifts), shape_to_string(dims));
  }
  for (int64_t d : dims) {
    if (normalize_dim(d, x.rank()) < 0) {
      return make_error("roll dim {} is out of range for {}", d, to_string(x));
    }
  }
  return one(x);
}

}  // namespace autopar::rules
