// TensorMeta: what the IR knows about a tensor without its data — shape and
// element type. Strides are always contiguous (row-major); the IR has no
// non-contiguous tensors, so views that would be strided in eager PyTorch are
// modelled as producing contiguous results.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/dtype.h"

namespace autopar {

using Shape = std::vector<int64_t>;

struct TensorMeta {
  Shape shape;
  DType dtype = DType::f32;

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numel() const;
  int64_t bytes() const { return numel() * dtype_size(dtype); }
  std::vector<int64_t> strides() const;  // contiguous, in elements

  bool operator==(const TensorMeta&) const = default;
};

// meta.bytes() when numel(), bytes() and every stride fit int64, else nullopt.
// Readers of shapes from files check it, so nothing they accept overflows.
std::optional<int64_t> checked_bytes(const TensorMeta& meta);

// "f32[16384, 4096]"; a scalar prints as "f32[]".
std::string to_string(const TensorMeta& meta);
// "[16384, 4096]"
std::string shape_to_string(const Shape& shape);

// Wraps a possibly negative dim into [0, rank); returns -1 when out of range.
int64_t normalize_dim(int64_t dim, int64_t rank);

}  // namespace autopar
