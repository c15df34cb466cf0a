#include "planner/plan_output.h"

#include <cmath>

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ir/printer.h"
#include "memory/recompute.h"
#include "planner/memory_bound.h"

namespace autopar {
namespace {

using Json = nlohmann::ordered_json;

const Sharding& out_sharding(const Plan& plan, NodeId v, int o = 0) {
  return plan.strategies.nodes[static_cast<size_t>(v)].output(plan.choice[static_cast<size_t>(v)], o);
}

const Sharding& in_sharding(const Plan& plan, NodeId v, int i) {
  return plan.strategies.nodes[static_cast<size_t>(v)].input(plan.choice[static_cast<size_t>(v)], i);
}

double node_compute(const Plan& plan, NodeId v) {
  return plan.strategies.nodes[static_cast<size_t>(v)]
      .compute_s[static_cast<size_t>(plan.choice[static_cast<size_t>(v)])];
}

Json mesh_json(const DeviceMesh& mesh) {
  Json dims = Json::array();
  for (const MeshDimSpec& d : mesh.dims) {
    dims.push_back({{"name", d.name},
                    {"size", d.size},
                    {"link", d.link_class == LinkClass::kIntraNode ? "intra_node" : "inter_node"},
                    {"bandwidth_bytes_per_s", d.link.bandwidth_bytes_per_s},
                    {"latency_s", d.link.latency_s}});
  }
  return {{"shape", mesh.shape()}, {"dims", dims}};
}

Json nodes_json(const Graph& graph, const Plan& plan) {
  Json nodes = Json::array();
  for (NodeId v = 0; v < graph.size(); ++v) {
    const Node& node = graph.node(v);
    Json inputs = Json::array();
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      inputs.push_back({{"node", graph.node(node.inputs[i]).name},
                        {"placement", placement_list(in_sharding(plan, v, static_cast<int>(i)))}});
    }
    Json j = {{"name", node.name}, {"op", node_op_name(node)}, {"shape", node.meta().shape},
              {"dtype", dtype_name(node.meta().dtype)},
              {"placement", placement_list(out_sharding(plan, v))}, {"inputs", inputs},
              {"compute_s", node_compute(plan, v)}};
    // "placement" stays output 0's (readers of version 1); a node with several
    // outputs (nll_loss_forward, the attention ops) also lists each one's.
    if (node.outputs.size() > 1) {
      Json outs = Json::array();
      for (size_t o = 0; o < node.outputs.size(); ++o) {
        outs.push_back(placement_list(out_sharding(plan, v, static_cast<int>(o))));
      }
      j["output_placements"] = std::move(outs);
    }
    uint32_t sync = plan.strategies.nodes[static_cast<size_t>(v)].sync_mask(
        plan.choice[static_cast<size_t>(v)]);
    if (sync != 0) {
      Json dims = Json::array();
      for (MeshDim m = 0; m < plan.mesh.ndim(); ++m) {
        if (sync & (1u << m)) dims.push_back(m);
      }
      j["sync_dims"] = std::move(dims);
    }
    const char mark = plan.recompute.empty() ? 0 : plan.recompute[static_cast<size_t>(v)];
    if (mark == kLayerMark) j["recompute"] = "layer";
    else if (mark) j["recompute"] = true;
    nodes.push_back(std::move(j));
  }
  return nodes;
}

Json redistributions_json(const Graph& graph, const Plan& plan) {
  Json list = Json::array();
  for (const PlannedRedistribution& r : plan.redistributions) {
    Json steps = Json::array();
    for (const RedistStep& s : r.plan.steps) {
      steps.push_back({{"collective", collective_name(s.collective)},
                       {"mesh_dim", s.mesh_dim},
                       {"from", to_string(s.from)},
                       {"to", to_string(s.to)},
                       {"dtype", dtype_name(s.dtype)},
                       {"bytes", s.buffer_bytes},
                       {"sent_bytes", s.sent_bytes},
                       {"time_s", s.time_s}});
    }
    list.push_back({{"producer", graph.node(r.producer).name},
                    {"consumer", graph.node(r.consumer).name},
                    {"input", r.input < 0 ? Json("gradient_to_param") : Json(r.input)},
                    {"from", placement_list(r.from)},
                    {"to", placement_list(r.to)},
                    {"dtype", dtype_name(r.plan.sent_meta.dtype)},
                    {"shape", r.plan.sent_meta.shape},
                    {"time_s", r.plan.time_s},
                    {"steps", steps}});
  }
  return list;
}

Json summary_json(const Plan& plan) {
  const PlanSummary& s = plan.summary;
  Json comm = Json::array();
  for (const CommVolume& v : s.comm) {
    comm.push_back({{"collective", collective_name(v.collective)}, {"mesh_dim", v.mesh_dim},
                    {"count", v.count}, {"bytes", v.buffer_bytes}, {"sent_bytes", v.sent_bytes},
                    {"time_s", v.time_s}});
  }
  Json generic = Json::array();
  for (const GenericOpUse& g : s.generic_ops) {
    generic.push_back({{"op", g.op}, {"nodes", g.nodes}, {"placement", "replicated"},
                       {"compute_s", g.compute_s}, {"input_comm_s", g.input_comm_s}});
  }
  return {{"step_time_s", s.step_time_s},
          {"compute_s", s.compute_s},
          {"comm_s", s.comm_s},
          {"optimizer_s", s.optimizer_s},
          {"peak_memory_bytes", s.memory.peak},
          {"memory", {{"peak_position", s.memory.peak_position}, {"params", s.memory.params},
                      {"optimizer", s.memory.optimizer}, {"inputs", s.memory.inputs},
                      {"grads", s.memory.grads}, {"activations", s.memory.activations},
                      {"comm_buffers", s.memory.comm_buffers}}},
          {"memory_budget_bytes", s.memory_budget},
          {"fits", s.fits},
          {"uneven_nodes", s.uneven_nodes},
          {"recompute", {{"tensors", s.recomputed}, {"layers", s.recomputed_layers}, {"compute_s", s.recompute_compute_s},
                         {"comm_s", s.recompute_comm_s},
                         {"peak_without_recompute_bytes", s.peak_without_recompute}}},
          {"comm", comm},
          {"generic_ops", generic}};
}

Json solver_json(const Plan& plan, bool timings) {
  const SolverReport& r = plan.solver;
  Json j = {{"status", r.status},
            {"stopped_by", planner::stop_reason_name(r.stopped_by)},
            {"search_nodes", r.stats.search_nodes},
            {"lp_iterations", r.stats.lp_iterations},
            {"relaxation_incumbents", r.stats.relaxation_incumbents},
            {"restricted_variables", r.stats.restricted_variables},
            {"pruning_targets", r.stats.pruning_targets},
            {"pruned_variables", r.stats.pruned_variables},
            {"objective", r.objective},
            {"best_bound", r.best_bound},
            {"gap", r.gap},
            {"variables", r.stats.variables},
            {"constraints", r.stats.constraints},
            {"nonzeros", r.stats.nonzeros},
            {"memory_rows", r.stats.memory_rows},
            {"memory_rows_entered", r.stats.memory_rows_entered},
            {"memory_row_rounds", r.stats.memory_row_rounds},
            {"graph_nodes", r.graph_nodes},
            {"reduced_nodes", r.stats.reduced_nodes},
            {"unreduced_edges", r.unreduced_edges},
            {"unreduced_variables", r.unreduced_variables},
            {"unreduced_constraints", r.unreduced_constraints},
            {"problem_edges", r.problem_edges},
            {"reduced_edges", r.stats.reduced_edges},
            {"shared_layers", r.shared_layers},
            {"folded_followers", r.folded_followers},
            {"activation_grad_pairs", r.activation_grad_pairs},
            {"memory_points", r.memory_points},
            {"comm_buffer_rounds", r.comm_buffer_rounds},
            {"recompute", r.recompute_mode},
            {"recompute_candidates", r.recompute_candidates},
            {"recomputable", r.recomputable},
            {"method", r.method}};
  if (r.method == "sweeps") {
    Json steps = Json::array();
    for (const planner::SweepStep& st : r.sweep_steps) {
      Json step = {{"neighbourhood", st.neighbourhood},
                   {"status", planner::status_text(st.status, st.stopped_by)},
                   {"objective", st.has_answer ? Json(st.objective) : Json(nullptr)},
                   {"improved", st.improved},
                   {"variables", st.variables}};
      if (timings) step["time_s"] = st.seconds;
      steps.push_back(std::move(step));
    }
    j["sweeps"] = std::move(steps);
    if (r.sweep_bound) {
      Json b = {{"bound", r.sweep_bound->bound},
                {"dual_sweeps", r.sweep_bound->sweeps},
                {"converged", r.sweep_bound->converged},
                {"strategies", r.sweep_bound->strategies},
                {"strategies_left", r.sweep_bound->strategies_left}};
      if (timings) b["time_s"] = r.sweep_bound->seconds;
      j["sweep_bound"] = std::move(b);
    }
    if (r.sweep_proof) {
      Json q = {{"status", planner::status_text(r.sweep_proof->status, r.sweep_proof->stopped_by)},
                {"variables", r.sweep_proof->variables}};
      if (timings) q["time_s"] = r.sweep_proof->seconds;
      j["sweep_proof"] = std::move(q);
    }
  }
  if (r.sharing_proof) {
    const SharingProof& p = *r.sharing_proof;
    Json q = {{"verdict", p.verdict},
              {"shared_objective", p.shared_objective},
              {"bound", std::isfinite(p.bound) ? Json(p.bound) : Json(nullptr)},
              {"unshared_objective", p.unshared_objective},
              {"variables", p.variables},
              {"variables_left", p.variables_left}};
    if (timings) q["time_s"] = p.seconds;
    j["sharing_proof"] = std::move(q);
  }
  if (timings) {
    j["time_s"] = r.time_s;
    j["build_s"] = r.build_s;
  }
  return j;
}

}  // namespace

