// Plan tables for people: one plan's summary, and plans side by side.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "planner/memory_bound.h"
#include "planner/plan_output.h"

namespace autopar {
namespace {

std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / (1024.0 * 1024 * 1024)); }

std::string ms(double seconds) { return fmt::format("{:.3f} ms", seconds * 1e3); }

// The placements chosen for parameters, grouped: "S(0)R x 97" etc.
std::string param_placements(const Graph& graph, const Plan& plan) {
  std::map<std::string, int> counts;
  for (NodeId v = 0; v < graph.size(); ++v) {
    const Node& n = graph.node(v);
    if (!n.is_placeholder() || n.kind != PlaceholderKind::kParam) continue;
    ++counts[to_string(plan.strategies.nodes[static_cast<size_t>(v)].output(
        plan.choice[static_cast<size_t>(v)], 0))];
  }
  std::string out;
  for (const auto& [placement, count] : counts) {
    out += fmt::format("{}{} x{}", out.empty() ? "" : ", ", placement, count);
  }
  return out;
}

// How the search ended ("completed" or the limit that stopped it) and, when
// the clock stopped it, that the plan may differ between runs.
std::string search_lines(const SolverReport& r) {
  std::string work = fmt::format("{} branch-and-bound nodes, {} LP iterations",
                                 r.stats.search_nodes, r.stats.lp_iterations);
  const int32_t solved = r.stats.pruned_variables > 0 ? r.stats.pruned_variables : r.stats.variables;
  if (r.stats.pruned_variables > 0)
    work += fmt::format("; pruning to a target above the dual bound left {} of {} variables",
                        r.stats.pruned_variables, r.stats.variables);
  if (r.stats.relaxation_incumbents > 0) {
    work += r.stats.restricted_variables == 0
        ? "; a rounding of the LP relaxation met its bound"
        : fmt::format("; reduced-cost fixing left CBC {} of {} variables",
                      r.stats.restricted_variables, solved);
  }
  std::string out = r.stopped_by == planner::StopReason::kCompleted
      ? fmt::format("  search         completed, {}\n", work)
      : fmt::format("  search         stopped by the {} after {}\n",
                    planner::stop_reason_words(r.stopped_by), work);
  std::string warning = planner::time_limit_warning(r.stopped_by, r.time_limit_s);
  if (!warning.empty()) out += "  WARNING        " + warning + "\n";
  return out;
}

// The aten ops that ran without a rule of their own, and what replicating
// them cost: the case for writing their rules.
std::string generic_ops_lines(const PlanSummary& s) {
  if (s.generic_ops.empty()) return "";
  int32_t nodes = 0;
  double comm = 0;
  for (const GenericOpUse& g : s.generic_ops) {
    nodes += g.nodes;
    comm += g.input_comm_s;
  }
  std::string out = fmt::format("  generic ops    {} nodes of {} aten ops without a sharding rule run "
                                "replicated; gathering their inputs costs {}:\n",
                                nodes, s.generic_ops.size(), ms(comm));
  for (const GenericOpUse& g : s.generic_ops) {
    out += fmt::format("                 {:<40} x{:<5} compute {}, inputs gathered {}\n", g.op,
                       g.nodes, ms(g.compute_s), ms(g.input_comm_s));
  }
  return out;
}

