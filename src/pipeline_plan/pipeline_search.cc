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

// The schedules of one (degree, microbatches) on its solved stage groups.
struct Trial {
  const Graph& graph;
  const Plan& solved;
  int32_t units;  // the graph's layer units
};

void try_schedules(const Trial& trial, PipelineOptions options, const PlanOptions& plan_options,
                   const PipelineSearchSpace& space, PipelineSearch& search, std::optional<PipelineCandidate>& best) {
  std::vector<pipeline::ScheduleKind> kinds = {pipeline::ScheduleKind::k1F1B, pipeline::ScheduleKind::kInterleaved1F1B,
                                               pipeline::ScheduleKind::kZBH1, pipeline::ScheduleKind::kGPipe};
  if (space.schedule) kinds = {*space.schedule};
  for (pipeline::ScheduleKind kind : kinds) {
    PipelineCandidate c;
    c.options = options;
    c.options.schedule = kind;
    c.options.stages_per_rank =
        kind == pipeline::ScheduleKind::kInterleaved1F1B ? space.interleaved_stages_per_rank : 1;
    const int32_t stages = c.options.stages_per_rank * c.options.degree;
    Expected<PipelinePlan> plan = make_error("{} layer units cannot fill {} stages", trial.units, stages);
    if (stages <= trial.units) plan = make_pipeline_plan(trial.graph, plan_options, c.options, &trial.solved);
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
      search.graph = trial.graph;
    }
  }
}

}  // namespace

Expected<PipelineSearch> search_pipeline(const MicrobatchGraph& microbatch_graph, const PlanOptions& options,
                                         const PipelineSearchSpace& space) {
  if (options.mesh_shape.empty()) return make_error("the mesh has no dims");
  const int64_t rows = options.mesh_shape[0];
  std::vector<int32_t> degrees;
  if (space.degree) degrees = {*space.degree};
  for (int32_t d = 2; !space.degree && d <= rows; ++d) {
    if (rows % d == 0) degrees.push_back(d);
  }
  PipelineSearch search;
  std::optional<PipelineCandidate> best;
  for (int32_t degree : degrees) {
    std::vector<int32_t> counts = {degree, 2 * degree, 4 * degree};
    if (space.microbatches) counts = {*space.microbatches};
    for (int32_t microbatches : counts) {
      PipelineCandidate refused;  // a row for every schedule at once
      refused.options.degree = degree;
      refused.options.microbatches = microbatches;
      refused.options.stages_per_rank = 0;
      refused.options.baseline = space.baseline;
      refused.options.recompute_layers = space.recompute_layers;
      Expected<Graph> graph = microbatch_graph(microbatches);
      const int32_t units = graph ? layer_units(*graph) : 0;
      if (!graph || units < degree) {
        refused.refused = graph ? fmt::format("{} layer units cannot fill {} stages", units, degree)
                                : graph.error().message;
        search.candidates.push_back(refused);
        continue;
      }
      Expected<Plan> solved = solve_stage_groups(*graph, options, degree, space.baseline);
      if (!solved) return solved.error();
      try_schedules(Trial{*graph, *solved, units}, refused.options, options, space, search, best);
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
