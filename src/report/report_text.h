// Text output of the explain tools (`autopar explain`): a node's strategies
// with their costs and pinned outcomes, and the memory estimate's peak with
// the tensors behind it. Byte counts print in MiB with three decimals, as the
// SPMD runtime prints its measured peak, so the two compare by eye.
#pragma once

#include <cstdint>
#include <string>

#include "ir/graph.h"
#include "report/explain.h"
#include "report/memory_estimate.h"

namespace autopar::report {

std::string format_mib(double bytes);        // "37.647 MiB"
std::string format_mib_delta(double bytes);  // "+1.250 MiB"

// "estimated peak per device: 41.180 MiB at position 512 (mm_12)", the parts,
// then the `top` largest tensors held there.
std::string memory_timeline_to_text(const MemoryTimeline& timeline, const Graph& graph, int32_t top);

}  // namespace autopar::report
