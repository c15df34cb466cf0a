// The hidden --inject-fault KIND:PHASE[:RANK] option of `autopar run` and
// `autopar pipeline` (runtime/fault_injection.h; docs/runtime.md, "Faults").
// Hidden from --help like run's node-level fault options: it is for tests.
#pragma once

#include <CLI/CLI.hpp>

#include "runtime/fault_injection.h"

namespace autopar {

// A malformed spec is a usage error, caught while parsing.
void add_inject_fault_option(CLI::App& app, FaultInjection& faults);

}  // namespace autopar
