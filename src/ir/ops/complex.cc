// Complex views. view_as_complex pairs a trailing dim of 2 into c64;
// view_as_real splits it back out. Both are views: no data moves.
#include "ir/ops/rules.h"

namespace autopar::rules {

Outputs conj_shape(const OpCall& call) {
  const TensorMeta& x = call.in(0);
  if (!is_complex(x.dtype)) return make_error("_conj expects a complex tensor, got {}", to_string(x));
  return one(x);
}

Outputs view_as_complex_shape(const OpCall& call) {
  const TensorMeta& x = call.in(0);
  std::optional<DType> complex = complex_of(x.dtype);
  if (!complex || x.rank() == 0 || x.shape.back() != 2) {
    return make_error("view_as_complex expects f32 with a trailing dim of 2, got {}", to_string(x));
  }
  TensorMeta out{x.shape, *complex};
  out.shape.pop_back();
  return one(out);
}

Outputs view_as_real_shape(const OpCall& call) {
  const TensorMeta& x = call.in(0);
  if (!is_complex(x.dtype)) {
    return make_error("view_as_real expects a complex tensor, got {}", to_string(x));
  }
  TensorMeta out{x.shape, real_part_dtype(x.dtype)};
  out.shape.push_back(2);
  return one(out);
}

}  // namespace autopar::rules
