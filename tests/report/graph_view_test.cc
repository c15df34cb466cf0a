#include <set>

#include <gtest/gtest.h>

#include "report/graph_view.h"
#include "report/svg_report.h"
#include "report_fixtures.h"

namespace autopar::report {
namespace {

TEST(LayerGroupName, KeepsTheLayerIndexAndDropsTheSubmodule) {
  EXPECT_EQ(layer_group_name("layers.3.attention.wq"), "layers.3");
  EXPECT_EQ(layer_group_name("layers.12"), "layers.12");
  EXPECT_EQ(layer_group_name("tok_embeddings"), "tok_embeddings");
  EXPECT_EQ(layer_group_name("output.proj"), "output");
}

TEST(GraphView, HasOneGroupPerLayerInExecutionOrder) {
  Graph g = testing::debug_model(3);
  Plan p = testing::plan_on(g, {2});
  GraphView view = build_graph_view(g, p);
  std::vector<std::string> layers;
  for (const ViewGroup& group : view.groups) {
    if (group.name.rfind("layers.", 0) == 0) layers.push_back(group.name);
  }
  EXPECT_EQ(layers, (std::vector<std::string>{"layers.0", "layers.1", "layers.2"}));
  // Placeholder-only groups first, then in order of first computing node.
  EXPECT_EQ(view.groups.front().name, "inputs");
  EXPECT_EQ(view.groups[1].name, "tok_embeddings");
}

TEST(GraphView, PutsEveryNodeInExactlyOneGroupAndOneLayoutCell) {
  Graph g = testing::debug_model(2);
  Plan p = testing::plan_on(g, {2});
  GraphView view = build_graph_view(g, p);
  size_t total = 0;
  for (size_t gi = 0; gi < view.groups.size(); ++gi) {
    std::set<std::pair<int32_t, int32_t>> cells;
    for (NodeId v : view.groups[gi].nodes) {
      EXPECT_EQ(view.group_of[static_cast<size_t>(v)], static_cast<GroupIdx>(gi));
      auto cell = std::make_pair(view.row[static_cast<size_t>(v)], view.column[static_cast<size_t>(v)]);
      EXPECT_TRUE(cells.insert(cell).second) << g.node(v).name << " shares a cell";
      EXPECT_LT(cell.first, view.groups[gi].rows);
      EXPECT_LT(cell.second, view.groups[gi].columns);
    }
    total += view.groups[gi].nodes.size();
  }
  EXPECT_EQ(total, static_cast<size_t>(g.size()));
}

TEST(GraphView, EdgesInsideAGroupPointDownTheLayout) {
  Graph g = testing::debug_model(2);
  Plan p = testing::plan_on(g, {2});
  GraphView view = build_graph_view(g, p);
  for (const ViewEdge& e : view.edges) {
    if (e.input < 0) continue;  // gradient pairings point back at parameters
    if (view.group_of[static_cast<size_t>(e.from)] != view.group_of[static_cast<size_t>(e.to)]) continue;
    EXPECT_LT(view.row[static_cast<size_t>(e.from)], view.row[static_cast<size_t>(e.to)])
        << g.node(e.from).name << " -> " << g.node(e.to).name;
  }
}

TEST(GraphView, LabelsExactlyThePlannedRedistributionsWithTheirTime) {
  Graph g = testing::debug_model(2, /*batch=*/64, /*seq=*/256);
  Plan p = testing::plan_on(g, {4});
  GraphView view = build_graph_view(g, p);
  size_t labelled = 0;
  double comm = 0;
  for (const ViewEdge& e : view.edges) {
    if (e.label.empty()) continue;
    ++labelled;
    comm += e.comm_s;
  }
  ASSERT_GT(p.redistributions.size(), 0u) << "fixture should communicate";
  EXPECT_EQ(labelled, p.redistributions.size());
  EXPECT_NEAR(comm, p.summary.comm_s, 1e-12 + 1e-9 * p.summary.comm_s);
  EXPECT_NE(view.edges.size(), labelled);  // most edges need no collective
}

TEST(GraphDot, DrawsSmallGraphsNodeByNodeAndLargeOnesPerGroup) {
  Graph small = testing::debug_model(1);
  Plan sp = testing::plan_on(small, {2});
  GraphView sv = build_graph_view(small, sp);
  std::string dot = graph_dot(small, sv);
  ASSERT_LE(small.size(), kMaxDotNodes);
  EXPECT_NE(dot.find("subgraph cluster_0"), std::string::npos);
  EXPECT_NE(dot.find("n0 ["), std::string::npos);
  // A graph over kMaxDotNodes is drawn one box per group (g0, g1, ...).
  Graph big = testing::debug_model(4);
  ASSERT_GT(big.size(), kMaxDotNodes);
  Plan bp = testing::plan_on(big, {2});
  std::string group_dot = graph_dot(big, build_graph_view(big, bp));
  EXPECT_NE(group_dot.find("g0 [label="), std::string::npos);
  EXPECT_EQ(group_dot.find("n0 ["), std::string::npos);
}

TEST(RenderSvg, NamesGraphvizWhenTheProgramIsMissing) {
  Status s = render_svg("digraph { a -> b }", ::testing::TempDir() + "/missing.svg",
                        "autopar-no-such-dot-program");
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("graphviz"), std::string::npos) << s.error().message;
}

TEST(BytesColor, RunsFromLightForNothingToDarkForTheLargest) {
  EXPECT_EQ(bytes_color(0, 100), "#fff7ec");
  EXPECT_EQ(bytes_color(100, 100), "#7f0000");
}

}  // namespace
}  // namespace autopar::report
