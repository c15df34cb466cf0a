// Pipeline stages: the forward part of a joint graph cut into S consecutive
// pieces at layer boundaries.
//
// A node's layer unit comes from its scope (module path): "layers.3.attention"
// belongs to unit "layers.3", "tok_embeddings", "norm", "output" and "loss" are
// units of their own; a node with an empty scope joins the unit before it.
// Cutting by count spreads the "layers.<i>" units evenly (earlier stages take
// the remainder), with everything before the first layer in stage 0 and
// everything after the last in stage S-1. Cutting by cost picks the
// contiguous split of all units that minimises the most expensive stage's
// roofline time (cost/compute_cost.h). A stage knows its nodes, the
// param/buffer placeholders it reads, its input values (outputs of earlier
// stages or graph input placeholders such as tokens and labels) and its
// output values (read by later stages, or the loss).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cost/hardware.h"
#include "ir/expected.h"
#include "ir/graph.h"
#include "pipeline/action.h"

namespace autopar::pipeline {

// One output of one node.
struct Value {
  NodeId node = kNoNode;
  int32_t output = 0;
  bool operator==(const Value&) const = default;
  auto operator<=>(const Value&) const = default;
};

struct Stage {
  StageIdx index = 0;
  std::vector<std::string> units;  // "tok_embeddings", "layers.0", ...
  std::vector<NodeId> nodes;       // forward compute nodes, graph order
  std::vector<NodeId> params;      // param and buffer placeholders read
  std::vector<Value> inputs;       // from earlier stages or input placeholders
  std::vector<Value> outputs;      // read by later stages, or graph outputs
  double compute_s = 0;            // roofline time of the nodes (cost balance only)
};

// kGiven: the units of every stage named in StageOptions::given_units (a
// plan's cut, read back by the runtime); they must be this graph's units in
// order, each stage non-empty.
enum class StageBalance : uint8_t { kCount, kCost, kGiven };

struct StageOptions {
  int32_t num_stages = 1;
  int32_t num_ranks = 1;  // num_stages must be a multiple
  StageBalance balance = StageBalance::kCount;
  const HardwareProfile* hardware = nullptr;  // required for kCost
  std::vector<std::vector<std::string>> given_units;  // kGiven: per stage
};

// "layers.3.attention" -> "layers.3"; "norm" -> "norm"; "" -> "".
std::string layer_unit(std::string_view scope);

// Non-placeholder nodes before the first node that depends on a tangent
// placeholder (the start of the backward); the whole graph without tangents.
std::vector<NodeId> forward_nodes(const Graph& graph);

Expected<std::vector<Stage>> split_stages(const Graph& graph, const StageOptions& options);

// "stage 1: layers.2, layers.3 (118 nodes, in: add_7, out: add_15)" per line.
std::string describe_stages(const Graph& graph, const std::vector<Stage>& stages);

}  // namespace autopar::pipeline
