// Reductions over a list of dims (mean.dim, sum.dim_IntList) and over all
// dims (mean.default, sum.default).
#include <algorithm>

#include "ir/ops/rules.h"

namespace autopar::rules {

Outputs reduce_dims_shape(const OpCall& call) {
  const TensorMeta& x = call.in(0);
  const std::vector<int64_t> dims = call.attrs.get_ints_or("dim", {});  // none: every dim
  bool keepdim = call.attrs.has("keepdim") && call.attrs.get_bool("keepdim");
  std::vector<bool> reduced(static_cast<size_t>(x.rank()), dims.empty());
  for (int64_t dim : dims) {
    int64_t d = normalize_dim(dim, x.rank());
    if (d < 0) return make_error("reduction dim {} is out of range for {}", dim, to_string(x));
    if (reduced[static_cast<size_t>(d)]) {
      return make_error("reduction dim {} appears twice for {}", dim, to_string(x));
    }
    reduced[static_cast<size_t>(d)] = true;
  }
  TensorMeta out{{}, x.dtype};
  for (size_t i = 0; i < reduced.size(); ++i) {
    if (!reduced[i]) {
      out.shape.push_back(x.shape[i]);
    } else if (keepdim) {
      out.shape.push_back(1);
    }
  }
  return one(out);
}

// A scalar in `dtype` when given; sum promotes integers (and bool) to i64 as aten does.
Outputs reduce_all_shape(const OpCall& call) {
  TensorMeta out{{}, call.in(0).dtype};
  if (call.attrs.has("dtype")) {
    out.dtype = call.attrs.get_dtype("dtype");
  } else if (!is_floating(out.dtype) && !is_complex(out.dtype)) {
    out.dtype = DType::i64;
  }
  return one(out);
}

double reduction_flops(const OpCall& call, Metas) { return static_cast<double>(call.in(0).numel()); }

}  // namespace autopar::rules
