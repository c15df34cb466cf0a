// Fuzzes the JSON graph reader (ir/json_io.h read_graph_json). A graph it
// accepts must survive the canonical writer: written, read back and written
// again it gives the same bytes.
#include "fuzz_check.h"
#include "ir/json_io.h"

using namespace autopar;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::require_round_trip(
      fuzz::as_text(data, size), [](std::string_view text) { return read_graph_json(text); },
      [](const auto& value) { return write_graph_json(value); }, "graph");
  return 0;
}