// The --prove-sharing verdict (sharing_proof.h) in one line.
std::string sharing_proof_line(const SharingProof& p) {
  const std::string left =
      p.variables_left > 0 ? fmt::format("{} of {} unshared variables left by pruning, {:.2f} s",
                                         p.variables_left, p.variables, p.seconds)
                           : fmt::format("{:.2f} s", p.seconds);
  if (p.verdict == "exact")
    return fmt::format("  sharing proof  exact: no unshared plan costs less (unshared optimum, memory aside, "
                       "{}; {})\n", ms(p.unshared_objective), left);
  if (p.verdict == "improved")
    return fmt::format("  sharing proof  improved: the unshared optimum {} fits and replaced the shared plan's {} "
                       "({})\n", ms(p.unshared_objective), ms(p.shared_objective), left);
  if (p.verdict == "cheaper plan over budget")
    return fmt::format("  sharing proof  open: an unshared plan at {} is cheaper but over the memory budget; the "
                       "unshared optimum lies in [{}, {}] ({}; --no-share-layers solves it)\n",
                       ms(p.unshared_objective), ms(p.bound), ms(p.shared_objective), left);
  if (p.verdict.starts_with("not run"))
    return fmt::format("  sharing proof  {}\n", p.verdict);
  if (std::isfinite(p.bound) && p.bound > 0)
    return fmt::format("  sharing proof  not proven: every unshared plan costs at least {}, {:.3g}% below the shared "
                       "plan ({})\n", ms(p.bound), 100 * (p.shared_objective - p.bound) / p.shared_objective, left);
  return fmt::format("  sharing proof  not proven within the solver's limits ({})\n", left);
}

}  // namespace

