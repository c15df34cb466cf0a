// Fuzzes the index of the values the PyTorch exporter writes
// (ir/values_index.h parse_values_index: DIR/index.json of
// --check-against-torch DIR). Reading the tensors' files is libtorch's part
// (runtime/torch_values.h) and is not fuzzed.
#include "fuzz_check.h"
#include "ir/values_index.h"

using namespace autopar;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Expected<ValuesIndex> index = parse_values_index(fuzz::as_text(data, size), "fuzz");
  if (!index) {
    fuzz::require(!index.error().message.empty(), "a refused index has an error message");
    return 0;
  }
  for (const ValuesIndexEntry& entry : index->entries) {
    fuzz::require(entry.bytes >= 0, "an accepted entry has a byte count");
  }
  return 0;
}
