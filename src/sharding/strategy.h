// Strategies: the ways one node may run on the mesh, for the planner's ILP.
//
// A strategy fixes a sharding for each output and the sharding each input must
// arrive in, plus the node's compute time on its local (per-device) shapes.
// The generic engine expands an op's one-mesh-dim rule (rule.h) to N-D: the
// cartesian product of its options over the mesh dims, keeping only the
// combinations where every tensor's sharding is valid (placement.h). Options
// are distinct, so the strategies are too. Strategy 0 is always all-Replicate.
//
// The planner reads, per node, NodeStrategies (outputs, required inputs,
// compute_s) and, per edge, edge_costs.h's resharding matrix.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cost/compute_cost.h"
#include "cost/hardware.h"
#include "ir/graph.h"
#include "sharding/placement.h"
#include "sharding/rule.h"

namespace autopar {

using StrategyIdx = int32_t;

// One node's strategies, stored flat: one allocation for all shardings.
struct NodeStrategies {
  int32_t num_inputs = 0;
  int32_t num_outputs = 0;
  std::vector<Sharding> specs;    // per strategy: outputs, then inputs
  std::vector<double> compute_s;  // per strategy, seconds on local shapes (empty before costing)
  // Sync options (rule.h): per strategy, the mesh dims (bit m) the op
  // all-reduces across itself, and those all-reduces' seconds. Both empty
  // when the rule has no sync option.
  std::vector<uint32_t> sync_dims;
  std::vector<double> sync_s;
  SyncCost sync;
  // A parameter's optimizer update per strategy, on its local shard
  // (add_update_times); empty for every other node.
  std::vector<double> update_s;

  uint32_t sync_mask(StrategyIdx s) const {
    return sync_dims.empty() ? 0 : sync_dims[static_cast<size_t>(s)];
  }
  // What the ILP charges for strategy s: compute plus the op's own
  // all-reduces plus a parameter's optimizer update.
  double cost(StrategyIdx s) const {
    return compute_s[static_cast<size_t>(s)] + (sync_s.empty() ? 0.0 : sync_s[static_cast<size_t>(s)]) +
           (update_s.empty() ? 0.0 : update_s[static_cast<size_t>(s)]);
  }

  int32_t size() const {
    int32_t per = num_inputs + num_outputs;
    return per == 0 ? 0 : static_cast<int32_t>(specs.size()) / per;
  }
  const Sharding& output(StrategyIdx s, int o) const {
    return specs[static_cast<size_t>(s * (num_inputs + num_outputs) + o)];
  }
  const Sharding& input(StrategyIdx s, int i) const {
    return specs[static_cast<size_t>(s * (num_inputs + num_outputs) + num_outputs + i)];
  }
};

// "RS(1),S(0)R->S(0)S(1)": inputs, then outputs; " sync(d0)" when the op
// all-reduces across mesh dim 0 itself.
std::string strategy_string(const NodeStrategies& ns, StrategyIdx s);

// The engine: every valid N-D combination of the rule's one-dim options.
NodeStrategies expand_rule(const OpRule& rule, std::span<const TensorMeta* const> inputs,
                           std::span<const TensorMeta> outputs, const DeviceMesh& mesh,
                           const ShardingOptions& options = {});

// The tensor input i of a node reads: its producer's output index (getitem's
// index when the node is a getitem, else 0) and the tensor's metadata.
int producer_output_index(const Graph& graph, NodeId node, int input);
const TensorMeta& input_meta(const Graph& graph, NodeId node, int input);
// Whether strategy s of `node` holds some result or operand in uneven pieces
// (placement.h).
bool strategy_is_uneven(const Graph& graph, NodeId node, const NodeStrategies& ns, StrategyIdx s,
                        const DeviceMesh& mesh);

// One node's rule (errors name the node).
Expected<OpRule> node_rule(const Graph& graph, NodeId node);

// One node's strategies with compute times on local shapes.
// The all-reduces a sync strategy runs on mesh dim m: one buffer of bytes each.
std::vector<double> sync_buffer_bytes(const NodeStrategies& ns, StrategyIdx s,
                                      std::span<const TensorMeta* const> inputs,
                                      std::span<const TensorMeta> outputs, const DeviceMesh& mesh);

Expected<NodeStrategies> node_strategies(const Graph& graph, NodeId node, const DeviceMesh& mesh,
                                         const HardwareProfile& hw,
                                         const ShardingOptions& options = {});

struct StrategyGraph {
  DeviceMesh mesh;
  std::vector<NodeStrategies> nodes;  // by NodeId
  ShardingOptions sharding;           // what the strategies were enumerated under
};

// Fails listing every op of the graph that has no sharding rule (never a
// silent replicate).
Status check_op_rules(const Graph& graph);

// Sets update_s of every parameter placeholder: the optimizer's update of its
// local shard under each strategy (cost/compute_cost.h update_time).
void add_update_times(const Graph& graph, StrategyGraph& sg, const HardwareProfile& hw,
                      Optimizer optimizer);

// Every node's strategies. Fails listing every node whose op has no rule.
Expected<StrategyGraph> build_strategy_graph(const Graph& graph, const DeviceMesh& mesh,
                                             const HardwareProfile& hw,
                                             const ShardingOptions& options = {});

}  // namespace autopar
