// User pins: force a node's output (or one of its inputs) into a sharding.
//
// Text form, on the command line (--pin) or one per line in a constraints
// file (# comments allowed):
//   PATTERN=SHARDING         the output of every matching node
//   PATTERN.in<K>=SHARDING   operand K of every matching node
// PATTERN is a node name or target (param name) glob (* and ?), or a selector:
// @param, @buffer, @input, @tangent (placeholders of that kind), @grad (nodes
// whose output is a parameter's gradient), @loss. Examples:
//   embedding=S(0)S(1)   tokens=S(0)R   *.wq.weight=RS(0)   @param=RR
// A pattern that matches nothing is an error, so typos never pass silently.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/expected.h"
#include "ir/graph.h"
#include "sharding/placement.h"
#include "sharding/strategy.h"

namespace autopar {

struct PinSpec {
  std::string pattern;
  int32_t input = -1;  // -1: the output
  Sharding sharding;
  std::string text;    // as the user wrote it, for messages
};

Expected<PinSpec> parse_pin(std::string_view text, int mesh_ndim);
// One pin per non-empty, non-comment line; errors name the file line.
Expected<std::vector<PinSpec>> parse_pin_file(std::string_view contents, int mesh_ndim,
                                              std::string_view file_name);

bool pin_matches(const PinSpec& pin, const Graph& graph, NodeId node);

// For each node, the strategies every pin on it allows (empty list: unpinned).
// Errors: a pattern matching no node, or a node with no strategy meeting its pins.
Expected<std::vector<std::vector<StrategyIdx>>> resolve_pins(const Graph& graph,
                                                            const StrategyGraph& strategies,
                                                            const std::vector<PinSpec>& pins);

}  // namespace autopar
