// `autopar report --format svg`: the plan's graph drawn by Graphviz.
//
// graph_dot writes the Graphviz input: up to kMaxDotNodes nodes, every node is
// drawn inside a cluster per layer group; beyond that (Llama3-8B has ~3.5k
// nodes, which dot lays out in minutes), one box per group with its totals,
// like the HTML page's collapsed view. Boxes are filled by per-device output
// bytes on the page's colour scale; edges that redistribute are red and
// labelled with their collectives. render_svg pipes the text into `dot -Tsvg`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ir/expected.h"
#include "ir/graph.h"
#include "planner/auto_plan.h"
#include "report/graph_view.h"

namespace autopar::report {

inline constexpr int32_t kMaxDotNodes = 400;

std::string graph_dot(const Graph& graph, const GraphView& view);

// Runs `program -Tsvg -o out_path` with the dot text on stdin. Errors: the
// program is missing (install Debian's graphviz) or fails (its exit code).
Status render_svg(std::string_view dot_text, const std::string& out_path,
                  const std::string& program = "dot");

// "#fdd49e": the page's colour for `bytes` on a log scale up to max_bytes.
std::string bytes_color(double bytes, double max_bytes);

}  // namespace autopar::report
