#include "sharding/strategy.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "cost/comm_cost.h"
#include "cost/compute_cost.h"
#include "sharding/op_rules.h"

namespace autopar {

std::string strategy_string(const NodeStrategies& ns, StrategyIdx s) {
  std::string out;
  for (int i = 0; i < ns.num_inputs; ++i) out += (i ? "," : "") + to_string(ns.input(s, i));
  out += "->";
  for (int o = 0; o < ns.num_outputs; ++o) out += (o ? "," : "") + to_string(ns.output(s, o));
  uint32_t mask = ns.sync_mask(s);
  if (mask != 0) {
    std::string dims;
    for (MeshDim m = 0; m < 32; ++m) {
      if (mask & (1u << m)) dims += fmt::format("{}d{}", dims.empty() ? "" : ",", m);
    }
    out += " sync(" + dims + ")";
  }
  return out;
}

namespace {

// Uneven shards (placement.h) are sound where the rule lines pieces up one
// to one: on every mesh dim with an uneven shard, every tensor sharded there
// has the same size in its sharded dim (so piece i of one is piece i of the
// other: a view merging or splitting the dim, or grouped query heads against
// key heads, or group norm's channels against its groups, differ), none is
// an average of unequal pieces (P(avg)), and the op does not all-reduce
// statistics over the pieces itself (sync: a synced batch norm counts equal
// shards).
bool uneven_pieces_line_up(std::span<const Sharding> candidate,
                           std::span<const TensorMeta* const> inputs, std::span<const TensorMeta> outputs,
                           const std::vector<DimOption>& dim_options, const std::vector<size_t>& digit,
                           const DeviceMesh& mesh) {
  const int num_out = static_cast<int>(outputs.size());
  for (MeshDim m = 0; m < mesh.ndim(); ++m) {
    bool uneven = false, avg = false;
    int64_t common = -1;
    bool same = true;
    for (size_t t = 0; t < candidate.size(); ++t) {
      const Placement p = candidate[t][m];
      avg = avg || (p.is_partial() && p.reduce_op() == ReduceOp::kAvg);
      if (!p.is_shard()) continue;
      const Shape& shape = static_cast<int>(t) < num_out ? outputs[t].shape : inputs[t - outputs.size()]->shape;
      const int64_t size = shape[static_cast<size_t>(p.dim())];
      uneven = uneven || size % shard_count(candidate[t], mesh, p.dim()) != 0;
      same = same && (common < 0 || common == size);
      common = size;
    }
    if (!uneven) continue;
    if (!same || avg || dim_options[digit[static_cast<size_t>(m)]].sync) return false;
  }
  return true;
}

}  // namespace

NodeStrategies expand_rule(const OpRule& rule, std::span<const TensorMeta* const> inputs,
                           std::span<const TensorMeta> outputs, const DeviceMesh& mesh,
                           const ShardingOptions& options) {
  const std::vector<DimOption> dim_options = single_dim_options(rule);
  const int num_in = static_cast<int>(inputs.size());
  const int num_out = static_cast<int>(outputs.size());
  const int per = num_in + num_out;
  const int mesh_ndim = mesh.ndim();
  NodeStrategies ns;
  ns.num_inputs = num_in;
  ns.num_outputs = num_out;
  const bool any_sync = std::any_of(dim_options.begin(), dim_options.end(),
                                    [](const DimOption& o) { return o.sync; });
  if (any_sync) ns.sync = rule.sync;
  // Odometer over option indices, one digit per mesh dim.
  std::vector<size_t> digit(static_cast<size_t>(mesh_ndim), 0);
  std::vector<Sharding> candidate(static_cast<size_t>(per), Sharding::replicated(mesh_ndim));
  while (true) {
    bool valid = true;
    for (int t = 0; t < per && valid; ++t) {
      // Strategy layout is outputs first; option layout is inputs first.
      int opt_index = t < num_out ? num_in + t : t - num_out;
      Sharding& s = candidate[static_cast<size_t>(t)];
      for (MeshDim m = 0; m < mesh_ndim; ++m) {
        s[m] = dim_options[digit[static_cast<size_t>(m)]].placements[static_cast<size_t>(opt_index)];
      }
      const Shape& shape = t < num_out ? outputs[static_cast<size_t>(t)].shape
                                       : inputs[static_cast<size_t>(t - num_out)]->shape;
      valid = is_valid_sharding(shape, s, mesh, options);
    }
    if (valid && !options.even_only) {
      valid = uneven_pieces_line_up(candidate, inputs, outputs, dim_options, digit, mesh);
    }
    if (valid) {
      ns.specs.insert(ns.specs.end(), candidate.begin(), candidate.end());
      if (any_sync) {
        uint32_t mask = 0;
        for (MeshDim m = 0; m < mesh_ndim; ++m) {
          if (dim_options[digit[static_cast<size_t>(m)]].sync) mask |= 1u << m;
        }
        ns.sync_dims.push_back(mask);
      }
    }
    int m = mesh_ndim - 1;
    while (m >= 0 && ++digit[static_cast<size_t>(m)] == dim_options.size()) {
      digit[static_cast<size_t>(m)] = 0;
      --m;
    }
    if (m < 0) break;
  }
  return ns;
}

int producer_output_index(const Graph& graph, NodeId node, int input) {
  const Node& n = graph.node(node);
  if (n.op == OpId::kGetItem && input == 0) return static_cast<int>(n.attrs.get_int("index"));
  return 0;
}

const TensorMeta& input_meta(const Graph& graph, NodeId node, int input) {
  const Node& producer = graph.node(graph.node(node).inputs[static_cast<size_t>(input)]);
  return producer.outputs[static_cast<size_t>(producer_output_index(graph, node, input))];
}

bool strategy_is_uneven(const Graph& graph, NodeId node, const NodeStrategies& ns, StrategyIdx s,
                        const DeviceMesh& mesh) {
  const Node& n = graph.node(node);
  for (size_t o = 0; o < n.outputs.size(); ++o) {
    if (is_uneven(n.outputs[o].shape, ns.output(s, static_cast<int>(o)), mesh)) return true;
  }
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (is_uneven(input_meta(graph, node, static_cast<int>(i)).shape, ns.input(s, static_cast<int>(i)), mesh)) {
      return true;
    }
  }
  return false;
}

