// A pipeline plan in the HTML report (see pipeline_report.h).
#include "pipeline_plan/pipeline_report.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/html_text.h"

namespace autopar {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kWidth = 960, kRowHeight = 26, kLeft = 70, kTop = 8;

const char* colour(pipeline::ActionKind kind) {
  switch (kind) {
    case pipeline::ActionKind::kF: return "#6baed6";
    case pipeline::ActionKind::kB: return "#74c476";
    case pipeline::ActionKind::kI: return "#41ab5d";
    case pipeline::ActionKind::kW: return "#fd8d3c";
    default: return "#bdbdbd";
  }
}

std::string stage_table(const PipelinePlan& plan) {
  std::string out =
      "<table><tr><th>stage</th><th>rank</th><th>units</th><th>F ms</th><th>B ms</th><th>send ms</th>"
      "<th>sync ms</th><th>update ms</th><th>static MiB</th><th>saved MiB / microbatch</th></tr>\n";
  for (const PipelineStageCost& s : plan.stages) {
    std::string units = s.units.size() <= 3 ? fmt::format("{}", fmt::join(s.units, ", "))
                                            : fmt::format("{} .. {} ({} units)", s.units.front(), s.units.back(),
                                                          s.units.size());
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.3f}</td><td>{:.3f}</td><td>{:.3f}</td><td>{:.3f}</td>"
        "<td>{:.3f}</td><td>{:.2f}</td><td>{:.2f}</td></tr>\n",
        s.stage, s.rank, report::html_escape(units), s.durations.f * 1e3, s.durations.b * 1e3,
        s.durations.comm * 1e3, s.grad_sync_s * 1e3, s.optimizer_s * 1e3, s.static_bytes / kMiB,
        s.saved_bytes / kMiB);
  }
  return out + "</table>\n";
}

}  // namespace

std::string schedule_timeline_svg(const PipelinePlan& plan) {
  const pipeline::SimulationResult& sim = plan.simulation;
  const double span = std::max(sim.makespan, 1e-12);
  const double height = kTop + kRowHeight * static_cast<double>(sim.timeline.size()) + 24;
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" font-family=\"sans-serif\" "
      "font-size=\"10\">\n",
      kLeft + kWidth + 10, height);
  for (size_t r = 0; r < sim.timeline.size(); ++r) {
    const double y = kTop + kRowHeight * static_cast<double>(r);
    out += fmt::format("<text x=\"4\" y=\"{:.1f}\">rank {}</text>\n", y + 16, r);
    for (const pipeline::TimedAction& t : sim.timeline[r]) {
      if (!pipeline::is_compute(t.action.kind)) continue;
      const double x = kLeft + t.start / span * kWidth, w = std::max(0.5, (t.end - t.start) / span * kWidth);
      const std::string label = pipeline::to_string(t.action);
      out += fmt::format(
          "<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.0f}\" fill=\"{}\" stroke=\"#fff\">"
          "<title>{}: stage {} microbatch {}, {:.3f}-{:.3f} ms</title></rect>\n",
          x, y, w, kRowHeight - 4, colour(t.action.kind), report::html_escape(label), t.action.stage,
          t.action.microbatch, t.start * 1e3, t.end * 1e3);
      if (w > 22) {
        out += fmt::format("<text x=\"{:.2f}\" y=\"{:.1f}\">{}</text>\n", x + 2, y + 15,
                           report::html_escape(label));
      }
    }
  }
  out += fmt::format("<text x=\"{:.0f}\" y=\"{:.0f}\">0 ms</text><text x=\"{:.0f}\" y=\"{:.0f}\" "
                     "text-anchor=\"end\">{:.3f} ms</text>\n",
                     kLeft, height - 6, kLeft + kWidth, height - 6, sim.makespan * 1e3);
  return out + "</svg>\n";
}

std::string pipeline_report_html(const Graph& graph, const PipelinePlan& plan, const std::string& candidates) {
  const PipelineOptions& o = plan.options;
  std::string out = fmt::format(
      "<section id=\"pipeline\"><h2>Pipeline: {} stages on {} ranks along mesh dim 0</h2>\n<p>{}: schedule {}, {} "
      "microbatches, {} stage(s) per rank; each stage group sharded on mesh {} ({}). Step {:.3f} ms: makespan "
      "{:.3f} ms, bubble {:.1f}%, then the slowest rank's gradient sync and update. Predicted peak per rank: {}; "
      "budget {:.2f} GB: {}.</p>\n",
      plan.stages.size(), o.degree, report::html_escape(graph.name), pipeline::schedule_kind_name(o.schedule),
      o.microbatches, o.stages_per_rank, fmt::join(plan.sub_mesh, "x"),
      report::html_escape(o.baseline.empty() ? "solved" : "baseline " + o.baseline), plan.step_time_s * 1e3,
      plan.simulation.makespan * 1e3, plan.simulation.bubble_fraction() * 100,
      [&] {
        std::vector<std::string> peaks;
        for (double b : plan.rank_peak_bytes) peaks.push_back(fmt::format("{:.2f} MiB", b / kMiB));
        return fmt::format("{}", fmt::join(peaks, ", "));
      }(),
      plan.memory_budget / 1e9, plan.fits ? "fits" : "DOES NOT FIT");
  out += stage_table(plan);
  out += "<h3>Schedule timeline (simulated; F forward, B backward, I input gradient, W weight gradient)</h3>\n";
  out += schedule_timeline_svg(plan);
  if (!candidates.empty()) {
    out += "<h3>Candidates of the search</h3><pre>" + report::html_escape(candidates) + "</pre>\n";
  }
  return out + "</section>\n";
}

}  // namespace autopar
