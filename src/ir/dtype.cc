#include "ir/dtype.h"

#include <array>

namespace autopar {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  int64_t size;
};

// Indexed by DType; keep in enum order.
constexpr std::array<DTypeInfo, kDTypeCount> kDTypes = {{
    {DType::f32, "f32", 4},
    {DType::bf16, "bf16", 2},
    {DType::f16, "f16", 2},
    {DType::f64, "f64", 8},
    {DType::i64, "i64", 8},
    {DType::i32, "i32", 4},
    {DType::boolean, "bool", 1},
    {DType::c64, "c64", 8},
}};

constexpr bool table_in_enum_order() {
  for (int i = 0; i < kDTypeCount; ++i) {
    if (static_cast<int>(kDTypes[i].dtype) != i) return false;
  }
  return true;
}
static_assert(table_in_enum_order(), "kDTypes must be indexed by DType");

}  // namespace

int64_t dtype_size(DType dtype) { return kDTypes[static_cast<int>(dtype)].size; }

std::string_view dtype_name(DType dtype) { return kDTypes[static_cast<int>(dtype)].name; }

std::optional<DType> parse_dtype(std::string_view name) {
  for (const DTypeInfo& info : kDTypes) {
    if (info.name == name) return info.dtype;
  }
  return std::nullopt;
}

bool is_floating(DType dtype) {
  return dtype == DType::f32 || dtype == DType::bf16 || dtype == DType::f16 ||
         dtype == DType::f64;
}

bool is_complex(DType dtype) { return dtype == DType::c64; }

DType real_part_dtype(DType dtype) { return dtype == DType::c64 ? DType::f32 : dtype; }

std::optional<DType> complex_of(DType real) {
  if (real == DType::f32) return DType::c64;
  return std::nullopt;
}

}  // namespace autopar
