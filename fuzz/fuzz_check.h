// Helpers shared by the fuzz targets (fuzz/*_fuzz.cc): the input as text, and
// property checks that abort, so libFuzzer (and the replay test) report a
// broken round trip or an empty error message as a crash with its input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
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

// The round trip every text loader with a writer must keep: `read` refuses
// `text` with a message, or accepts it, and what `write` makes of the result
// reads back and writes to the same bytes. `what`: the thing read, e.g. "graph".
template <typename Read, typename Write>
void require_round_trip(std::string_view text, Read read, Write write, const char* what) {
  auto first = read(text);
  if (!first) {
    require(!first.error().message.empty(), "a refused input has an error message", what);
    return;
  }
  std::string written = write(*first);
  auto again = read(written);
  require(again.ok(), "what the writer wrote reads back", again ? std::string_view(what) : again.error().message);
  require(write(*again) == written, "written, read back and written again gives the same bytes", what);
}

}  // namespace autopar::fuzz
