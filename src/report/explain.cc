#include "report/explain.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "memory/recompute.h"
#include "memory/step_memory.h"
#include "planner/memory_bound.h"
#include "planner/problem_builder.h"
#include "sharding/redistribute.h"

namespace autopar::report {
namespace {

double redist_s(const TensorMeta& meta, const Sharding& from, const Sharding& to,
                const DeviceMesh& mesh) {
  return from == to ? 0 : plan_redistribution(meta, from, to, mesh).time_s;
}

const Sharding& chosen_output(const Plan& plan, NodeId v, int o) {
  return plan.strategies.nodes[static_cast<size_t>(v)].output(plan.choice[static_cast<size_t>(v)], o);
}

const Sharding& chosen_input(const Plan& plan, NodeId v, int i) {
  return plan.strategies.nodes[static_cast<size_t>(v)].input(plan.choice[static_cast<size_t>(v)], i);
}

double incoming_s(const Graph& graph, const Plan& plan, NodeId n, StrategyIdx s) {
  const NodeStrategies& ns = plan.strategies.nodes[static_cast<size_t>(n)];
  const Node& node = graph.node(n);
  double total = 0;
  for (int i = 0; i < static_cast<int>(node.inputs.size()); ++i) {
    NodeId u = node.inputs[static_cast<size_t>(i)];
    total += redist_s(input_meta(graph, n, i), chosen_output(plan, u, producer_output_index(graph, n, i)),
                      ns.input(s, i), plan.mesh);
  }
  for (const GraphOutput& g : graph.outputs()) {  // a parameter receives its gradient
    if (g.kind == OutputKind::kGradient && g.param == n) {
      total += redist_s(graph.node(g.node).meta(), chosen_output(plan, g.node, 0), ns.output(s, 0), plan.mesh);
    }
  }
  return total;
}

double outgoing_s(const Graph& graph, const Plan& plan, const std::vector<NodeId>& users, NodeId n,
                  StrategyIdx s) {
  const NodeStrategies& ns = plan.strategies.nodes[static_cast<size_t>(n)];
  double total = 0;
  for (NodeId v : users) {
    const Node& user = graph.node(v);
    for (int j = 0; j < static_cast<int>(user.inputs.size()); ++j) {
      if (user.inputs[static_cast<size_t>(j)] != n) continue;
      total += redist_s(input_meta(graph, v, j), ns.output(s, producer_output_index(graph, v, j)),
                        chosen_input(plan, v, j), plan.mesh);
    }
  }
  for (const GraphOutput& g : graph.outputs()) {  // a gradient goes to its parameter
    if (g.kind == OutputKind::kGradient && g.node == n) {
      total += redist_s(graph.node(n).meta(), ns.output(s, 0), chosen_output(plan, g.param, 0), plan.mesh);
    }
  }
  return total;
}

// Pins forcing exactly strategy s: its output (single-output nodes) and every
// operand.
std::vector<std::string> pins_for(const Node& node, const NodeStrategies& ns, StrategyIdx s) {
  std::vector<std::string> pins;
  if (ns.num_outputs == 1) pins.push_back(fmt::format("{}={}", node.name, to_string(ns.output(s, 0))));
  for (int i = 0; i < ns.num_inputs; ++i) {
    pins.push_back(fmt::format("{}.in{}={}", node.name, i, to_string(ns.input(s, i))));
  }
  return pins;
}

PinnedOutcome resolve_with_pins(const Graph& graph, const PlanOptions& options,
                                std::vector<std::string> pins) {
  PinnedOutcome out;
  out.pins = std::move(pins);
  PlanOptions pinned = options;
  const int ndim = static_cast<int>(options.mesh_shape.size());
  for (const std::string& text : out.pins) {
    Expected<PinSpec> pin = parse_pin(text, ndim);
    if (!pin) {
      out.error = pin.error().message;
      return out;
    }
    pinned.pins.push_back(*pin);
  }
  Expected<Plan> plan = make_plan(graph, pinned);
  if (!plan) {
    out.error = plan.error().message;
    return out;
  }
  out.solved = true;
  out.fits = plan->summary.fits;
  out.step_time_s = plan->summary.step_time_s;
  out.peak_bytes = plan->summary.memory.peak;
  return out;
}

Expected<NodeId> find_node(const Graph& graph, std::string_view name) {
  if (std::optional<NodeId> id = graph.find(name)) return *id;
  std::string close;
  int shown = 0;
  for (const Node& n : graph.nodes()) {
    if (n.name.find(name) == std::string::npos || shown >= 8) continue;
    close += (shown++ ? ", " : "") + n.name;
  }
  return make_error("no node named '{}' in graph {}{}", name, graph.name,
                    close.empty() ? "; `autopar graph --format text` lists the nodes"
                                  : fmt::format("; nodes containing it: {}", close));
}

// What the plan does about recomputing v, and what a recomputation is worth.
std::string recompute_line(const Graph& graph, const Plan& plan, NodeId v) {
  const RecomputeCandidates candidates = recompute_candidates_for(graph, plan.recompute);
  if (!candidates.layer.empty()) {
    const int32_t l = candidates.layer[static_cast<size_t>(v)];
    if (!candidates.is_candidate(v)) {
      return l < 0 ? "recompute: full; not in a layer (no integer in its module scope), kept"
                   : fmt::format("recompute: full; kept by its layer {} (an output of the layer, or what the "
                                 "backward reads without a re-run)",
                                 candidates.layers[static_cast<size_t>(l)]);
    }
    const RecomputeWindow& w = candidates.window[static_cast<size_t>(v)];
    return fmt::format("recompute: RECOMPUTED with its layer {} (full): let go after {}, re-run before {}",
                       candidates.layers[static_cast<size_t>(l)], graph.node(w.drop_after).name,
                       graph.node(w.restore_at).name);
  }
  if (!candidates.is_candidate(v)) {
    return "recompute: not a candidate (not a forward activation read again after the loss, or a re-run "
           "would read a value already let go)";
  }
  const RecomputeWindow& w = candidates.window[static_cast<size_t>(v)];
  const bool recomputed = !plan.recompute.empty() && plan.recompute[static_cast<size_t>(v)];
  const NodeStrategies& ns = plan.strategies.nodes[static_cast<size_t>(v)];
  const StrategyIdx s = plan.choice[static_cast<size_t>(v)];
  return fmt::format(
      "recompute: {}; a candidate whose {:.3f} MiB per device {} held from after {} to before {} ({} positions), "
      "re-run with {} view(s) for {:.3f} ms of compute{}",
      recomputed ? "RECOMPUTED" : "kept",
      local_output_bytes(graph, v, ns, s, plan.mesh) / (1024.0 * 1024.0), recomputed ? "is not" : "could stop being",
      graph.node(w.drop_after).name, graph.node(w.restore_at).name, w.restore_at - w.drop_after - 1,
      candidates.rerun[static_cast<size_t>(v)].size() - 1, ns.compute_s[static_cast<size_t>(s)] * 1e3,
      recomputed || plan.solver.recompute_mode != "none" ? "" : " (plan with --recompute auto to let the ILP choose)");
}

}  // namespace

Expected<NodeExplanation> explain_node(const Graph& graph, const Plan& plan, const PlanOptions& options,
                                       std::string_view node_name, const ExplainOptions& explain) {
  if (plan.choice.size() != static_cast<size_t>(graph.size())) {
    return make_error("the plan has no choice to explain (no plan fits the memory budget)");
  }
  Expected<NodeId> id = find_node(graph, node_name);
  if (!id) return id.error();
  const NodeId n = *id;
  const Node& node = graph.node(n);
  const NodeStrategies& ns = plan.strategies.nodes[static_cast<size_t>(n)];
  const std::vector<NodeId> users = graph.users()[static_cast<size_t>(n)];
  NodeExplanation e;
  e.node = n;
  e.name = node.name;
  e.op = std::string(node_op_name(node));
  e.plan_step_time_s = plan.summary.step_time_s;
  e.plan_peak_bytes = plan.summary.memory.peak;
  e.recompute = recompute_line(graph, plan, e.node);
  for (StrategyIdx s = 0; s < ns.size(); ++s) {
    StrategyCost c;
    c.strategy = s;
    c.text = strategy_string(ns, s);
    c.compute_s = ns.compute_s.empty() ? 0 : ns.compute_s[static_cast<size_t>(s)];
    c.incoming_s = incoming_s(graph, plan, n, s);
    c.outgoing_s = outgoing_s(graph, plan, users, n, s);
    c.local_bytes = local_output_bytes(graph, n, ns, s, plan.mesh);
    c.chosen = s == plan.choice[static_cast<size_t>(n)];
    e.strategies.push_back(std::move(c));
  }
  std::stable_sort(e.strategies.begin(), e.strategies.end(),
                   [](const StrategyCost& a, const StrategyCost& b) { return a.local_s() < b.local_s(); });
  double best_other = std::numeric_limits<double>::infinity();
  int32_t resolves = 0;
  for (size_t k = 0; k < e.strategies.size(); ++k) {
    StrategyCost& c = e.strategies[k];
    if (c.chosen) {
      e.chosen = static_cast<int32_t>(k);
      continue;
    }
    best_other = std::min(best_other, c.local_s());
    c.pinned.pins = pins_for(node, ns, c.strategy);
    if (!explain.only_output.empty() && to_string(ns.output(c.strategy, 0)) != explain.only_output) continue;
    if (explain.max_resolves >= 0 && resolves >= explain.max_resolves) continue;
    ++resolves;
    c.pinned = resolve_with_pins(graph, options, c.pinned.pins);
  }
  if (e.chosen >= 0 && best_other < std::numeric_limits<double>::infinity()) {
    e.margin_s = e.strategies[static_cast<size_t>(e.chosen)].local_s() - best_other;
  }
  return e;
}

}  // namespace autopar::report
