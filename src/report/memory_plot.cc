#include "report/memory_plot.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "report/html_text.h"

namespace autopar::report {
namespace {

constexpr double kWidth = 640, kHeight = 240;
constexpr double kLeft = 64, kRight = 12, kTop = 14, kBottom = 40;
constexpr int kKinds = 6;
constexpr std::array<const char*, kKinds> kKindNames = {"parameters", "optimizer", "inputs",
                                                        "gradients", "activations", "comm buffers"};
constexpr std::array<const char*, kKinds> kKindColors = {"#8da0cb", "#b3b3d9", "#a6d854",
                                                         "#66c2a5", "#fc8d62", "#e78ac3"};

std::array<double, kKinds> stacked(const MemoryParts& p) {
  std::array<double, kKinds> parts = {p.params, p.optimizer, p.inputs, p.grads, p.activations,
                                      p.comm_buffers};
  for (int k = 1; k < kKinds; ++k) parts[static_cast<size_t>(k)] += parts[static_cast<size_t>(k - 1)];
  return parts;
}

// One representative position per column: the highest total in its range.
std::vector<size_t> columns(const MemoryTimeline& t) {
  size_t n = t.positions.size();
  size_t count = std::min<size_t>(n, kMaxColumns);
  std::vector<size_t> picks;
  for (size_t c = 0; c < count; ++c) {
    size_t begin = c * n / count, end = (c + 1) * n / count;
    size_t best = begin;
    for (size_t i = begin; i < end; ++i) {
      if (t.positions[i].total() > t.positions[best].total()) best = i;
    }
    picks.push_back(best);
  }
  return picks;
}

std::string axes(double y_max, double n, auto&& y_of) {
  std::string out;
  for (int i = 0; i <= 4; ++i) {
    double v = y_max * i / 4;
    out += fmt::format(R"(<line class="grid" x1="{:.1f}" x2="{:.1f}" y1="{:.1f}" y2="{:.1f}"/>)"
                       R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)",
                       kLeft, kWidth - kRight, y_of(v), y_of(v), kLeft - 6, y_of(v) + 4,
                       format_bytes(v));
  }
  out += fmt::format(R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="middle">)"
                     R"(execution position (0 to {:.0f}: forward, then backward)</text>)",
                     (kLeft + kWidth - kRight) / 2, kHeight - 22, n - 1);
  return out;
}

std::string legend() {
  std::string out;
  double x = kLeft;
  for (int k = 0; k < kKinds; ++k) {
    out += fmt::format(R"(<rect x="{:.0f}" y="{:.0f}" width="10" height="10" fill="{}"/>)"
                       R"(<text class="tick" x="{:.0f}" y="{:.0f}">{}</text>)",
                       x, kHeight - 12, kKindColors[static_cast<size_t>(k)], x + 14, kHeight - 3,
                       kKindNames[static_cast<size_t>(k)]);
    x += 24 + 7.0 * static_cast<double>(std::string_view(kKindNames[static_cast<size_t>(k)]).size());
  }
  return out;
}

}  // namespace

std::string memory_plot_svg(const Graph& graph, const MemoryTimeline& t, double budget_bytes) {
  if (t.positions.empty()) return "<p>No memory timeline: the plan has no placements.</p>";
  double n = static_cast<double>(t.positions.size());
  double y_max = std::max(t.peak_bytes, budget_bytes) * 1.08;
  if (y_max <= 0) y_max = 1;
  auto x_of = [&](double pos) { return kLeft + (kWidth - kLeft - kRight) * pos / std::max(1.0, n - 1); };
  auto y_of = [&](double bytes) { return kTop + (kHeight - kTop - kBottom) * (1 - bytes / y_max); };
  std::string out = fmt::format(
      R"(<svg class="plot" id="memory-plot" viewBox="0 0 {:.0f} {:.0f}" width="{:.0f}" height="{:.0f}" role="img">)",
      kWidth, kHeight, kWidth, kHeight);
  out += axes(y_max, n, y_of);
  std::vector<size_t> picks = columns(t);
  for (int k = kKinds - 1; k >= 0; --k) {
    // Each band is drawn from zero up to its cumulative top; later (lower)
    // bands paint over the earlier ones, which leaves the stacked picture.
    std::string points = fmt::format("{:.1f},{:.1f}", x_of(0), y_of(0));
    for (size_t p : picks) {
      double top = stacked(t.positions[p])[static_cast<size_t>(k)];
      points += fmt::format(" {:.1f},{:.1f}", x_of(static_cast<double>(p)), y_of(top));
    }
    points += fmt::format(" {:.1f},{:.1f}", x_of(n - 1), y_of(0));
    out += fmt::format(R"(<polygon points="{}" fill="{}"/>)", points,
                       kKindColors[static_cast<size_t>(k)]);
  }
  std::string line;
  for (size_t p : picks) {
    line += fmt::format("{}{:.1f},{:.1f}", line.empty() ? "" : " ", x_of(static_cast<double>(p)),
                        y_of(t.positions[p].total()));
  }
  out += fmt::format(R"(<polyline class="total" points="{}"/>)", line);
  if (budget_bytes > 0) {
    out += fmt::format(R"(<line class="budget" x1="{:.1f}" x2="{:.1f}" y1="{:.1f}" y2="{:.1f}"/>)"
                       R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="end">budget {}</text>)",
                       kLeft, kWidth - kRight, y_of(budget_bytes), y_of(budget_bytes),
                       kWidth - kRight, y_of(budget_bytes) - 4, format_bytes(budget_bytes));
  }
  double px = x_of(t.peak_position), py = y_of(t.peak_bytes);
  std::string peak_name = t.peak_node != kNoNode ? graph.node(t.peak_node).name : "-";
  bool right_half = px > (kLeft + kWidth) / 2;
  out += fmt::format(
      R"(<g id="memory-peak"><line class="peak" x1="{0:.1f}" x2="{0:.1f}" y1="{1:.1f}" y2="{2:.1f}"/>)"
      R"(<circle cx="{0:.1f}" cy="{1:.1f}" r="4"/>)"
      R"(<text class="peak-label" x="{3:.1f}" y="{4:.1f}" text-anchor="{5}">peak {6} at {7} (#{8})</text></g>)",
      px, py, y_of(0), right_half ? px - 8 : px + 8, py + 14, right_half ? "end" : "start",
      format_bytes(t.peak_bytes), html_escape(peak_name), t.peak_position);
  out += legend();
  return out + "</svg>";
}

}  // namespace autopar::report
