#include "ir/tensor_meta.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace autopar {

int64_t TensorMeta::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<int64_t> TensorMeta::strides() const {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = rank() - 2; i >= 0; --i) strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

std::optional<int64_t> checked_bytes(const TensorMeta& meta) {
  // Zero dims count as 1: a stride is the product of the dims after it, which
  // can overflow even when a zero dim makes numel() 0.
  int64_t product = dtype_size(meta.dtype);
  for (int64_t d : meta.shape) {
    if (d < 0 || __builtin_mul_overflow(product, std::max<int64_t>(d, 1), &product)) return std::nullopt;
  }
  return meta.bytes();
}

std::string shape_to_string(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

std::string to_string(const TensorMeta& meta) {
  return fmt::format("{}{}", dtype_name(meta.dtype), shape_to_string(meta.shape));
}

int64_t normalize_dim(int64_t dim, int64_t rank) {
  int64_t d = dim < 0 ? dim + rank : dim;
  return (d < 0 || d >= rank) ? -1 : d;
}

}  // namespace autopar
