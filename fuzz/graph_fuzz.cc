// Fuzzes the JSON graph reader (ir/json_io.h read_graph_json). A graph it
// accepts must survive the canonical writer: written, read back and written
// again it gives the same bytes.
#include <string>

#include "fuzz_check.h"
#include "ir/json_io.h"

using namespace autopar;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Expected<Graph> graph = read_graph_json(fuzz::as_text(data, size));
  if (!graph) {
    fuzz::require(!graph.error().message.empty(), "a refused graph has an error message");
    return 0;
  }
  std::string written = write_graph_json(*graph);
  Expected<Graph> again = read_graph_json(written);
  fuzz::require(again.ok(), "a graph written by write_graph_json reads back",
                again ? std::string_view() : std::string_view(again.error().message));
  fuzz::require(write_graph_json(*again) == written, "write_graph_json is canonical");
  return 0;
}
