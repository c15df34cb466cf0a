// Fuzzes the hardware profile reader (cost/hardware.h parse_hardware_json). A
// profile it accepts must read back from write_hardware_json's output the same.
#include "cost/hardware.h"
#include "fuzz_check.h"

using namespace autopar;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::require_round_trip(
      fuzz::as_text(data, size), [](std::string_view text) { return parse_hardware_json(text); },
      [](const auto& value) { return write_hardware_json(value); }, "hardware profile");
  return 0;
}
