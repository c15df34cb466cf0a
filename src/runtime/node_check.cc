#include "runtime/node_check.h"

#include <limits>

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "runtime/local_executor.h"
#include "runtime/shard_compare.h"
#include "sharding/placement.h"
#include "sharding/strategy.h"

namespace autopar {
namespace {

constexpr size_t kMismatchesShown = 5;

// aten leaves these ops' values unspecified (whatever the memory held).
bool unspecified_value(const Node& node) {
  std::string_view op = node_op_name(node);
  return op.starts_with("aten.empty") || op.starts_with("aten.new_empty");
}

std::string strategy_text(const Graph& graph, const Plan& plan, NodeId v) {
  const NodeStrategies& ns = plan.strategies.nodes[static_cast<size_t>(v)];
  StrategyIdx s = plan.choice[static_cast<size_t>(v)];
  std::string text = "out";
  for (size_t o = 0; o < graph.node(v).outputs.size(); ++o)
    text += " " + to_string(ns.output(s, static_cast<int>(o)));
  const Node& node = graph.node(v);
  for (size_t i = 0; i < node.inputs.size(); ++i)
    text += fmt::format(", in{} {} (from {})", i, to_string(ns.input(s, static_cast<int>(i))),
                        graph.node(node.inputs[i]).name);
  return text;
}

}  // namespace

Expected<NodeCheck> NodeCheck::prepare(const Graph& graph,
                                       const std::vector<at::Tensor>& placeholders,
                                       const SpmdMesh& mesh, uint64_t random_key,
                                       CheckTolerance tolerance) {
  NodeCheck check(graph, mesh, tolerance);
  if (mesh.world().rank() != 0) return check;
  check.reference_.resize(static_cast<size_t>(graph.size()));
  NodeValues values(static_cast<size_t>(graph.size()));
  for (NodeId v = 0; v < graph.size(); ++v) {
    if (!graph.node(v).is_placeholder()) continue;
    values[static_cast<size_t>(v)] = {placeholders[static_cast<size_t>(v)]};
    check.reference_[static_cast<size_t>(v)] = values[static_cast<size_t>(v)];  // read redistributed
  }
  ExecuteHooks hooks;
  hooks.random_key = random_key;
  hooks.after_node = [&check](NodeId v, const std::vector<at::Tensor>& outputs) {
    check.reference_[static_cast<size_t>(v)] = outputs;
  };
  Expected<ExecuteStats> run = execute_nodes(graph, values, hooks);
  if (!run) return make_error_like(run.error(), "--check-nodes reference (single process): {}", run.error().message);
  return check;
}

void NodeCheck::observe(SpmdExecutor& exec, const Plan& plan) {
  SpmdExecutor::NodeObserver observer;
  observer.input = [this, &plan](NodeId v, int i, const at::Tensor& local) {
    return compare_input(v, i, local, plan);
  };
  observer.outputs = [this, &exec](NodeId v, const std::vector<at::Tensor>& local) {
    return compare_outputs(v, local, exec);
  };
  exec.set_node_observer(std::move(observer));
}

Status NodeCheck::compare(const at::Tensor& local, const TensorMeta& meta, const Sharding& sharding,
                          const at::Tensor& want, NodeMismatch where) {
  Expected<ShardComparison> c = compare_every_shard(
      local, meta, sharding, want, *mesh_, tolerance_);
  if (!c) return make_error_like(c.error(), "--check-nodes: {}", c.error().message);
  if (mesh_->world().rank() != 0) return ok_status();
  ++compared_;
  if (c->ok) return ok_status();
  where.error = c->max_error;
  where.tolerance = c->tolerance;
  where.rank = c->worst_rank;
  mismatches_.push_back(where);
  return ok_status();
}

Status NodeCheck::compare_outputs(NodeId v, const std::vector<at::Tensor>& local,
                                  const SpmdExecutor& exec) {
  const Node& node = graph_->node(v);
  if (node.op == OpId::kGetItem || unspecified_value(node)) return ok_status();
  for (size_t o = 0; o < local.size(); ++o) {
    if (!local[o].defined()) continue;  // an output the op does not produce (masked)
    const int out = static_cast<int>(o);
    at::Tensor want = mesh_->world().rank() == 0 ? reference_[static_cast<size_t>(v)].at(o) : at::Tensor();
    if (Status s = compare(local[o], node.outputs[o], exec.output_sharding(v, out), want,
                           NodeMismatch{v, out, false});
        !s)
      return make_error_like(s.error(), "output {}: {}", o, s.error().message);
  }
  return ok_status();
}

Status NodeCheck::compare_input(NodeId v, int i, const at::Tensor& local, const Plan& plan) {
  const Node& node = graph_->node(v);
  NodeId u = node.inputs[static_cast<size_t>(i)];
  if (unspecified_value(graph_->node(u))) return ok_status();
  const NodeStrategies& ns = plan.strategies.nodes[static_cast<size_t>(v)];
  const Sharding& sharding = ns.input(plan.choice[static_cast<size_t>(v)], i);
  at::Tensor want;
  if (mesh_->world().rank() == 0) {
    int o = producer_output_index(*graph_, v, i);  // as the executor reads it
    want = reference_[static_cast<size_t>(u)].at(static_cast<size_t>(o));
  }
  if (Status s = compare(local, input_meta(*graph_, v, i), sharding, want, NodeMismatch{v, i, true}); !s)
    return make_error_like(s.error(), "input {}: {}", i, s.error().message);
  return ok_status();
}

Expected<bool> NodeCheck::finish(const Plan& plan) {
  int32_t ok = mismatches_.empty() ? 1 : 0;
  if (mesh_->world().rank() == 0) {
    if (mismatches_.empty()) {
      fmt::print("node check: all {} node outputs and redistributed inputs match the unsplit model: OK\n", compared_);
    } else {
      fmt::print("node check: {} of {} node outputs and redistributed inputs differ from the unsplit model; the first in "
                 "graph order is where the split first goes wrong (later ones may only inherit "
                 "its error):\n", mismatches_.size(), compared_);
      for (size_t i = 0; i < std::min(mismatches_.size(), kMismatchesShown); ++i) {
        const NodeMismatch& m = mismatches_[i];
        const Node& node = graph_->node(m.node);
        std::string what = m.input ? fmt::format("input {} as redistributed for it", m.output)
                                   : fmt::format("output {}", m.output);
        fmt::print("  {} ({}) {}: max abs error {:.3g} on rank {}, tolerance {:.3g}; strategy: {}\n",
                   node.name, node_op_name(node), what, m.error, m.rank, m.tolerance,
                   strategy_text(*graph_, plan, m.node));
      }
    }
    std::fflush(stdout);
  }
  if (Status s = mesh_->world().broadcast(&ok, 1, DType::i32, 0); !s) return s.error();
  return ok == 1;
}

}  // namespace autopar
