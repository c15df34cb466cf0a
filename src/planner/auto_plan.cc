#include "planner/auto_plan.h"

#include <chrono>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "memory/liveness.h"
#include "planner/cbc_solver.h"
#include "planner/followers.h"
#include "planner/layer_repeats.h"
#include "planner/problem_builder.h"
#include "planner/recompute_choices.h"
#include "planner/sharing_proof.h"
#include "planner/stopwatch.h"

namespace autopar {
namespace {

using planner::seconds_since;

// Layer members share their representative's variables; a member's parameter
// placeholders then follow the representative's matching parameters too.
std::vector<NodeId> sharing_map(const Graph& graph, bool share_layers, bool keep_end_layers,
                                int32_t& shared_layers) {
  LayerRepeats repeats =
      share_layers ? find_layer_repeats(graph, "layers", keep_end_layers) : LayerRepeats{};
  if (!share_layers) {
    repeats.representative.resize(static_cast<size_t>(graph.size()));
    for (NodeId v = 0; v < graph.size(); ++v) repeats.representative[static_cast<size_t>(v)] = v;
  }
  shared_layers = repeats.layers_shared;
  std::vector<NodeId>& rep = repeats.representative;
  for (NodeId v = 0; v < graph.size(); ++v) {
    NodeId r = rep[static_cast<size_t>(v)];
    if (r == v) continue;
    const Node& node = graph.node(v);
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      NodeId in = node.inputs[i];
      NodeId rep_in = graph.node(r).inputs[i];
      if (in != rep_in && graph.node(in).is_placeholder() && graph.node(rep_in).is_placeholder() &&
          graph.node(in).kind == graph.node(rep_in).kind && rep[static_cast<size_t>(in)] == in) {
        rep[static_cast<size_t>(in)] = rep_in;
      }
    }
  }
  return rep;
}

// Strategies of representatives are built once and copied to their members.
Expected<StrategyGraph> build_strategies(const Graph& graph, const DeviceMesh& mesh,
                                         const HardwareProfile& hw, const ShardingOptions& sharding,
                                         const std::vector<NodeId>& rep) {
  if (Status s = check_op_rules(graph); !s) return s.error();
  StrategyGraph sg;
  sg.mesh = mesh;
  sg.sharding = sharding;
  sg.nodes.resize(static_cast<size_t>(graph.size()));
  for (NodeId v = 0; v < graph.size(); ++v) {
    NodeId r = rep[static_cast<size_t>(v)];
    if (r < v) {
      sg.nodes[static_cast<size_t>(v)] = sg.nodes[static_cast<size_t>(r)];
      continue;
    }
    Expected<NodeStrategies> ns = node_strategies(graph, v, mesh, hw, sharding);
    if (!ns) return ns.error();
    if (ns->size() == 0) {
      return make_error("node {} ({}, {}) has no valid strategy on mesh {}", graph.node(v).name,
                        node_op_name(graph.node(v)), to_string(graph.node(v).meta()),
                        mesh_shape_string(mesh));
    }
    sg.nodes[static_cast<size_t>(v)] = std::move(*ns);
  }
  return sg;
}

// A pinned node keeps its own variables unless its representative carries
// exactly the same pins (a pin on one layer must not move every layer).
void unshare_differently_pinned(std::vector<NodeId>& rep,
                                const std::vector<std::vector<StrategyIdx>>& allowed) {
  for (size_t v = 0; v < rep.size(); ++v) {
    auto r = static_cast<size_t>(rep[v]);
    if (r != v && allowed[v] != allowed[r]) rep[v] = static_cast<NodeId>(v);
  }
}

// Per node and strategy, an id per mesh dim for the placements of all its
// tensors there (dim_sweep.h). Layer members copy their representative's.
planner::MeshDimClasses mesh_dim_classes(const StrategyGraph& sg, const std::vector<NodeId>& rep) {
  planner::MeshDimClasses c;
  c.mesh_dims = sg.mesh.ndim();
  c.of_node.resize(sg.nodes.size());
  std::unordered_map<std::string, int32_t> ids;
  std::string key;
  for (size_t v = 0; v < sg.nodes.size(); ++v) {
    auto r = static_cast<size_t>(rep[v]);
    if (r < v) {
      c.of_node[v] = c.of_node[r];
      continue;
    }
    const NodeStrategies& ns = sg.nodes[v];
    const int32_t per = ns.num_inputs + ns.num_outputs;
    ids.clear();
    std::vector<int32_t>& out = c.of_node[v];
    out.reserve(static_cast<size_t>(ns.size() * c.mesh_dims));
    for (StrategyIdx s = 0; s < ns.size(); ++s) {
      for (MeshDim d = 0; d < c.mesh_dims; ++d) {
        key.clear();
        for (int32_t k = 0; k < per; ++k) key.push_back(static_cast<char>(ns.specs[static_cast<size_t>(s * per + k)][d].code()));
        out.push_back(ids.try_emplace(key, static_cast<int32_t>(ids.size())).first->second);
      }
    }
  }
  return c;
}

// Problem nodes past the graph's (recomputation windows) take the classes of
// the node they follow; a doubled node's recomputed strategies those of its
// kept ones.
void extend_for_recompute(const planner::Problem& problem, const RecomputeChoices& recompute,
                          planner::MeshDimClasses& c) {
  const size_t graph_nodes = c.of_node.size();
  for (size_t v = 0; v < graph_nodes; ++v) {
    if (!recompute.doubled(static_cast<NodeId>(v))) continue;
    std::vector<int32_t>& ids = c.of_node[v];
    ids.insert(ids.end(), ids.begin(), ids.end());
  }
  c.of_node.resize(problem.nodes.size());
  for (const planner::Follow& f : problem.follows) {
    if (static_cast<size_t>(f.follower) >= graph_nodes) {
      c.of_node[static_cast<size_t>(f.follower)] = c.of_node[static_cast<size_t>(f.leader)];
    }
  }
}

bool use_sweeps(MeshSolve method, const DeviceMesh& mesh) {
  if (mesh.ndim() < 3) return false;
  return method != MeshSolve::kWhole;
}

// Solves the problem as options.mesh_solve says; records the method and steps.
Expected<planner::Solution> solve(const planner::Problem& problem, const StrategyGraph& sg,
                                  const std::vector<NodeId>& rep, const RecomputeChoices& recompute,
                                  const PlanOptions& options, SolverReport& report) {
  if (!use_sweeps(options.mesh_solve, sg.mesh)) {
    report.method = "whole";
    return planner::solve_validated_with_cbc(problem, options.solver);  // make_plan validated it
  }
  report.method = "sweeps";
  planner::MeshDimClasses classes = mesh_dim_classes(sg, rep);
  extend_for_recompute(problem, recompute, classes);
  Expected<planner::SweepSolution> swept = planner::solve_by_mesh_dim_sweeps(problem, classes, options.solver);
  if (!swept) return swept.error();
  report.sweep_steps = std::move(swept->steps);
  report.sweep_bound = std::move(swept->bound);
  report.sweep_proof = swept->proof;
  return std::move(swept->solution);
}

// The graph nodes' strategies and recomputations from the problem's
// assignment (which also covers the window nodes past the graph's).
void decode_choice(const Graph& graph, const RecomputeChoices& recompute,
                   const std::vector<planner::StrategyIdx>& assignment, Plan& plan) {
  plan.choice.assign(static_cast<size_t>(graph.size()), 0);
  plan.recompute.clear();
  if (recompute.doubled_count() > 0) plan.recompute.assign(static_cast<size_t>(graph.size()), 0);
  for (NodeId v = 0; v < graph.size(); ++v) {
    auto [s, again] = recompute.decode(v, assignment[static_cast<size_t>(v)]);
    plan.choice[static_cast<size_t>(v)] = s;
    if (again) plan.recompute[static_cast<size_t>(v)] = recompute.mode() == RecomputeMode::kFull ? kLayerMark : 1;
  }
}

}  // namespace

