#include <algorithm>

#include "ir/ops/rules.h"

namespace autopar::rules {

Outputs one(TensorMeta meta) { return std::vector<TensorMeta>{std::move(meta)}; }

Expected<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      return make_error("shapes {} and {} do not broadcast (dim {}: {} vs {})",
                        shape_to_string(a), shape_to_string(b), i, da, db);
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Status require_same_dtype(const TensorMeta& a, const TensorMeta& b, std::string_view what) {
  if (a.dtype != b.dtype) {
    return make_error("{} must have one dtype, got {} and {}", what, dtype_name(a.dtype),
                      dtype_name(b.dtype));
  }
  return ok_status();
}

Status require_rank(const TensorMeta& t, int64_t rank, std::string_view what) {
  if (t.rank() != rank) {
    return make_error("{} must have rank {}, got {}", what, rank, to_string(t));
  }
  return ok_status();
}

Status require_channel_vector(const TensorMeta& t, int64_t channels, std::string_view what) {
  if (t.rank() != 1 || t.shape[0] != channels) {
    return make_error("{} must be [{}] (one value per channel), got {}", what, channels,
                      to_string(t));
  }
  return ok_status();
}

double out_numel(Metas outputs) {
  double n = 0;
  for (const TensorMeta& m : outputs) n += static_cast<double>(m.numel());
  return n;
}

double in_bytes(const OpCall& call) {
  double bytes = 0;
  for (int i = 0; i < call.num_inputs(); ++i) bytes += static_cast<double>(call.in(i).bytes());
  return bytes;
}

std::vector<bool> output_mask(const Attrs& attrs) {
  std::vector<bool> mask(3, true);
  if (!attrs.has("output_mask")) return mask;
  const std::vector<int64_t>& v = attrs.get_ints("output_mask");
  for (size_t i = 0; i < mask.size() && i < v.size(); ++i) mask[i] = v[i] != 0;
  return mask;
}

TensorMeta masked(bool on, TensorMeta meta) {
  if (!on) meta.shape = {0};
  return meta;
}

double out_bytes(Metas outputs) {
  double bytes = 0;
  for (const TensorMeta& m : outputs) bytes += static_cast<double>(m.bytes());
  return bytes;
}

}  // namespace autopar::rules