namespace {

std::vector<const TensorMeta*> input_metas(const Graph& graph, NodeId node) {
  std::vector<const TensorMeta*> metas;
  for (size_t i = 0; i < graph.node(node).inputs.size(); ++i) {
    metas.push_back(&input_meta(graph, node, static_cast<int>(i)));
  }
  return metas;
}

// Roofline time of every strategy on its local shapes; scratch buffers are
// reused so the loop allocates only when a shape first grows.
void add_compute_times(const Node& node, const std::vector<const TensorMeta*>& inputs,
                       const DeviceMesh& mesh, const HardwareProfile& hw, NodeStrategies& ns) {
  ns.compute_s.assign(static_cast<size_t>(ns.size()), 0.0);
  if (op_def(node.op).has(kStructural)) return;
  std::vector<std::vector<TensorMeta>> local_in(inputs.size(), std::vector<TensorMeta>(1));
  std::vector<const std::vector<TensorMeta>*> in_ptrs;
  for (const auto& v : local_in) in_ptrs.push_back(&v);
  std::vector<TensorMeta> local_out(node.outputs);
  OpCall call{in_ptrs, node.attrs};
  std::string_view op_name = node_op_name(node);
  for (StrategyIdx s = 0; s < ns.size(); ++s) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      local_in[i][0].dtype = inputs[i]->dtype;
      local_shape_into(inputs[i]->shape, ns.input(s, static_cast<int>(i)), mesh, local_in[i][0].shape);
    }
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      local_shape_into(node.outputs[o].shape, ns.output(s, static_cast<int>(o)), mesh,
                       local_out[o].shape);
    }
    ns.compute_s[static_cast<size_t>(s)] = compute_time(node.op, call, local_out, hw, op_name);
  }
}

// The sync all-reduces of every strategy, on each sync'd mesh dim's link.
void add_sync_times(const std::vector<const TensorMeta*>& inputs,
                    std::span<const TensorMeta> outputs, const DeviceMesh& mesh,
                    NodeStrategies& ns) {
  if (ns.sync_dims.empty()) return;
  ns.sync_s.assign(static_cast<size_t>(ns.size()), 0.0);
  for (StrategyIdx s = 0; s < ns.size(); ++s) {
    std::vector<double> buffers = sync_buffer_bytes(ns, s, inputs, outputs, mesh);
    for (MeshDim m = 0; m < mesh.ndim(); ++m) {
      if (!(ns.sync_mask(s) & (1u << m))) continue;
      for (double bytes : buffers) {
        ns.sync_s[static_cast<size_t>(s)] +=
            collective_time(Collective::kAllReduce, mesh.dims[static_cast<size_t>(m)].group, bytes);
      }
    }
  }
}

}  // namespace

