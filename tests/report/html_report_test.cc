#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "planner/pins.h"
#include "report/html_report.h"
#include "report/html_text.h"
#include "report/memory_plot.h"
#include "report/top_nodes.h"
#include "report_fixtures.h"

namespace autopar::report {
namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The page's JSON data block.
nlohmann::json graph_data(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"graph-data\">";
  size_t begin = html.find(open);
  EXPECT_NE(begin, std::string::npos);
  begin += open.size();
  return nlohmann::json::parse(html.substr(begin, html.find("</script>", begin) - begin));
}

// The graph with one node renamed (names are kept unique by Graph::append).
Graph renamed(const Graph& g, NodeId target, const std::string& name) {
  Graph out;
  out.name = g.name;
  for (NodeId v = 0; v < g.size(); ++v) {
    Node node = g.node(v);
    if (v == target) node.name = name;
    EXPECT_TRUE(out.append(std::move(node)).ok());
  }
  for (const GraphOutput& o : g.outputs()) out.add_output(o);
  return out;
}

TEST(HtmlText, EscapesMarkupInTextAndInsideScripts) {
  EXPECT_EQ(html_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(json_string("</script>\"\\"), "\"\\u003c/script\\u003e\\\"\\\\\"");
  EXPECT_EQ(format_bytes(1536), "1.50 KiB");  // 1536 / 1024
  EXPECT_EQ(format_seconds(0.0012), "1.20 ms");
}

TEST(HtmlReport, HasEverySectionAndOneCollapsibleGroupPerLayer) {
  Graph g = testing::debug_model(3);
  Plan p = testing::plan_on(g, {2});
  std::string html = html_report(g, p, estimate_memory(g, p));
  for (const char* id : {"id=\"graph\"", "id=\"graph-data\"", "id=\"memory-plot\"",
                         "id=\"memory-peak\"", "id=\"top-memory\"", "id=\"top-comm\"",
                         "id=\"summary\"", "id=\"expand-all\""}) {
    EXPECT_NE(html.find(id), std::string::npos) << id;
  }
  // Self-contained: no external script, stylesheet, image or font.
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);
  EXPECT_EQ(html.find("href=\"http"), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  nlohmann::json data = graph_data(html);
  int layers = 0;
  size_t nodes = 0;
  for (const auto& group : data["groups"]) {
    layers += group["name"].get<std::string>().rfind("layers.", 0) == 0 ? 1 : 0;
    nodes += group["nodes"].size();
  }
  EXPECT_EQ(layers, 3);
  EXPECT_EQ(nodes, static_cast<size_t>(g.size()));
  EXPECT_EQ(data["nodes"].size(), static_cast<size_t>(g.size()));
}

TEST(HtmlReport, EscapesNodeNamesEverywhere) {
  Graph base = testing::debug_model(1);
  NodeId victim = base.size() - 1;  // a computing node near the loss
  const std::string evil = "</script><img src=x onerror=alert(1)>";
  Graph g = renamed(base, victim, evil);
  g.name = "dbg<&>";
  Plan p = testing::plan_on(g, {2});
  std::string html = html_report(g, p, estimate_memory(g, p));
  EXPECT_EQ(html.find(evil), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_NE(html.find("dbg&lt;&amp;&gt;"), std::string::npos);
  EXPECT_EQ(count(html, "</script>"), 2u);  // the data block and the page's script
  nlohmann::json data = graph_data(html);
  EXPECT_EQ(data["nodes"][static_cast<size_t>(victim)][0].get<std::string>(), evil);
}

TEST(HtmlReport, SameInputsGiveTheSameBytes) {
  Graph g = testing::debug_model(2);
  Plan a = testing::plan_on(g, {2, 2});
  Plan b = testing::plan_on(g, {2, 2});
  EXPECT_EQ(html_report(g, a, estimate_memory(g, a)), html_report(g, b, estimate_memory(g, b)));
  EXPECT_EQ(deterministic_summary(g, a).find("build "), std::string::npos);
}

TEST(MemoryPlot, MarksThePeakNodeAndKeepsAtMostMaxColumns) {
  Graph g = testing::debug_model(2);
  Plan p = testing::plan_on(g, {2});
  MemoryTimeline t = estimate_memory(g, p);
  std::string svg = memory_plot_svg(g, t, p.summary.memory_budget);
  EXPECT_NE(svg.find("peak " + format_bytes(t.peak_bytes) + " at " + g.node(t.peak_node).name),
            std::string::npos);
  size_t begin = svg.find("<polyline class=\"total\" points=\"");
  ASSERT_NE(begin, std::string::npos);
  std::string points = svg.substr(begin, svg.find("\"/>", begin) - begin);
  size_t columns = count(points, ",");
  EXPECT_EQ(columns, std::min<size_t>(t.positions.size(), kMaxColumns));
}

TEST(Hotspots, SuggestPinsThePlannerAccepts) {
  Graph g = testing::debug_model(2, /*batch=*/64, /*seq=*/256);
  Plan p = testing::plan_on(g, {4});
  std::vector<std::string> pins;
  for (const MemoryHotspot& h : memory_hotspots(g, p, estimate_memory(g, p), 8)) {
    if (!h.pin.empty()) {
      pins.push_back(h.pin);
      EXPECT_LT(h.pinned_bytes, h.tensor.bytes) << h.pin;
    }
  }
  std::vector<CommHotspot> comm = comm_hotspots(g, p, 8);
  ASSERT_FALSE(comm.empty());
  for (size_t i = 1; i < comm.size(); ++i) {
    EXPECT_GE(comm[i - 1].redistribution->plan.time_s, comm[i].redistribution->plan.time_s);
  }
  for (const CommHotspot& h : comm) {
    if (!h.pin.empty()) pins.push_back(h.pin);
  }
  ASSERT_FALSE(pins.empty());
  for (const std::string& text : pins) {
    Expected<PinSpec> pin = parse_pin(text, p.mesh.ndim());
    ASSERT_TRUE(pin.ok()) << text << ": " << pin.error().message;
    auto allowed = resolve_pins(g, p.strategies, {*pin});
    EXPECT_TRUE(allowed.ok()) << text << ": " << (allowed.ok() ? "" : allowed.error().message);
  }
  EXPECT_EQ(pin_argument("a'b=RR"), "--pin 'a'\\''b=RR'");
}

}  // namespace
}  // namespace autopar::report
