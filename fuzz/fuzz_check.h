// Helpers shared by the fuzz targets (fuzz/*_fuzz.cc): the input as text, and
// property checks that abort, so libFuzzer (and the replay test) report a
// broken round trip or an empty error message as a crash with its input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string_view>

namespace autopar::fuzz {

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// what: the property that must hold; detail: e.g. the loader's message.
inline void require(bool holds, const char* what, std::string_view detail = {}) {
  if (holds) return;
  std::cerr << "fuzz property failed: " << what << "\n" << detail << std::endl;
  std::abort();
}

}  // namespace autopar::fuzz
