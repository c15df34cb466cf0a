// The options every planning subcommand shares (plan, compare, and later run,
// explain, report): the mesh, the hardware profile, the memory budget, the
// optimizer, pins, a baseline, and the solver's limits; and the one function
// that turns them (plus a loaded graph) into the planner's PlanOptions.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "ir/expected.h"
#include "graph_options.h"
#include "ir/graph.h"
#include "planner/auto_plan.h"

namespace autopar {

struct PlanCliOptions {
  std::string mesh = "8x8";
  std::string mesh_names;       // "dp,tp"
  int intra_node_dims = -1;     // -1: derive from devices_per_node
  std::string hardware = "h100";
  double memory_gb = 0;         // 0: the profile's device memory
  std::string optimizer = "adamw";
  std::vector<std::string> pins;
  std::string constraints_file;
  std::string baseline;         // "" = solve freely
  // Work limits (deterministic) and the wall-clock valve: planner/solver.h.
  int64_t max_nodes = planner::kDefaultMaxNodes;
  int64_t max_lp_iterations = planner::kDefaultMaxLpIterations;
  double time_limit_s = planner::kDefaultTimeLimitS;
  int threads = 1;
  std::vector<std::string> cbc_options;  // --cbc-option NAME=VALUE
  bool no_reduced_cost_fixing = false;   // --no-reduced-cost-fixing
  bool no_target_pruning = false;        // --no-target-pruning
  std::string sweep_proof = "bound";     // --sweep-proof
  bool solver_log = false;               // --solver-log: CBC's and Clp's own log on stdout
  std::string dump_ilp;
  bool no_share_layers = false;
  bool own_end_layers = false;
  bool prove_sharing = false;
  bool even_only = false;
  bool quiet = false;  // --quiet: no solver progress line on a terminal
  bool fold_followers = false;
  bool pair_activation_grads = false;
  std::string mesh_solve = "auto";
  std::string recompute = "none";
};

void add_plan_options(CLI::App& app, PlanCliOptions& options, bool with_baseline = true);

// Mesh, hardware, pins (command line, constraints file, baseline) -> PlanOptions.
Expected<PlanOptions> to_plan_options(const PlanCliOptions& cli, const Graph& graph);

// The planning subcommands' common start (plan, explain, report): load the
// graph (llama3-8b, the main job's model, when neither --model nor --graph is
// given), turn the options into PlanOptions, and plan.
struct PlannedGraph {
  Graph graph;
  PlanOptions options;
  Plan plan;
};
Expected<PlannedGraph> load_and_plan(GraphOptions graph_options, const PlanCliOptions& cli);

}  // namespace autopar