std::string plan_to_summary(const Graph& graph, const Plan& plan) {
  std::string out = fmt::format("plan for {} on mesh {} ({} devices), hardware {}, {}\n",
                                graph.name, to_string(plan.mesh), plan.mesh.num_devices(),
                                plan.hardware, plan.label);
  const SolverReport& r = plan.solver;
  if (plan.choice.empty()) {
    out += fmt::format("  DOES NOT FIT: budget {} per device\n", gib(plan.summary.memory_budget));
    if (plan.shortfall) out += "  " + planner::describe(*plan.shortfall) + "\n";
    out += fmt::format("  solver: {} ({})\n", r.status, r.message);
    out += search_lines(r);
    return out;
  }
  const PlanSummary& s = plan.summary;
  out += fmt::format("  step time      {}  (compute {}, communication {}, optimizer {})\n",
                     ms(s.step_time_s), ms(s.compute_s), ms(s.comm_s), ms(s.optimizer_s));
  out += fmt::format("  peak memory    {} per device of {} budget: {}\n", gib(s.memory.peak),
                     gib(s.memory_budget), s.fits ? "fits" : "DOES NOT FIT");
  out += fmt::format("    at node {}: params {}, optimizer {}, inputs {}, grads {}, activations {}, "
                     "comm buffers {}\n",
                     s.memory.peak_position >= 0 ? graph.node(s.memory.peak_position).name : "-",
                     gib(s.memory.params), gib(s.memory.optimizer), gib(s.memory.inputs),
                     gib(s.memory.grads), gib(s.memory.activations), gib(s.memory.comm_buffers));
  out += fmt::format("  parameters     {}\n", param_placements(graph, plan));
  if (r.recompute_mode == "full") {
    out += fmt::format("  recompute      full: {} whole layers re-run ({} nodes), +{} compute, +{} communication, "
                       "peak {} ({} with every activation kept)\n",
                       s.recomputed_layers, s.recomputed, ms(s.recompute_compute_s), ms(s.recompute_comm_s),
                       planner::format_bytes(s.memory.peak), planner::format_bytes(s.peak_without_recompute));
  } else if (r.recompute_mode != "none") {
    out += fmt::format("  recompute      {}: {} of {} candidate tensors, +{} compute, +{} communication, "
                       "peak {} ({} with every activation kept)\n",
                       r.recompute_mode, s.recomputed, r.recompute_candidates, ms(s.recompute_compute_s),
                       ms(s.recompute_comm_s), planner::format_bytes(s.memory.peak),
                       planner::format_bytes(s.peak_without_recompute));
  }
  if (s.uneven_nodes > 0) {
    out += fmt::format("  uneven shards  {} nodes split a dim the mesh does not divide (torch.chunk pieces, "
                       "costed padded; --even-only forbids them)\n", s.uneven_nodes);
  }
  out += "  communication  collective       mesh dim   count        bytes       time\n";
  for (const CommVolume& v : s.comm) {
    out += fmt::format("                 {:<16} {:<8} {:>7} {:>12} {:>10}\n",
                       collective_name(v.collective),
                       plan.mesh.dims[static_cast<size_t>(v.mesh_dim)].name, v.count,
                       planner::format_bytes(v.buffer_bytes), ms(v.time_s));
  }
  out += generic_ops_lines(s);
  if (r.method == "sweeps") {
    out += fmt::format("  solver         mesh-dim sweeps, {}, objective {}, {} ({})\n", r.status,
                       ms(r.objective),
                       r.sweep_bound ? fmt::format("bound {}, gap {:.3g}%", ms(r.best_bound), 100 * r.gap)
                                     : std::string("no bound over the whole mesh"),
                       r.message);
    for (const planner::SweepStep& st : r.sweep_steps) {
      out += fmt::format("                   {:<16} {:>14}  {}{}, {} variables, {:.2f} s\n",
                         st.neighbourhood, st.has_answer ? ms(st.objective) : std::string("-"),
                         planner::status_text(st.status, st.stopped_by), st.improved ? ", improved" : "",
                         st.variables, st.seconds);
    }
  } else {
    out += fmt::format("  solver         {}, objective {}, gap {:.2g}, {} variables, {} constraints, "
                       "{} memory rows{}\n", r.status, ms(r.objective), r.gap, r.stats.variables,
                       r.stats.constraints, r.stats.memory_rows,
                       r.stats.memory_rows == 0 ? std::string()
                           : fmt::format(" ({} entered the ILP in {} round{})", r.stats.memory_rows_entered,
                                         r.stats.memory_row_rounds, r.stats.memory_row_rounds == 1 ? "" : "s"));
  }
  out += search_lines(r);
  out += fmt::format("  reductions     {} nodes -> {} solved; {} edges -> {}; {} layers shared; "
                     "{} followers folded\n",
                     r.graph_nodes, r.stats.reduced_nodes, r.unreduced_edges, r.stats.reduced_edges,
                     r.shared_layers, r.folded_followers);
  if (r.sharing_proof) out += sharing_proof_line(*r.sharing_proof);
  out += fmt::format("  ILP size       {} variables, {} constraints before any reduction\n",
                     r.unreduced_variables, r.unreduced_constraints);
  if (r.activation_grad_pairs > 0) {
    out += fmt::format("  pairing        {} activation gradients placed as their activations\n",
                       r.activation_grad_pairs);
  }
  out += fmt::format("  time           build {:.3f} s, solve {:.3f} s\n", r.build_s, r.time_s);
  return out;
}

std::string compare_table(const std::vector<const Plan*>& plans) {
  std::string out = fmt::format("{:<20} {:>14} {:>14} {:>14} {:>14} {:>11}  {}\n", "plan", "step time",
                                "compute", "comm", "peak memory", "recomputed", "fits");
  for (const Plan* p : plans) {
    if (p->choice.empty()) {
      out += fmt::format("{:<20} {:>14} {:>14} {:>14} {:>14} {:>11}  no (needs >= {})\n", p->label, "-",
                         "-", "-", "-", "-",
                         p->shortfall ? planner::format_bytes(p->shortfall->lower_bound_bytes) : std::string("?"));
      continue;
    }
    const PlanSummary& s = p->summary;
    out += fmt::format("{:<20} {:>14} {:>14} {:>14} {:>14} {:>11}  {}\n", p->label, ms(s.step_time_s),
                       ms(s.compute_s), ms(s.comm_s), planner::format_bytes(s.memory.peak),
                       s.recomputed_layers > 0 ? fmt::format("{} layers", s.recomputed_layers)
                                               : std::to_string(s.recomputed),
                       s.fits ? "yes" : "no");
  }
  return out;
}

}  // namespace autopar
