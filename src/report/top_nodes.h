// The report's "what to look at" tables: the tensors that make the memory
// peak and the redistributions that cost the most time, each with the pin
// (planner/pins.h) a user can paste to change it.
//
// A pin only states what the user wants; the suggestion is one the planner
// accepts (the node has a strategy meeting it), not a promise that the whole
// plan gets better: re-planning with it re-balances everything else.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "planner/auto_plan.h"
#include "report/memory_estimate.h"

namespace autopar::report {

struct MemoryHotspot {
  LiveTensor tensor;
  std::string pin;     // pin text, e.g. "mm_3=S(0)S(1)"; "" when nothing shards it further
  double pinned_bytes = 0;  // per-device bytes of the tensor under the pin
};

struct CommHotspot {
  const PlannedRedistribution* redistribution = nullptr;
  std::string label;  // collective_label
  std::string pin;    // "" when neither end can take the other's sharding
  std::string pin_effect;  // what the pin does, for the table
};

// The `limit` largest tensors held at the memory peak. For a node's output
// (activation, gradient, parameter, its optimizer state), the pin is the
// strategy whose output is smallest per device, when smaller than now.
std::vector<MemoryHotspot> memory_hotspots(const Graph& graph, const Plan& plan,
                                           const MemoryTimeline& timeline, size_t limit);

// The `limit` slowest redistributions. The pin makes the consumer read the
// operand as produced (PATTERN.in<K>=FROM), else makes the producer emit what
// the consumer reads (PATTERN=TO).
std::vector<CommHotspot> comm_hotspots(const Graph& graph, const Plan& plan, size_t limit);

// The pin as a shell argument: --pin 'TEXT' (single quotes escaped).
std::string pin_argument(std::string_view pin);

}  // namespace autopar::report
