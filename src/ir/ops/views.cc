// View and layout ops. Views move no data (zero bytes); clone copies.
#include <algorithm>

#include "ir/ops/rules.h"

namespace autopar::rules {

Outputs clone_shape(const OpCall& call) { return one(call.in(0)); }

double clone_bytes(const OpCall& call, Metas outputs) { return in_bytes(call) + out_bytes(outputs); }

Outputs t_shape(const OpCall& call) {
  const TensorMeta& x = call.in(0);
  if (x.rank() > 2) return make_error("t expects rank <= 2, got {}", to_string(x));
  TensorMeta out = x;
  std::reverse(out.shape.begin(), out.shape.end());
  return one(out);
}

Outputs transpose_shape(const OpCall& call) {
  const TensorMeta& x = call.in(0);
  int64_t d0 = normalize_dim(call.attrs.get_int("dim0"), x.rank());
  int64_t d1 = normalize_dim(call.attrs.get_int("dim1"), x.rank());
  if (d0 < 0 || d1 < 0) {
    return make_error("transpose dims ({}, {}) are out of range for {}", call.attrs.get_int("dim0"),
                      call.attrs.get_int("dim1"), to_string(x));
  }
  TensorMeta out = x;
  std::swap(out.shape[static_cast<size_t>(d0)], out.shape[static_cast<size_t>(d1)]);
  return one(out);
}

Outputs unsqueeze_shape(const OpCall& call) {
  const TensorMeta& x = call.in(0);
  int64_t dim = normalize_dim(call.attrs.get_int("dim"), x.rank() + 1);
  if (dim < 0) {
    return make_error("unsqueeze dim {} is out of range for {}", call.attrs.get_int("dim"),
                      to_string(x));
  }
  TensorMeta out = x;
  out.shape.insert(out.shape.begin() + dim, 1);
  return one(out);
}

Outputs view_shape(const OpCall& call) {
  const TensorMeta& x = call.in(0);
  const std::vector<int64_t>& size = call.attrs.get_ints("size");
  Shape shape(size.begin(), size.end());
  int64_t known = 1;
  int inferred = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (inferred >= 0) return make_error("view size {} has more than one -1", shape_to_string(shape));
      inferred = static_cast<int>(i);
    } else if (shape[i] < 0) {
      return make_error("view size {} has a negative dim", shape_to_string(shape));
    } else if (__builtin_mul_overflow(known, shape[i], &known)) {  // sizes come from files
      return make_error("view size {} has more elements than int64 can count", shape_to_string(shape));
    }
  }
  if (inferred >= 0) {
    if (known == 0 || x.numel() % known != 0) {
      return make_error("view size {} cannot hold the {} elements of {}", shape_to_string(shape),
                        x.numel(), to_string(x));
    }
    shape[static_cast<size_t>(inferred)] = x.numel() / known;
  } else if (known != x.numel()) {
    return make_error("view size {} has {} elements but {} has {}", shape_to_string(shape), known,
                      to_string(x), x.numel());
  }
  return one({shape, x.dtype});
}

Outputs expand_shape(const OpCall& call) {
  const TensorMeta& x = call.in(0);
  const std::vector<int64_t>& size = call.attrs.get_ints("size");
  if (size.size() < x.shape.size()) {
    return make_error("expand size {} has fewer dims than {}", shape_to_string(size), to_string(x));
  }
  size_t lead = size.size() - x.shape.size();
  Shape shape(size.begin(), size.end());
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t have = i < lead ? -2 : x.shape[i - lead];
    if (shape[i] == -1) {
      if (have == -2) return make_error("expand size {} has -1 in a new leading dim", shape_to_string(size));
      shape[i] = have;
    } else if (have != -2 && have != 1 && have != shape[i]) {
      return make_error("expand cannot grow dim {} of {} from {} to {}", i - lead, to_string(x),
                        have, shape[i]);
    }
  }
  return one({shape, x.dtype});
}

}  // namespace autopar::rules
