// Helpers shared by the JSON writer (json_io.cc) and reader (json_reader.cc);
// not part of the public API.
#pragma once

#include <string_view>
#include <vector>

namespace autopar {

inline constexpr std::string_view kGraphFormatName = "autopar.graph";
inline constexpr int kGraphFormatVersion = 1;

// Op names close to an unknown one ("aten.mm" -> aten.mm.default,
// aten.bmm.default), closest first, at most max_count.
std::vector<std::string_view> similar_op_names(std::string_view name, size_t max_count);

}  // namespace autopar
