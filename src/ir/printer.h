// FX-style text form of a graph:
//   %mm_3 = aten.mm.default(%view_2, %t_1)  # f32[16384, 4096]
#pragma once

#include <string>

#include "ir/graph.h"

namespace autopar {

// One node's line, without trailing newline.
std::string format_node(const Graph& graph, NodeId id);
// All nodes, then the output line(s).
std::string print_graph(const Graph& graph);

}  // namespace autopar