std::string_view optimizer_name(Optimizer optimizer) {
  return optimizer == Optimizer::kSgd ? "sgd" : "adamw";
}

std::optional<Optimizer> parse_optimizer(std::string_view name) {
  if (name == "sgd") return Optimizer::kSgd;
  if (name == "adamw") return Optimizer::kAdamW;
  return std::nullopt;
}

std::string_view mesh_solve_name(MeshSolve method) {
  switch (method) {
    case MeshSolve::kAuto: return "auto";
    case MeshSolve::kWhole: return "whole";
    case MeshSolve::kSweeps: return "sweeps";
  }
  return "?";
}

std::optional<MeshSolve> parse_mesh_solve(std::string_view name) {
  for (MeshSolve m : {MeshSolve::kAuto, MeshSolve::kWhole, MeshSolve::kSweeps})
    if (mesh_solve_name(m) == name) return m;
  return std::nullopt;
}

double optimizer_bytes_per_element(Optimizer optimizer) {
  return optimizer == Optimizer::kAdamW ? 8.0 : 0.0;
}

const Sharding& planned_output_sharding(const Plan& plan, NodeId v, int o) {
  return plan.strategies.nodes[static_cast<size_t>(v)].output(plan.choice[static_cast<size_t>(v)], o);
}

RedistributionIndex::RedistributionIndex(const Plan& plan) {
  for (const PlannedRedistribution& r : plan.redistributions) by_consumer_[{r.consumer, r.input}] = &r;
}

