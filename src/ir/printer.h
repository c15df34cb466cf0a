// FX-style text form of a graph, for logs, golden tests and `autopar print`:
//
//   %x = placeholder[input](target=x)  # f32[16, 32]
//   %view_2 = aten.view.default(%x, size=[16384, 4096])  # f32[16384, 4096]
//   %mm_3 = aten.mm.default(%view_2, %t_1)  # f32[16384, 4096]  @layers.0.attention
//   return (loss=%getitem, grad(%w1)=%t_3)
//
// One line per node: tensor inputs, then attributes as name=value in the op
// schema's order, then a comment with the output meta (a tuple for multi-output
// nodes) and, when the node has one, its scope after '@'. The full form is
// documented in docs/graph-format.md. The printer never fails: it also prints
// graphs the verifier would reject (a bad input id prints as %<invalid #7>).
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace autopar {

struct PrintOptions {
  bool show_scope = true;  // append "  @layers.0.attention" to nodes with a scope
};

// One node's line, without trailing newline.
std::string format_node(const Graph& graph, NodeId id, const PrintOptions& options = {});
// The graph's `return (...)` line, without trailing newline.
std::string format_outputs(const Graph& graph);
// All nodes, then the return line; every line ends with '\n'.
std::string print_graph(const Graph& graph, const PrintOptions& options = {});

// A scalar attribute as Python prints it: 2.0 (not 2), 1e-05, inf, nan.
std::string format_double(double value);
// An attribute value as printed: 3, 0.5, True, [2, -1], f32.
std::string format_attr_value(const AttrValue& value);
// A node's attributes in its op's schema order, then any the schema does not
// know in stored order. The printer and the JSON writer both use this order.
std::vector<const Attr*> attrs_in_schema_order(const Node& node);

}  // namespace autopar