std::vector<std::string> placement_list(const Sharding& sharding) {
  std::vector<std::string> list;
  for (MeshDim d = 0; d < sharding.ndim; ++d) list.push_back(to_string(sharding[d]));
  return list;
}

std::string plan_to_json(const Graph& graph, const Plan& plan, bool timings) {
  Json j = {{"format", "autopar.plan"},
            {"version", 1},
            {"graph", graph.name},
            {"label", plan.label},
            {"hardware", plan.hardware},
            {"optimizer", optimizer_name(plan.optimizer)},
            {"mesh", mesh_json(plan.mesh)}};
  if (plan.choice.empty()) {
    j["summary"] = {{"fits", false}, {"memory_budget_bytes", plan.summary.memory_budget}};
    if (plan.shortfall) {
      j["summary"]["min_budget_bytes"] = plan.shortfall->lower_bound_bytes;
      j["summary"]["why"] = planner::describe(*plan.shortfall);
    }
  } else {
    j["nodes"] = nodes_json(graph, plan);
    j["redistributions"] = redistributions_json(graph, plan);
    j["summary"] = summary_json(plan);
  }
  j["solver"] = solver_json(plan, timings);
  return j.dump(1) + "\n";
}

std::string plan_to_annotated(const Graph& graph, const Plan& plan) {
  std::vector<double> comm(static_cast<size_t>(graph.size()), 0);
  for (const PlannedRedistribution& r : plan.redistributions) {
    comm[static_cast<size_t>(r.consumer)] += r.plan.time_s;
  }
  std::string out;
  for (NodeId v = 0; v < graph.size(); ++v) {
    const Node& node = graph.node(v);
    out += format_node(graph, v);
    std::string ins;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      ins += (i ? ", " : "") + to_string(in_sharding(plan, v, static_cast<int>(i)));
    }
    std::string outs;
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      outs += (o ? ", " : "") + to_string(out_sharding(plan, v, static_cast<int>(o)));
    }
    out += fmt::format("  # placement=({}) -> {}, cost=[{:.3g}, {:.3g}]\n", ins, outs,
                       node_compute(plan, v), comm[static_cast<size_t>(v)]);
  }
  return out;
}

}  // namespace autopar
