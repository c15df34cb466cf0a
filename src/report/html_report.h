// `autopar report`: one self-contained HTML page about a plan (inline CSS,
// JavaScript and SVG; nothing is fetched, so it opens offline and can be
// attached to a review), and the same graph as an SVG drawn by Graphviz.
//
// The page has: the headline numbers; the graph, grouped per layer (graph_view.h),
// groups collapsed to one box with totals and expandable, nodes coloured by
// per-device output bytes and edges labelled with their collectives; the
// memory timeline with its peak (memory_plot.h); the tensors behind the peak
// and the slowest redistributions, each with a pin to paste (top_nodes.h);
// and the plan summary of `autopar plan`. The output depends only on the
// graph and the plan (no times, no dates): same inputs, same bytes.
#pragma once

#include <string>

#include "ir/expected.h"
#include "ir/graph.h"
#include "planner/auto_plan.h"
#include "report/graph_view.h"
#include "report/memory_estimate.h"

namespace autopar::report {

inline constexpr size_t kTopRows = 12;

// The graph as the page's JSON data block (read by report_assets' script).
std::string graph_view_json(const Graph& graph, const GraphView& view);

// The whole page. The plan must have a choice (a plan that fits nothing has
// no placements to draw: callers report the shortfall instead).
// `extra_sections`: more <section> elements for the page's end (a pipeline's
// stages and timeline, pipeline_plan/pipeline_report.h).
std::string html_report(const Graph& graph, const Plan& plan, const MemoryTimeline& timeline,
                        const std::string& extra_sections = "");

// plan_to_summary without its wall-clock line, so reports diff byte for byte.
std::string deterministic_summary(const Graph& graph, const Plan& plan);

}  // namespace autopar::report
