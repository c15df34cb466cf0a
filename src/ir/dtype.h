// Element types of tensors in the IR, with their byte sizes and printed names.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace autopar {

enum class DType : uint8_t { f32, bf16, f16, f64, i64, i32, boolean, c64 };

inline constexpr int kDTypeCount = 8;

// Bytes per element (c64 = two f32).
int64_t dtype_size(DType dtype);
// Printed form used by the text printer and JSON: "f32", "bf16", ..., "bool", "c64".
std::string_view dtype_name(DType dtype);
std::optional<DType> parse_dtype(std::string_view name);

bool is_floating(DType dtype);
bool is_complex(DType dtype);
// The real element type a complex type is made of (c64 -> f32); identity otherwise.
DType real_part_dtype(DType dtype);
// The complex type whose real view has this element type (f32 -> c64), if any.
std::optional<DType> complex_of(DType real);

}  // namespace autopar
