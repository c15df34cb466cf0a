// Node attributes: the non-tensor arguments of an aten op (sizes, dims, flags,
// scalars, dtypes), stored by name in the order the op's schema declares them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "ir/dtype.h"

namespace autopar {

// aten's `reduction` attribute of the losses (at::Reduction).
inline constexpr int64_t kReductionNone = 0;
inline constexpr int64_t kReductionMean = 1;
inline constexpr int64_t kReductionSum = 2;

enum class AttrType : uint8_t { kInt, kScalar, kBool, kInts, kDType, kString, kFloats };

// kScalar holds an int or a float, as a Python number argument does. Strings
// (gelu's approximate="tanh") and float lists (upsample's scale_factors) occur
// in aten schemas that only generic ops (op_def.h) use today.
using AttrValue =
    std::variant<int64_t, double, bool, std::vector<int64_t>, DType, std::string, std::vector<double>>;

struct Attr {
  std::string name;
  AttrValue value;
  bool operator==(const Attr&) const = default;
};

class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<Attr> attrs) : attrs_(attrs) {}

  void set(std::string_view name, AttrValue value);
  const AttrValue* find(std::string_view name) const;
  bool has(std::string_view name) const { return find(name) != nullptr; }

  // Typed getters. The verifier has checked types against the op schema, so a
  // missing or mistyped attribute here is a programming error (asserted).
  int64_t get_int(std::string_view name) const;
  double get_scalar(std::string_view name) const;  // int or float
  bool get_bool(std::string_view name) const;
  const std::vector<int64_t>& get_ints(std::string_view name) const;
  DType get_dtype(std::string_view name) const;
  const std::string& get_string(std::string_view name) const;
  // An optional attribute's value, or the schema's default when absent.
  int64_t get_int_or(std::string_view name, int64_t fallback) const {
    return has(name) ? get_int(name) : fallback;
  }
  std::vector<int64_t> get_ints_or(std::string_view name, std::vector<int64_t> fallback) const {
    return has(name) ? get_ints(name) : fallback;
  }
  const std::vector<double>& get_floats(std::string_view name) const;

  const std::vector<Attr>& items() const { return attrs_; }
  bool operator==(const Attrs&) const = default;

 private:
  std::vector<Attr> attrs_;
};

std::string_view attr_type_name(AttrType type);
bool attr_matches(const AttrValue& value, AttrType type);
// Printed form: 3, 0.5, True, [2, -1], f32, 'tanh', [2.0, 2.0].
std::string attr_value_to_string(const AttrValue& value);

}  // namespace autopar
