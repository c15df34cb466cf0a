// Fuzzes the hardware profile reader (cost/hardware.h parse_hardware_json). A
// profile it accepts must read back from write_hardware_json's output the same.
#include <string>

#include "cost/hardware.h"
#include "fuzz_check.h"

using namespace autopar;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Expected<HardwareProfile> profile = parse_hardware_json(fuzz::as_text(data, size));
  if (!profile) {
    fuzz::require(!profile.error().message.empty(), "a refused profile has an error message");
    return 0;
  }
  std::string written = write_hardware_json(*profile);
  Expected<HardwareProfile> again = parse_hardware_json(written);
  fuzz::require(again.ok(), "a profile written by write_hardware_json reads back",
                again ? std::string_view() : std::string_view(again.error().message));
  fuzz::require(write_hardware_json(*again) == written, "a written profile reads back the same");
  return 0;
}
