#include "report/html_report.h"

#include <algorithm>

#include <fmt/format.h>

#include "planner/plan_output.h"
#include "report/html_text.h"
#include "report/memory_plot.h"
#include "report/report_assets.h"
#include "report/top_nodes.h"

namespace autopar::report {
namespace {

std::string header(const Graph& graph, const Plan& plan, const MemoryTimeline& timeline) {
  const PlanSummary& s = plan.summary;
  bool fits = timeline.peak_bytes <= s.memory_budget;
  auto card = [](std::string_view label, const std::string& value, bool bad = false) {
    return fmt::format(R"(<div class="card{}"><b>{}</b>{}</div>)", bad ? " bad" : "", value, label);
  };
  std::string out = fmt::format(
      "<header><h1>autopar report: {} on mesh {} ({} devices), {} ({})</h1><div class=\"cards\">",
      html_escape(graph.name), html_escape(to_string(plan.mesh)), plan.mesh.num_devices(),
      html_escape(plan.hardware), html_escape(plan.label));
  out += card("step time", format_seconds(s.step_time_s));
  out += card("compute", format_seconds(s.compute_s));
  out += card("communication", format_seconds(s.comm_s));
  out += card("peak memory per device", format_bytes(timeline.peak_bytes), !fits);
  out += card("budget", format_bytes(s.memory_budget));
  out += card("nodes", std::to_string(graph.size()));
  if (s.recomputed > 0) {
    out += card(fmt::format("recomputed: +{} compute, +{} communication, peak {} with every activation kept",
                            format_seconds(s.recompute_compute_s), format_seconds(s.recompute_comm_s),
                            format_bytes(s.peak_without_recompute)),
                s.recomputed_layers > 0 ? fmt::format("{} whole layers ({} nodes)", s.recomputed_layers, s.recomputed)
                                        : fmt::format("{} activations", s.recomputed));
  }
  return out + "</div></header>\n";
}

std::string graph_section(const Graph& graph, const GraphView& view) {
  std::string out =
      "<section id=\"graph-section\"><h2>Graph</h2><div class=\"toolbar\">"
      "<button id=\"expand-all\">Expand all</button><button id=\"collapse-all\">Collapse all"
      "</button><span class=\"muted\">Click a layer to expand or collapse it; hover a node or "
      "edge for details. Red edges are redistributions (labelled with their collectives).</span>"
      "<span class=\"legend\">output bytes per device: small <span class=\"scale\" style=\""
      "background:linear-gradient(90deg,#fff7ec,#fdd49e,#fc8d59,#d7301f,#7f0000)\"></span> "
      "large</span></div><div id=\"graph-pane\"><div id=\"graph\"></div></div></section>\n";
  out += "<script type=\"application/json\" id=\"graph-data\">" + graph_view_json(graph, view) +
         "</script>\n";
  return out;
}

std::string memory_table(const Graph& graph, const Plan& plan, const MemoryTimeline& timeline) {
  std::string out =
      "<section id=\"top-memory\"><h2>Largest tensors at the memory peak</h2><table><tr>"
      "<th>tensor</th><th>kind</th><th>op</th><th>shape</th><th>placement</th>"
      "<th>per device</th><th>pin to shard it further</th></tr>\n";
  for (const MemoryHotspot& h : memory_hotspots(graph, plan, timeline, kTopRows)) {
    const LiveTensor& t = h.tensor;
    std::string pin = h.pin.empty() ? "<span class=\"muted\">none smaller</span>"
                                    : fmt::format("<code>{}</code> &rarr; {}",
                                                  html_escape(pin_argument(h.pin)),
                                                  format_bytes(h.pinned_bytes));
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td>"
        "<td>{}</td></tr>\n",
        html_escape(t.name), memory_kind_name(t.kind), html_escape(t.op), html_escape(t.shape),
        html_escape(t.placement), format_bytes(t.bytes), pin);
  }
  return out + "</table></section>\n";
}

std::string comm_table(const Graph& graph, const Plan& plan) {
  std::string out =
      "<section id=\"top-comm\"><h2>Slowest redistributions</h2><table><tr><th>producer "
      "&rarr; consumer</th><th>collectives</th><th>from &rarr; to</th><th>bytes sent</th>"
      "<th>time</th><th>pin to avoid it</th></tr>\n";
  std::vector<CommHotspot> hot = comm_hotspots(graph, plan, kTopRows);
  if (hot.empty()) out += "<tr><td colspan=\"6\">No communication in this plan.</td></tr>\n";
  for (const CommHotspot& h : hot) {
    const PlannedRedistribution& r = *h.redistribution;
    std::string into = r.input >= 0 ? fmt::format("{} (operand {})", graph.node(r.consumer).name,
                                                  r.input)
                                    : graph.node(r.consumer).name + " (gradient pairing)";
    std::string pin = h.pin.empty() ? "<span class=\"muted\">no single pin</span>"
                                    : fmt::format("<code>{}</code><br><span class=\"muted\">{}"
                                                  "</span>", html_escape(pin_argument(h.pin)),
                                                  html_escape(h.pin_effect));
    out += fmt::format(
        "<tr><td>{} &rarr; {}</td><td>{}</td><td>{} &rarr; {}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td>{}</td></tr>\n",
        html_escape(graph.node(r.producer).name), html_escape(into), html_escape(h.label),
        html_escape(to_string(r.from)), html_escape(to_string(r.to)),
        format_bytes(r.plan.sent_bytes), format_seconds(r.plan.time_s), pin);
  }
  return out + "</table></section>\n";
}

}  // namespace

std::string deterministic_summary(const Graph& graph, const Plan& plan) {
  std::string text = plan_to_summary(graph, plan);
  size_t at = text.find("\n  time ");
  if (at == std::string::npos) return text;
  size_t end = text.find('\n', at + 1);
  return text.erase(at + 1, end == std::string::npos ? std::string::npos : end - at);
}

std::string html_report(const Graph& graph, const Plan& plan, const MemoryTimeline& timeline,
                        const std::string& extra_sections) {
  GraphView view = build_graph_view(graph, plan);
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>autopar report: {} on {}</title>\n<style>{}</style></head>\n<body "
      "data-status=\"loading\">\n",
      html_escape(graph.name), html_escape(to_string(plan.mesh)), kReportCss);
  out += header(graph, plan, timeline);
  out += "<main>\n" + graph_section(graph, view);
  out += "<div class=\"row\"><section id=\"memory\"><h2>Memory per device over the step</h2>" +
         memory_plot_svg(graph, timeline, plan.summary.memory_budget) + "</section>\n";
  out += "<section id=\"summary\"><h2>Plan summary</h2><pre>" +
         html_escape(deterministic_summary(graph, plan)) + "</pre></section></div>\n";
  out += memory_table(graph, plan, timeline) + comm_table(graph, plan) + extra_sections;
  out += "</main>\n<script>" + std::string(kReportScript) + "</script>\n</body></html>\n";
  return out;
}

}  // namespace autopar::report
