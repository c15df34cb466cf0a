// --pipeline auto: the search over degree, microbatches, schedule and stages
// per rank (pipeline_plan.h), one solve per (degree, microbatches).
#include <fmt/format.h>

#include "pipeline/stages.h"
#include "pipeline_plan/pipeline_plan.h"

namespace autopar {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// How many stages the graph can be cut into: its layer units.
int32_t layer_units(const Graph& graph) {
  std::vector<std::string> units;
  for (NodeId v : pipeline::forward_nodes(graph)) {
    std::string unit = pipeline::layer_unit(graph.node(v).scope);
    if (!unit.empty() && (units.empty() || units.back() != unit)) units.push_back(unit);
  }
  return static_cast<int32_t>(units.size());
}

bool better(const PipelineCandidate& a, const PipelineCandidate& b) {
  if (a.fits != b.fits) return a.fits;
  return a.step_time_s < b.step_time_s;
}

}  // namespace

Expected<PipelineSearch> search_pipeline(const MicrobatchGraph& microbatch_graph, const PlanOptions& options,
                                         std::optional<int32_t> only_degree, const std::string& baseline) {
  if (options.mesh_shape.empty()) return make_error("the mesh has no dims");
  const int64_t rows = options.mesh_shape[0];
  PipelineSearch search;
  std::optional<PipelineCandidate> best;
  for (int32_t degree = 2; degree <= rows; ++degree) {
    if (rows % degree != 0 || (only_degree && degree != *only_degree)) continue;
    for (int32_t factor : {1, 2, 4}) {
      const int32_t microbatches = factor * degree;
      PipelineCandidate refused;
      refused.options.degree = degree;
      refused.options.microbatches = microbatches;
      refused.options.stages_per_rank = 0;  // every schedule
      Expected<Graph> graph = microbatch_graph(microbatches);
      if (!graph) {
        refused.refused = graph.error().message;
        search.candidates.push_back(refused);
        continue;
      }
      if (layer_units(*graph) < degree) {
        refused.refused = fmt::format("{} layer units cannot fill {} stages", layer_units(*graph), degree);
        search.candidates.push_back(refused);
        continue;
      }
      Expected<Plan> solved = solve_stage_groups(*graph, options, degree, baseline);
      if (!solved) return solved.error();
      struct Shape {
        pipeline::ScheduleKind kind;
        int32_t stages_per_rank;
      };
      const Shape shapes[] = {{pipeline::ScheduleKind::k1F1B, 1},
                              {pipeline::ScheduleKind::kInterleaved1F1B, 2},
                              {pipeline::ScheduleKind::kZBH1, 1},
                              {pipeline::ScheduleKind::kGPipe, 1}};
      for (const Shape& shape : shapes) {
        PipelineCandidate c;
        c.options.degree = degree;
        c.options.microbatches = microbatches;
        c.options.schedule = shape.kind;
        c.options.stages_per_rank = shape.stages_per_rank;
        c.options.baseline = baseline;
        if (shape.stages_per_rank * degree > layer_units(*graph)) {
          c.refused = fmt::format("{} layer units cannot fill {} stages", layer_units(*graph),
                                  shape.stages_per_rank * degree);
          search.candidates.push_back(c);
          continue;
        }
        Expected<PipelinePlan> plan = make_pipeline_plan(*graph, options, c.options, &*solved);
        if (!plan) {
          c.refused = plan.error().message;
          search.candidates.push_back(c);
          continue;
        }
        c.step_time_s = plan->step_time_s;
        c.fits = plan->fits;
        for (double peak : plan->rank_peak_bytes) c.peak_bytes = std::max(c.peak_bytes, peak);
        search.candidates.push_back(c);
        if (!best || better(c, *best)) {
          best = c;
          search.best = std::move(*plan);
          search.graph = *graph;
        }
      }
    }
  }
  if (!best) {
    std::string why;
    for (const PipelineCandidate& c : search.candidates) {
      why += fmt::format("\n  degree {}, {} microbatches: {}", c.options.degree, c.options.microbatches, c.refused);
    }
    return make_error("no pipeline could be planned on mesh dim 0 of size {}:{}", rows,
                      why.empty() ? std::string(" it has no divisor of 2 or more") : why);
  }
  return search;
}

std::string pipeline_candidates_table(const PipelineSearch& search) {
  std::string out = fmt::format("{:>6} {:>12} {:<18} {:>3} {:>14} {:>14}  {}\n", "degree", "microbatches",
                                "schedule", "V", "step ms", "peak MiB", "");
  for (const PipelineCandidate& c : search.candidates) {
    const PipelineOptions& o = c.options;
    if (!c.refused.empty()) {
      out += fmt::format("{:>6} {:>12} {:<18} {:>3} {:>14} {:>14}  not planned: {}\n", o.degree, o.microbatches,
                         o.stages_per_rank == 0 ? "(every schedule)" : pipeline::schedule_kind_name(o.schedule),
                         o.stages_per_rank == 0 ? "-" : fmt::format("{}", o.stages_per_rank), "-", "-",
                         c.refused);
      continue;
    }
    bool chosen = o.degree == search.best.options.degree && o.microbatches == search.best.options.microbatches &&
                  o.schedule == search.best.options.schedule && o.stages_per_rank == search.best.options.stages_per_rank;
    out += fmt::format("{:>6} {:>12} {:<18} {:>3} {:>14.3f} {:>14.2f}  {}{}\n", o.degree, o.microbatches,
                       pipeline::schedule_kind_name(o.schedule), o.stages_per_rank, c.step_time_s * 1e3,
                       c.peak_bytes / kMiB, c.fits ? "fits" : "does not fit", chosen ? "  <- chosen" : "");
  }
  return out;
}

}  // namespace autopar
