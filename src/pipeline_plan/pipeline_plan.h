// Pipeline and SPMD sharding planned together (3-D parallelism).
//
// The pipeline runs along mesh dim 0, the outermost and slowest link: its
// size A is split into `degree` groups of A/degree, and each stage runs on one
// group's SPMD sub-mesh (A/degree x B x ..., a dim of 1 dropped). The graph is
// one microbatch's joint forward and backward (the batch divided by the
// microbatch count), cut into degree x stages_per_rank stages at layer
// boundaries by cost (pipeline/stages.h), its backward given to stages as the
// stage runtime gives it (pipeline_runtime/partition.h).
//
// The sharding: the microbatch graph is planned once on the sub-mesh
// (planner/auto_plan.h), so stages with the same layer pattern share one solve,
// as the shared-layer ILP makes them. A stage's costs come from that plan:
//   F   its forward nodes' compute and their inputs' redistributions;
//   B   its backward nodes' (I: those the input gradient it sends needs; W: the
//       rest, for zero-bubble schedules);
//   comm  a point-to-point send over dim 0's link of each boundary value,
//       at its planned local size (the sharded activation, or its gradient);
// while the gradient reductions to the parameters' placements and the
// optimizer's update run once per step, after the last microbatch. The step
// time is the schedule simulator's makespan on those durations, plus the
// slowest rank's gradient reductions and updates.
//
// Memory per rank: the stage runtime's memory model (pipeline_runtime/
// pipeline_memory.h) walked over the rank's actions with this plan's local
// sizes: its stages' parameters and optimizer state, gradient sums in their
// producers' shardings (reduced once per step), the activations each
// microbatch in flight keeps for its backward, the buffers sent and received,
// and the copies redistributions make while a node runs. A 3-D run
// (pipeline_runtime/grid_run.h) holds exactly this and checks it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/expected.h"
#include "ir/graph.h"
#include "pipeline/schedule.h"
#include "pipeline/simulate.h"
#include "pipeline_runtime/pipeline_memory.h"
#include "planner/auto_plan.h"

