// A pipeline plan's part of `autopar report --pipeline`: the stages with
// their costs and memory, and the schedule's timeline as simulated (one row
// per pipeline rank, one box per forward, backward, input-gradient or
// weight-gradient action, its width its predicted time). Self-contained HTML
// (inline SVG); same plan, same bytes.
#pragma once

#include <string>

#include "ir/graph.h"
#include "pipeline_plan/pipeline_plan.h"

namespace autopar {

// <section> elements to insert into the report's page.
std::string pipeline_report_html(const Graph& graph, const PipelinePlan& plan, const std::string& candidates);

// The timeline alone, as an SVG element.
std::string schedule_timeline_svg(const PipelinePlan& plan);

}  // namespace autopar
