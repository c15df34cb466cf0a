// Auto-sharding: from a joint graph, a mesh and a hardware profile to a plan.
//
// make_plan builds every node's strategies (sharding/strategy.h) and the edge
// resharding matrices, turns them into the solver's IR-free Problem
// (problem.h) with the step's memory — parameters, gradients and optimizer
// state resident all step, activations live over their liveness intervals —
// and solves it with CBC. Repeated layers share variables (layer_repeats.h),
// which shrinks the ILP by the layer count without changing what a node may do.
// Gradients are paired with their parameters: the edge from a gradient to its
// parameter costs the redistribution into the parameter's sharding (the
// reduce-scatter of FSDP, the all-reduce of DDP).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cost/compute_cost.h"
#include "cost/hardware.h"
#include "ir/graph.h"
#include "memory/recompute.h"
#include "memory/step_memory.h"
#include "planner/dim_sweep.h"
#include "planner/pins.h"
#include "planner/solver.h"
#include "sharding/mesh.h"
#include "sharding/redistribute.h"
#include "sharding/strategy.h"

namespace autopar {

// How the ILP is solved: whole, or by mesh-dim neighbourhoods (dim_sweep.h).
// kAuto: whole on meshes of one or two dims, sweeps on three or more.
enum class MeshSolve : uint8_t { kAuto, kWhole, kSweeps };
std::string_view mesh_solve_name(MeshSolve method);  // "auto", "whole", "sweeps"
std::optional<MeshSolve> parse_mesh_solve(std::string_view name);
std::string_view optimizer_name(Optimizer optimizer);  // "sgd", "adamw"
std::optional<Optimizer> parse_optimizer(std::string_view name);
// Optimizer state bytes per parameter element: AdamW keeps two f32 moments.
double optimizer_bytes_per_element(Optimizer optimizer);

struct PlanOptions {
  std::vector<int64_t> mesh_shape;
  MeshOptions mesh_options;
  HardwareProfile hardware;
  std::optional<double> memory_budget_bytes;  // per device; default hardware.memory_bytes
  Optimizer optimizer = Optimizer::kAdamW;
  std::vector<PinSpec> pins;
  planner::SolverOptions solver;
  bool share_layers = true;
  // The first and last layers keep their own variables (layer_repeats.h).
  bool own_end_layers = false;
  // After a whole solve with shared layers: prove the plan optimal for the
  // unshared problem, or find the cheaper unshared plan (sharing_proof.h).
  bool prove_sharing = false;
  // Views / unary pointwise ops follow their producer (followers.h). Off by
  // default: faster, but not exact (llama3-8b 8x8: +2.3% step time).
  bool fold_followers = false;
  // Each activation's gradient pairs with its placement (problem_builder.h).
  // Off by default: the joint graph's redistributions are priced either way.
  bool pair_activation_grads = false;
  MeshSolve mesh_solve = MeshSolve::kAuto;
  // Which forward activations may be recomputed in the backward instead of
  // kept (recompute_choices.h): none, chosen by the ILP (auto), or all (full).
  RecomputeMode recompute = RecomputeMode::kNone;
  // Uneven shards allowed unless even_only (sharding/placement.h).
  ShardingOptions sharding;
  std::string dump_ilp_path;  // non-empty: write the ILP there (.lp or .mps)
  std::string label = "solved";  // "solved" or the baseline's name
};

// Per device at the step's peak, as memory/step_memory.h counts it: the parts
// held at the peak position (params, optimizer, inputs, grads, activations,
// comm buffers) and their total.
struct MemoryBreakdown : MemoryParts {
  double peak = 0;             // the total at peak_position
  int32_t peak_position = -1;  // execution position (node id) of the peak
};

struct CommVolume {
  Collective collective = Collective::kAllGather;
  MeshDim mesh_dim = 0;
  int32_t count = 0;
  double buffer_bytes = 0;  // sum of B
  double sent_bytes = 0;
  double time_s = 0;
};

// Nodes of one aten op that ran through the generic path (OpId::kGeneric):
// replicated on every device. compute_s is their compute at that layout,
// input_comm_s what redistributing their inputs to whole tensors costs: what a
// real sharding rule for the op could save.
struct GenericOpUse {
  std::string op;  // "aten.triu.default"
  int32_t nodes = 0;
  double compute_s = 0;
  double input_comm_s = 0;
};

struct PlanSummary {
  double step_time_s = 0;  // compute + comm + optimizer (no overlap assumed)
  double compute_s = 0;
  double comm_s = 0;
  double optimizer_s = 0;  // every parameter's update on its local shard
  MemoryBreakdown memory;
  double memory_budget = 0;
  bool fits = true;
  std::vector<CommVolume> comm;  // by collective then mesh dim
  std::vector<GenericOpUse> generic_ops;  // by input_comm_s + compute_s, largest first
  int32_t uneven_nodes = 0;  // nodes holding a result or operand in uneven pieces (placement.h)
  // Recomputation (memory/recompute.h): the roots recomputed, and what their
  // re-runs cost (compute, and redistributions, both also in compute_s and
  // comm_s above).
  int32_t recomputed = 0;
  int32_t recomputed_layers = 0;  // --recompute full: the whole layers re-run
  double recompute_compute_s = 0;
  double recompute_comm_s = 0;
  double peak_without_recompute = 0;  // the same choice's peak with every activation kept
};

struct PlannedRedistribution {
  NodeId producer = kNoNode;
  NodeId consumer = kNoNode;  // for a gradient->parameter pairing: the param placeholder
  int32_t input = 0;          // operand index of consumer; -1 for the pairing
  int32_t output_index = 0;
  Sharding from, to;
  RedistPlan plan;
};

// What PlanOptions::prove_sharing found (sharing_proof.h).
struct SharingProof {
  // "exact": no unshared plan is cheaper; "improved": a cheaper unshared plan
  // fits and replaced the shared one (it is the unshared optimum);
  // "cheaper plan over budget": the unshared problem without memory rows has
  // a cheaper plan that does not fit, so the optimum lies between;
  // "not proven": pruning left too much or a limit stopped the proof;
  // "not run: <why>": it does not apply (no shared layers, mesh-dim sweeps,
  // recomputation, folded followers).
  std::string verdict;
  double shared_objective = 0;  // seconds, the plan the shared problem gave
  double bound = 0;             // seconds, a lower bound on every unshared plan
  double unshared_objective = 0;  // seconds, the cheapest unshared plan found (memory aside)
  int64_t variables = 0;        // of the unshared ILP
  int64_t variables_left = 0;   // after pruning to the shared plan's cost
  double seconds = 0;
};

struct SolverReport {
  std::string status;  // planner::status_text: "optimal", "feasible (node limit)", ...
  planner::StopReason stopped_by = planner::StopReason::kCompleted;
  double time_limit_s = 0;  // the wall-clock valve it ran under (for the warning when it fired)
  double objective = 0;
  double best_bound = 0;
  double gap = 0;
  double time_s = 0;   // CBC
  double build_s = 0;  // strategies, edges, problem
  int32_t graph_nodes = 0;
  int32_t problem_nodes = 0;    // = graph nodes
  int32_t problem_edges = 0;    // after merging repeated layers
  int32_t unreduced_edges = 0;  // one per operand plus gradient pairings
  int64_t unreduced_variables = 0;    // the ILP with no reduction (problem_builder.h)
  int64_t unreduced_constraints = 0;
  int32_t shared_layers = 0;
  int32_t folded_followers = 0;  // nodes merged into their producer (followers.h)
  int32_t activation_grad_pairs = 0;  // gradient links paired (0 unless asked)
  int32_t memory_points = 0;    // time points given to the solver
  std::string recompute_mode = "none";  // --recompute
  int32_t recompute_candidates = 0;     // memory/recompute.h
  int32_t recomputable = 0;             // candidates the ILP could choose (recompute_choices.h)
  // Solves again because the comm buffers, which the memory rows leave out,
  // pushed the solved plan over the budget (auto_plan.cc).
  int32_t comm_buffer_rounds = 0;
  std::string method = "whole";  // "whole" ILP, or "sweeps" (mesh-dim neighbourhoods)
  std::vector<planner::SweepStep> sweep_steps;  // with "sweeps", in order
  std::optional<planner::RelaxationBound> sweep_bound;  // with "sweeps" (dim_sweep.h)
  std::optional<planner::SweepProof> sweep_proof;
  std::optional<SharingProof> sharing_proof;  // with PlanOptions::prove_sharing
  planner::SolveStats stats;
  std::string message;
};

struct Plan {
  std::string graph_name;
  std::string label;
  DeviceMesh mesh;
  std::string hardware;
  Optimizer optimizer = Optimizer::kAdamW;
  StrategyGraph strategies;
  std::vector<StrategyIdx> choice;  // per node
  // Per node: 1 = a recomputation candidate dropped after the forward and
  // re-run before the backward (memory/recompute.h). Empty: none.
  std::vector<char> recompute;
  std::vector<PlannedRedistribution> redistributions;
  PlanSummary summary;
  SolverReport solver;
  std::optional<planner::MemoryShortfall> shortfall;  // set when nothing fits
};

// The sharding output `o` of node v takes in a plan with a choice.
const Sharding& planned_output_sharding(const Plan& plan, NodeId v, int o = 0);

// The plan's redistributions by (consumer, input); input -1: a gradient or
// buffer update to its placeholder's sharding (the plan's pairing). Holds
// pointers into the plan.
class RedistributionIndex {
 public:
  explicit RedistributionIndex(const Plan& plan);
  const PlannedRedistribution* find(NodeId consumer, int32_t input) const;