Expected<OpRule> node_rule(const Graph& graph, NodeId node) {
  const Node& n = graph.node(node);
  std::vector<const TensorMeta*> inputs = input_metas(graph, node);
  RuleCall call{inputs, n.attrs, n.outputs};
  Expected<OpRule> rule = op_rule(n.op, call);
  if (!rule) return make_error_like(rule.error(), "node {}: {}", n.name, rule.error().message);
  return rule;
}

Expected<NodeStrategies> node_strategies(const Graph& graph, NodeId node, const DeviceMesh& mesh,
                                         const HardwareProfile& hw,
                                         const ShardingOptions& options) {
  Expected<OpRule> rule = node_rule(graph, node);
  if (!rule) return rule.error();
  const Node& n = graph.node(node);
  std::vector<const TensorMeta*> inputs = input_metas(graph, node);
  NodeStrategies ns = expand_rule(*rule, inputs, n.outputs, mesh, options);
  add_compute_times(n, inputs, mesh, hw, ns);
  add_sync_times(inputs, n.outputs, mesh, ns);
  return ns;
}

std::vector<double> sync_buffer_bytes(const NodeStrategies& ns, StrategyIdx s,
                                      std::span<const TensorMeta* const> inputs,
                                      std::span<const TensorMeta> outputs, const DeviceMesh& mesh) {
  std::vector<double> buffers;
  if (ns.sync_mask(s) == 0 || ns.sync.tensor < 0) return buffers;
  auto t = static_cast<size_t>(ns.sync.tensor);
  bool is_input = t < inputs.size();
  const TensorMeta& meta = is_input ? *inputs[t] : outputs[t - inputs.size()];
  const Sharding& sh = is_input ? ns.input(s, static_cast<int>(t))
                                : ns.output(s, static_cast<int>(t - inputs.size()));
  double bytes = static_cast<double>(dtype_size(meta.dtype));
  for (int64_t d : local_shape(meta.shape, sh, mesh)) bytes *= static_cast<double>(d);
  for (int32_t units : ns.sync.units) buffers.push_back(bytes * units);
  return buffers;
}

Status check_op_rules(const Graph& graph) {
  std::set<std::string_view> missing;
  for (const Node& n : graph.nodes()) {
    if (!has_rule(n.op)) missing.insert(node_op_name(n));
  }
  if (missing.empty()) return ok_status();
  return make_error("graph {} uses ops without a sharding rule: {}", graph.name,
                    fmt::join(missing, ", "));
}

void add_update_times(const Graph& graph, StrategyGraph& sg, const HardwareProfile& hw,
                      Optimizer optimizer) {
  for (NodeId v = 0; v < graph.size(); ++v) {
    const Node& node = graph.node(v);
    if (!node.is_placeholder() || node.kind != PlaceholderKind::kParam) continue;
    NodeStrategies& ns = sg.nodes[static_cast<size_t>(v)];
    ns.update_s.assign(static_cast<size_t>(ns.size()), 0.0);
    GradLayout grad = gradient_layout(graph, v);
    for (StrategyIdx s = 0; s < ns.size(); ++s) {
      TensorMeta local{local_shape(node.outputs[0].shape, ns.output(s, 0), sg.mesh), node.outputs[0].dtype};
      ns.update_s[static_cast<size_t>(s)] = update_time(optimizer, local, grad, hw);
    }
  }
}

Expected<StrategyGraph> build_strategy_graph(const Graph& graph, const DeviceMesh& mesh,
                                             const HardwareProfile& hw,
                                             const ShardingOptions& options) {
  if (Status s = check_op_rules(graph); !s) return s.error();
  StrategyGraph sg;
  sg.mesh = mesh;
  sg.sharding = options;
  sg.nodes.reserve(static_cast<size_t>(graph.size()));
  for (NodeId id = 0; id < graph.size(); ++id) {
    Expected<NodeStrategies> ns = node_strategies(graph, id, mesh, hw, options);
    if (!ns) return ns.error();
    if (ns->size() == 0) {
      return make_error("node {} ({}) has no valid strategy on mesh {}", graph.node(id).name,
                        node_op_name(graph.node(id)), mesh_shape_string(mesh));
    }
    sg.nodes.push_back(std::move(*ns));
  }
  return sg;
}

}  // namespace autopar
