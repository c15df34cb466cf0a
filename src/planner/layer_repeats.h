// Repeated-layer detection: the planner's biggest size reduction.
//
// A transformer's layers are the same computation on the same shapes, so their
// nodes can share one set of ILP variables (every layer takes the same
// strategies). Nodes carry their module path as scope ("layers.7.attention");
// layer i is every node whose scope starts with "<prefix>.<i>." (or equals
// "<prefix>.<i>"). Layer i repeats the representative layer when its nodes, in
// execution order, match one for one: same op, attributes and output metadata,
// and inputs that are either the matching node of the same layer, or outside
// the layer with equal metadata. Layers that do not match keep their own
// variables, so the reduction never changes what a node computes.
//
// Sharing is not always exact: the first and last layers sit next to the
// embedding and the output head and may be best placed differently (with an
// earlier cost model, llama3-8b b32 s8192 8x8: 686.005 ms shared, 685.202 ms
// unshared; with today's the two agree). keep_ends leaves those two layers
// their own variables and shares the rest, which recovered the unshared
// optimum there at 2.5-3x the solve time.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace autopar {

struct LayerRepeats {
  // For every node: the node whose variables it shares (itself when none).
  std::vector<NodeId> representative;
  int32_t layers_found = 0;     // layers seen under the prefix
  int32_t layers_shared = 0;    // layers mapped onto a representative (excluding it)
  int32_t nodes_per_layer = 0;  // of the representative layer
};

LayerRepeats find_layer_repeats(const Graph& graph, std::string_view prefix = "layers",
                                bool keep_ends = false);

}  // namespace autopar