const PlannedRedistribution* RedistributionIndex::find(NodeId consumer, int32_t input) const {
  auto it = by_consumer_.find({consumer, input});
  return it == by_consumer_.end() ? nullptr : it->second;
}

Expected<Plan> reprice_plan(const Graph& graph, const Plan& plan, const HardwareProfile& hw) {
  if (plan.choice.empty()) return plan;
  Expected<StrategyGraph> sg = build_strategy_graph(graph, plan.mesh, hw, plan.strategies.sharding);
  if (!sg) return sg.error();
  for (NodeId v = 0; v < graph.size(); ++v) {
    if (sg->nodes[static_cast<size_t>(v)].size() != plan.strategies.nodes[static_cast<size_t>(v)].size()) {
      return make_error("node {} has {} strategies under profile {} but {} in the plan", graph.node(v).name,
                        sg->nodes[static_cast<size_t>(v)].size(), hw.name,
                        plan.strategies.nodes[static_cast<size_t>(v)].size());
    }
  }
  Plan repriced = plan;
  repriced.hardware = hw.name;
  repriced.strategies = std::move(*sg);
  add_update_times(graph, repriced.strategies, hw, plan.optimizer);
  evaluate_plan(graph, repriced);
  return repriced;
}

Expected<Plan> make_plan(const Graph& graph, const PlanOptions& options) {
  auto start = std::chrono::steady_clock::now();
  Expected<DeviceMesh> mesh = make_mesh(options.mesh_shape, options.hardware, options.mesh_options);
  if (!mesh) return mesh.error();
  Plan plan;
  plan.graph_name = graph.name;
  plan.label = options.label;
  plan.mesh = *mesh;
  plan.hardware = options.hardware.name;
  plan.optimizer = options.optimizer;
  plan.summary.memory_budget = options.memory_budget_bytes.value_or(options.hardware.memory_bytes);

  std::vector<NodeId> rep = sharing_map(graph, options.share_layers, options.own_end_layers,
                                        plan.solver.shared_layers);
  Expected<StrategyGraph> sg = build_strategies(graph, *mesh, options.hardware, options.sharding, rep);
  if (!sg) return sg.error();
  add_update_times(graph, *sg, options.hardware, options.optimizer);
  plan.strategies = std::move(*sg);
  Expected<std::vector<std::vector<StrategyIdx>>> allowed =
      resolve_pins(graph, plan.strategies, options.pins);
  if (!allowed) return allowed.error();
  unshare_differently_pinned(rep, *allowed);

  RedistributionCache cache(*mesh);
  ProblemBuildOptions build_options;
  build_options.optimizer_bytes_per_element = optimizer_bytes_per_element(options.optimizer);
  build_options.memory_budget = plan.summary.memory_budget;
  build_options.pair_activation_grads = options.pair_activation_grads;
  if (options.recompute != RecomputeMode::kNone && options.fold_followers) {
    return make_error_of(ErrorKind::kUsage,
                         "--recompute {} cannot be combined with --fold-followers: folded followers take "
                         "their producer's strategy list, which recomputation doubles; leave one out",
                         recompute_mode_name(options.recompute));
  }
  const RecomputeChoices recompute(graph, plan.strategies, rep, options.recompute);
  build_options.recompute = &recompute;
  BuiltProblem built = build_problem(graph, plan.strategies, rep, *allowed, cache, build_options);
  plan.solver.recompute_mode = recompute_mode_name(options.recompute);
  plan.solver.recompute_candidates = built.recompute_candidates;
  plan.solver.recomputable = built.recomputable;
  if (options.fold_followers) {
    std::vector<planner::Follow> followers = find_followers(graph, plan.strategies, rep, *allowed);
    plan.solver.folded_followers = static_cast<int32_t>(followers.size());
    for (planner::Follow& f : followers) built.problem.follows.push_back(std::move(f));
  }
  if (Status s = planner::validate(built.problem); !s) {
    return make_error_of(ErrorKind::kInternal, "internal error: the sharding problem is malformed: {}",
                         s.error().message);
  }
  if (!options.dump_ilp_path.empty()) {
    if (Status s = planner::dump_ilp(built.problem, options.dump_ilp_path); !s) return s.error();
  }
  plan.solver.build_s = seconds_since(start);
  plan.solver.graph_nodes = graph.size();
  plan.solver.problem_nodes = static_cast<int32_t>(built.problem.nodes.size());
  plan.solver.problem_edges = static_cast<int32_t>(built.problem.edges.size());
  plan.solver.unreduced_edges = built.unreduced_edges;
  plan.solver.unreduced_variables = built.unreduced_variables;
  plan.solver.unreduced_constraints = built.unreduced_constraints;
  plan.solver.activation_grad_pairs = built.activation_grad_pairs;
  plan.solver.memory_points = static_cast<int32_t>(built.problem.live_points.size());

  // The memory rows leave out the comm buffers (problem_builder.h): a plan
  // they push over the budget is solved again with the rows' budget lowered
  // by the excess, a bounded number of times (deterministic either way).
  // When a lowered budget admits nothing (a work limit can stop a round
  // short of a plan that fits), the previous round's plan stands, marked as
  // not fitting.
  constexpr int kCommBufferRounds = 3;
  std::vector<StrategyIdx> previous;
  std::vector<char> previous_recompute;
  SolverReport previous_report;
  for (int round = 0;; ++round) {
    Expected<planner::Solution> solution =
        solve(built.problem, plan.strategies, rep, recompute, options, plan.solver);
    if (!solution) return solution.error();
    plan.solver.status = planner::status_text(solution->status, solution->stopped_by);
    plan.solver.stopped_by = solution->stopped_by;
    plan.solver.time_limit_s = options.solver.time_limit_s;
    plan.solver.objective = solution->objective;
    plan.solver.best_bound = solution->best_bound;
    plan.solver.gap = solution->gap;
    plan.solver.time_s += solution->stats.solve_s;
    plan.solver.stats = solution->stats;
    plan.solver.message = solution->message;
    plan.solver.comm_buffer_rounds = round;
    if (solution->assignment.empty() && !previous.empty()) {
      std::string refused = plan.solver.status;
      double time_s = plan.solver.time_s;
      plan.solver = std::move(previous_report);
      plan.solver.time_s = time_s;
      plan.solver.comm_buffer_rounds = round;
      plan.choice = std::move(previous);
      plan.recompute = std::move(previous_recompute);
      evaluate_plan(graph, plan);
      plan.solver.message = fmt::format(
          "the comm buffers put this plan {:.0f} bytes over the budget, and a re-solve with the "
          "budget lowered by that found no plan ({})",
          plan.summary.memory.peak - plan.summary.memory_budget, refused);
      return plan;
    }
    if (solution->assignment.empty()) {
      plan.choice.clear();
      plan.shortfall = solution->shortfall;
      plan.summary.fits = false;
      if (!plan.shortfall) {
        return make_error_of(ErrorKind::kInfeasible, "the solver found no plan ({}): {}", plan.solver.status,
                             solution->message);
      }
      return plan;
    }
    decode_choice(graph, recompute, solution->assignment, plan);
    evaluate_plan(graph, plan);
    double excess = plan.summary.memory.peak - plan.summary.memory_budget;
    if (excess <= 0 || round == kCommBufferRounds) {
      if (options.prove_sharing)
        prove_sharing(graph, built.problem, *allowed, cache, build_options, options.solver, *solution, plan);
      return plan;
    }
    previous = plan.choice;
    previous_recompute = plan.recompute;
    previous_report = plan.solver;
    built.problem.memory_budget -= excess;
  }
}

}  // namespace autopar