 private:
  std::map<std::pair<NodeId, int32_t>, const PlannedRedistribution*> by_consumer_;
};

// Errors: bad mesh, unknown pin target, ops without rules, malformed problem.
// An infeasible memory budget is not an error: the plan has summary.fits =
// false, no choice, and a shortfall saying the least budget that would fit.
Expected<Plan> make_plan(const Graph& graph, const PlanOptions& options);

// The same choice priced with another profile's op times (the mesh and its
// links kept): strategies rebuilt with `hw` (enumerated alike for the same
// graph and mesh, so the choice carries over), then evaluate_plan. Used for a
// run whose footprint meets its operands warm (hardware.h
// operands_for_footprint).
Expected<Plan> reprice_plan(const Graph& graph, const Plan& plan, const HardwareProfile& hw);

// Summary, redistributions and memory of a given choice (used by make_plan,
// and by tests to check the solver's objective against direct evaluation).
void evaluate_plan(const Graph& graph, Plan& plan);

// The step's memory timeline of a plan with a choice and its redistributions
// (memory/step_memory.h); empty when the plan has no choice. `device` (a mesh
// coordinate) counts that device's own uneven pieces instead of the padded ones.
MemoryTimeline plan_memory(const Graph& graph, const Plan& plan, const std::vector<int64_t>* device = nullptr);

}  // namespace autopar
