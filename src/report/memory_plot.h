// The memory timeline as an inline SVG plot: bytes per device over the
// execution order, stacked by kind (parameters, optimizer state, gradients,
// activations, communication buffers), with the peak marked and the memory
// budget drawn as a line. Long graphs are reduced to at most kMaxColumns
// columns, each showing its highest position, so the peak always survives.
#pragma once

#include <cstdint>
#include <string>

#include "ir/graph.h"
#include "report/memory_estimate.h"

namespace autopar::report {

inline constexpr int32_t kMaxColumns = 600;

// An <svg> element; `budget_bytes` <= 0 draws no budget line.
std::string memory_plot_svg(const Graph& graph, const MemoryTimeline& timeline,
                            double budget_bytes);

}  // namespace autopar::report