namespace autopar {

struct PipelineOptions {
  int32_t degree = 1;  // pipeline ranks along mesh dim 0 (N); divides dim 0
  pipeline::ScheduleKind schedule = pipeline::ScheduleKind::k1F1B;
  int32_t microbatches = 1;     // M; the graph given is one microbatch
  int32_t stages_per_rank = 1;  // V (> 1 only for interleaved 1F1B)
  // An expert layout for every stage group instead of a free solve
  // (planner/baselines.h, applied on the sub-mesh): with degree N on an
  // AxBxC mesh, "fsdp-tp" is torchtitan's ppN x dp_shard(A/N x B) x tp(C).
  std::string baseline;
  // The stage cut as units per stage (a plan read back); empty: cut by cost.
  std::vector<std::vector<std::string>> stage_units;
  // Whole-layer recomputation in every stage (--recompute full;
  // pipeline_runtime/stage_recompute.h): the re-runs are in the stages'
  // backward durations and the memory walk. The stage groups are solved
  // keeping every activation.
  bool recompute_layers = false;
};

struct PipelineStageCost {
  int32_t stage = 0;
  int32_t rank = 0;  // pipeline rank (group along dim 0)
  std::vector<std::string> units;  // "layers.0", ...
  int32_t nodes = 0;
  pipeline::Durations durations;   // per microbatch: F, B, I, W, and comm (the send)
  double send_bytes = 0;           // per microbatch, forward boundary values (local)
  double send_grad_bytes = 0;      // per microbatch, gradients sent back (local)
  double grad_sync_s = 0;          // per step: gradients to their parameters' placements
  double optimizer_s = 0;          // per step
  double static_bytes = 0;         // params + optimizer state + gradient sums (producers' shardings)
  double param_bytes = 0;          // of those: the params
  double grad_bytes = 0;           // and the gradient sums
  double saved_bytes = 0;          // activations saved for the backward, per microbatch
};

struct PipelinePlan {
  PipelineOptions options;
  std::vector<int64_t> mesh;      // the whole mesh; dim 0 holds the pipeline
  std::vector<int64_t> sub_mesh;  // each stage group's SPMD mesh
  Plan spmd;                      // the microbatch graph on the sub-mesh
  std::vector<PipelineStageCost> stages;
  pipeline::Schedule schedule;    // lowered (with sends and receives)
  pipeline::SimulationResult simulation;
  double step_time_s = 0;         // makespan + slowest rank's grad sync and updates
  std::vector<double> rank_peak_bytes;  // per pipeline rank
  std::vector<pipeline::RankMemory> rank_memory;  // the same peaks, by kind and where reached
  // The stage running each node of the microbatch graph (-1: none: a
  // placeholder every stage reads, or a node no stage needs).
  std::vector<int32_t> node_stage;
  double memory_budget = 0;
  bool fits = true;
};

// `graph` is one microbatch; options.mesh_shape the whole mesh (dim 0 holds
// the pipeline). Errors: a degree that does not divide dim 0, too few layers
// for the stages, a schedule the microbatch count cannot make, a failed solve.
// `solved`: the plan of `graph` on the sub-mesh, from solve_stage_groups,
// when the caller already has it (the schedule, microbatch count for a given
// graph, and stages per rank do not change it); else it is solved here.
Expected<PipelinePlan> make_pipeline_plan(const Graph& graph, const PlanOptions& options,
                                          const PipelineOptions& pipeline, const Plan* solved = nullptr);
// The microbatch graph planned on a stage group's mesh for this degree (the
// baseline's layout when one is given). options.pins name the stage groups'
// mesh (the sub-mesh), not the whole one.
// The options each stage group is solved with: the sub-mesh (dim 0's name
// dropped), the budget times the degree, as a device holds about 1/degree
// of the model while the solve sees the whole graph, and a baseline's pins.
Expected<PlanOptions> stage_group_options(const Graph& graph, const PlanOptions& options, int32_t degree,
                                          const std::string& baseline = "");
Expected<Plan> solve_stage_groups(const Graph& graph, const PlanOptions& options, int32_t degree,
                                  const std::string& baseline = "");

// --pipeline auto: every degree that divides mesh dim 0 (at least 2, at most
// the graph's layer units), microbatch counts of 1, 2 and 4 times the degree
// that the batch allows, and every schedule (interleaved with 2 stages per
// rank where the microbatches allow); one solve per (degree, microbatches),
// shared by its schedules. What the user fixed stays fixed. The fastest plan
// whose ranks fit wins (the fastest of all when none fits); ties keep the
// earlier candidate in that order.
struct PipelineSearchSpace {
  std::optional<int32_t> degree;                   // else every divisor of dim 0 from 2
  std::optional<int32_t> microbatches;             // else 1, 2 and 4 times the degree
  std::optional<pipeline::ScheduleKind> schedule;  // else all four
  int32_t interleaved_stages_per_rank = 2;         // V of an interleaved candidate
  std::string baseline;  // every candidate's stage groups take that expert layout
  bool recompute_layers = false;  // every candidate re-runs whole layers (PipelineOptions)
};
struct PipelineCandidate {
  PipelineOptions options;
  double step_time_s = 0;
  double peak_bytes = 0;  // the largest rank's
  bool fits = false;
  std::string refused;    // why the candidate could not be built ("" when planned)
};
struct PipelineSearch {
  Graph graph;  // the best plan's microbatch graph
  PipelinePlan best;
  std::vector<PipelineCandidate> candidates;  // in search order
};
// microbatch_graph(M): the model built for one of M microbatches (an error
// when the batch does not split into M).
using MicrobatchGraph = std::function<Expected<Graph>(int32_t microbatches)>;
Expected<PipelineSearch> search_pipeline(const MicrobatchGraph& microbatch_graph, const PlanOptions& options,
                                         const PipelineSearchSpace& space = {});
// The candidates as a table for people.
std::string pipeline_candidates_table(const PipelineSearch& search);

// The plan's figures with the profile's warm op times when every rank's
// working set fits the cache the calibration measured (hardware.h
// operands_for_footprint); the plan itself (cut, sharding) is unchanged. A
// rank's working set is what one microbatch's forward and backward touch:
// its stages' params and gradient sums and the largest stage's saved
// activations (the other microbatches' saved activations and the optimizer
// state wait untouched, so they do not push the operands out of cache).
Expected<PipelinePlan> price_for_footprint(const Graph& graph, const PlanOptions& options, const PipelinePlan& plan);

// One rank's block of every value under a stage group's plan, and the copies
// its redistributions make: the memory model's sizes for a 3-D run
// (pipeline_runtime/pipeline_memory.h). Holds references to both arguments.
pipeline::ShardedValues sharded_values(const Graph& graph, const Plan& plan);

// A torchtitan-style layout named by its degrees, as `--baseline` takes it:
// "pp8-fsdp8-tp8", "pp2-fsdp16", "fsdp8-tp8", "pp4-tp8", "pp2-ddp4" (each part
// optional, in that order, ddp or fsdp). pp runs along mesh dim 0 (it must
// divide it); on the stage groups' mesh (dim 0 / pp, the others) tp is the
// last dim and fsdp/ddp all the others, and the degrees must be those sizes.
struct DegreeLayout {
  int32_t pipeline = 1;       // 1: no pipeline
  std::string stage_baseline;  // planner/baselines.h: fsdp, ddp, tp, fsdp-tp
};
// nullopt: not such a name (a plain baseline, e.g. "fsdp"). Errors: such a
// name whose degrees do not fit the mesh, saying which size each must be.
Expected<std::optional<DegreeLayout>> parse_degree_layout(const std::string& name, const std::vector<int64_t>& mesh);

// The pipeline section of a plan JSON, read back for `autopar run --plan`:
// nullopt when the plan has none (an SPMD-only plan); errors name the field.
struct PipelineSection {
  PipelineOptions options;  // degree, schedule, microbatches, stages per rank, stage units
  std::vector<int64_t> mesh, sub_mesh;
};
Expected<std::optional<PipelineSection>> read_pipeline_section(const std::string& json_text);

// The stage groups' mesh: dim 0 divided by the degree, a dim of 1 dropped
// (a 1-D mesh whose whole dim 0 is the pipeline leaves one device: {1}).
Expected<std::vector<int64_t>> pipeline_sub_mesh(const std::vector<int64_t>& mesh, int32_t degree);

// Text for people (stages, their costs, the schedule's figures) and the
// plan JSON's "pipeline" section (docs/plan-format.md).
std::string pipeline_plan_summary(const Graph& graph, const PipelinePlan& plan);
// Why a plan that does not fit does not: its largest rank's need and stages
// against the budget, and what to change.
std::string pipeline_overflow(const PipelinePlan& plan);
// `explain --memory` for a pipeline: each pipeline rank's predicted peak per
// device by kind (the 3-D runtime's model), where it is reached, its margin
// to the budget, and what would lower the largest.
std::string pipeline_memory_text(const PipelinePlan& plan);
// `explain --node` for a pipeline: the stage and pipeline rank running the
// node, and that stage's per-microbatch times. Errors: an unknown node.
Expected<std::string> pipeline_node_text(const Graph& graph, const PipelinePlan& plan, std::string_view node);
std::string pipeline_plan_json(const Graph& graph, const PipelinePlan& plan);

}  // namespace autopar
