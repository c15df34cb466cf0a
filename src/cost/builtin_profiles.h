// The hardware profiles compiled into the binary: the text of each
// profiles/<name>.json, embedded by src/cost/CMakeLists.txt. Sorted by name.
#pragma once

#include <span>
#include <string_view>

namespace autopar::detail {

struct BuiltinProfileText {
  std::string_view name;  // file name without ".json"
  std::string_view json;
};

std::span<const BuiltinProfileText> builtin_profile_texts();

}  // namespace autopar::detail
