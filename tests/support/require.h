// What a test needs from the machine (chromium, mpirun, Python's torch): a test
// whose dependency is missing skips with the reason, except under CI=true,
// where it fails naming the dependency, so a CI run never passes by skipping.
// scripts/test.sh lists the skipped tests at the end of a run.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string_view>

namespace autopar_support {

// CI=true (or 1, yes): the variable CI systems set.
inline bool running_in_ci() {
  const char* ci = std::getenv("CI");
  if (ci == nullptr) return false;
  std::string_view v = ci;
  return v == "true" || v == "1" || v == "yes";
}

}  // namespace autopar_support

// In a TEST body or SetUp: skip with `reason`, or fail under CI=true.
#define AUTOPAR_REQUIRE(available, reason)                                           \
  do {                                                                               \
    if (!(available)) {                                                              \
      if (::autopar_support::running_in_ci()) {                                      \
        FAIL() << "missing dependency (CI=true does not allow skipping): " << reason; \
      }                                                                              \
      GTEST_SKIP() << reason;                                                        \
    }                                                                                \
  } while (false)
