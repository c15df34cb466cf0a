// Graph view: the plan's graph prepared for drawing in the report.
//
// A Llama3-70B joint graph has ~17k nodes, too many to read at once, so the
// view groups nodes by their layer unit ("layers.3", "tok_embeddings", ...;
// the same unit the pipeline cuts on, see pipeline/stages.h) and the report
// shows each group collapsed to one box with its totals until it is expanded.
// Inside a group, nodes get a simple deterministic layered layout: the row is
// the longest path from the group's first nodes over edges inside the group,
// the column the order of appearance within the row. Edges carry the
// collectives of the plan's redistributions (Plan::redistributions), so a box,
// a node and an edge can each say what communication they cause.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "planner/auto_plan.h"

namespace autopar::report {

using GroupIdx = int32_t;

// "layers.3.attention" -> "layers.3"; "tok_embeddings" -> "tok_embeddings".
std::string layer_group_name(std::string_view scope);

// The group a node is drawn in: its scope's layer unit; placeholders without
// a scope (tokens, labels, freqs_cis) go to "inputs", other unscoped nodes to
// "top".
std::string node_group_name(const Node& node);

struct ViewEdge {
  NodeId from = kNoNode;
  NodeId to = kNoNode;
  int32_t input = 0;   // operand index of `to`; -1 for a gradient->parameter pairing
  double comm_s = 0;   // the redistribution's time, 0 when none
  std::string label;   // "all_gather(tp) + reduce_scatter(dp)", "" when none
};

struct ViewGroup {
  std::string name;
  std::vector<NodeId> nodes;  // execution order
  int32_t rows = 0;           // layout extent
  int32_t columns = 0;
  double activation_bytes = 0;  // sum of its nodes' per-device output bytes
  double max_node_bytes = 0;
  double comm_s = 0;            // redistributions into its nodes
  int32_t collectives = 0;      // redistribution steps into its nodes
};

struct GraphView {
  std::vector<ViewGroup> groups;  // ordered by first non-placeholder node
  std::vector<GroupIdx> group_of;  // per node
  std::vector<int32_t> row, column;  // per node, inside its group
  std::vector<double> bytes;         // per node: per-device output bytes in the chosen sharding
  std::vector<std::string> placement;  // per node: chosen output sharding, "S(0)R"
  std::vector<double> comm_in_s;       // per node: redistributions into it
  std::vector<ViewEdge> edges;  // operand order of each consumer, then pairings
};

// "all_gather(tp)" for each step of a redistribution, joined with " + ".
std::string collective_label(const RedistPlan& plan, const DeviceMesh& mesh);

// The plan must have a choice per node.
GraphView build_graph_view(const Graph& graph, const Plan& plan);

}  // namespace autopar::report
