// The pipeline plan as text for people and as the plan JSON's pipeline section.
#include <algorithm>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "pipeline_plan/pipeline_plan.h"
#include "planner/plan_output.h"

namespace autopar {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::string units_text(const std::vector<std::string>& units) {
  if (units.size() <= 3) return fmt::format("{}", fmt::join(units, ", "));
  return fmt::format("{} .. {} ({} units)", units.front(), units.back(), units.size());
}

// The global device ids of pipeline rank r's group: every device whose dim-0
// coordinate falls in the rank's slice of dim 0 (row-major device order).
std::vector<int64_t> group_devices(const std::vector<int64_t>& mesh, int32_t degree, int32_t rank) {
  int64_t per_group_rows = mesh[0] / degree, inner = 1;
  for (size_t d = 1; d < mesh.size(); ++d) inner *= mesh[d];
  std::vector<int64_t> devices;
  for (int64_t row = rank * per_group_rows; row < (rank + 1) * per_group_rows; ++row) {
    for (int64_t i = 0; i < inner; ++i) devices.push_back(row * inner + i);
  }
  return devices;
}

}  // namespace

std::string pipeline_plan_summary(const Graph& graph, const PipelinePlan& plan) {
  const PipelineOptions& o = plan.options;
  std::string out = fmt::format(
      "pipeline: degree {} along mesh dim 0, stage groups on mesh {} ({}), schedule {}, {} microbatches, {} "
      "stage(s) per rank{}\n",
      o.degree, fmt::join(plan.sub_mesh, "x"), o.baseline.empty() ? "solved" : "baseline " + o.baseline,
      pipeline::schedule_kind_name(o.schedule), o.microbatches, o.stages_per_rank,
      o.recompute_layers ? ", whole layers recomputed in each stage's backward (B includes the re-runs)" : "");
  out += fmt::format("{:>5} {:>4}  {:<36} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>11} {:>11}\n", "stage", "rank",
                     "units", "nodes", "F ms", "B ms", "send ms", "sync ms", "update ms", "static MiB",
                     "saved MiB");
  for (const PipelineStageCost& s : plan.stages) {
    out += fmt::format("{:>5} {:>4}  {:<36} {:>6} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>10.3f} {:>11.2f} {:>11.2f}\n",
                       s.stage, s.rank, units_text(s.units), s.nodes, s.durations.f * 1e3, s.durations.b * 1e3,
                       s.durations.comm * 1e3, s.grad_sync_s * 1e3, s.optimizer_s * 1e3, s.static_bytes / kMiB,
                       s.saved_bytes / kMiB);
  }
  out += "(F, B and send per microbatch; gradient sync and the update once per step; saved: activations kept for "
         "the backward, per microbatch)\n";
  for (size_t r = 0; r < plan.rank_peak_bytes.size(); ++r) {
    out += fmt::format("rank {}: peak {:.2f} MiB ({} microbatch(es) in flight)\n", r,
                       plan.rank_peak_bytes[r] / kMiB, plan.simulation.peak_in_flight[r]);
  }
  out += fmt::format("step time {:.3f} ms: schedule makespan {:.3f} ms (bubble {:.1f}%) + slowest rank's gradient "
                     "sync and update {:.3f} ms\n",
                     plan.step_time_s * 1e3, plan.simulation.makespan * 1e3,
                     plan.simulation.bubble_fraction() * 100, (plan.step_time_s - plan.simulation.makespan) * 1e3);
  out += fmt::format("memory budget {:.2f} GB per device: {}\n", plan.memory_budget / 1e9,
                     plan.fits ? "fits" : "DOES NOT FIT");
  out += fmt::format("\nEach stage group's sharding (one microbatch, every stage; its memory line counts the whole "
                     "graph against {} x the budget):\n", o.degree);
  out += plan_to_summary(graph, plan.spmd);
  return out;
}

std::string pipeline_overflow(const PipelinePlan& plan) {
  size_t worst = 0;
  for (size_t r = 0; r < plan.rank_peak_bytes.size(); ++r) {
    if (plan.rank_peak_bytes[r] > plan.rank_peak_bytes[worst]) worst = r;
  }
  return fmt::format("pipeline rank {} (stages {}) needs {:.2f} MiB per device at the planned sharding, over the "
                     "budget of {:.2f} MiB: give more memory (--memory-gb), more microbatches, a higher --pipeline "
                     "degree or a larger mesh",
                     worst, fmt::join(plan.schedule.stages_of(static_cast<int32_t>(worst)), ", "),
                     plan.rank_peak_bytes[worst] / kMiB, plan.memory_budget / kMiB);
}

std::string pipeline_memory_text(const PipelinePlan& plan) {
  std::string out = fmt::format(
      "memory per device by pipeline rank (the 3-D runtime's model: a rank's stages at the plan's local sizes, "
      "the microbatches its schedule keeps in flight; budget {:.2f} MiB):\n",
      plan.memory_budget / kMiB);
  size_t worst = 0;
  for (size_t r = 0; r < plan.rank_memory.size(); ++r) {
    const pipeline::RankMemory& m = plan.rank_memory[r];
    if (m.peak_bytes > plan.rank_memory[worst].peak_bytes) worst = r;
    const double peak = static_cast<double>(m.peak_bytes);
    out += fmt::format("rank {} (stages {}): peak {:.2f} MiB, {}; reached at {} with {} microbatch(es) in flight\n",
                       r, fmt::join(plan.schedule.stages_of(static_cast<int32_t>(r)), ", "), peak / kMiB,
                       peak <= plan.memory_budget
                           ? fmt::format("{:.2f} MiB under the budget", (plan.memory_budget - peak) / kMiB)
                           : fmt::format("OVER the budget by {:.2f} MiB", (peak - plan.memory_budget) / kMiB),
                       m.peak_action, plan.simulation.peak_in_flight[r]);
    out += fmt::format("  held at the peak: {}\n", pipeline::describe_parts(m));
  }
  if (plan.rank_memory.empty()) return out;
  // The kind that weighs most at the largest peak says which knob moves it.
  const pipeline::RankMemory& m = plan.rank_memory[worst];
  size_t heaviest = 0;
  for (size_t k = 0; k < pipeline::kPipelineMemoryKinds; ++k) {
    if (m.at_peak[k] > m.at_peak[heaviest]) heaviest = k;
  }
  const auto kind = static_cast<pipeline::PipelineMemoryKind>(heaviest);
  std::string knob;
  switch (kind) {
    case pipeline::PipelineMemoryKind::kActivation:
    case pipeline::PipelineMemoryKind::kReceived:
      knob = "more microbatches (smaller ones) or a schedule that keeps fewer in flight (1f1b, zb-h1)";
      break;
    case pipeline::PipelineMemoryKind::kParam:
    case pipeline::PipelineMemoryKind::kOptimizer:
    case pipeline::PipelineMemoryKind::kGradSum:
      knob = "a higher --pipeline degree (fewer layers per rank) or sharding the parameters over the stage group";
      break;
    default:
      knob = "a sharding with fewer redistributions (see explain --node on the largest)";
  }
  out += fmt::format("largest: rank {}, mostly {} ({:.1f}% of its peak); what lowers it: {}\n", worst,
                     pipeline::pipeline_memory_kind_name(kind),
                     100.0 * static_cast<double>(m.at_peak[heaviest]) / static_cast<double>(std::max<int64_t>(1, m.peak_bytes)),
                     knob);
  return out;
}

Expected<std::string> pipeline_node_text(const Graph& graph, const PipelinePlan& plan, std::string_view node) {
  std::optional<NodeId> id = graph.find(node);
  if (!id) return make_error("no node named '{}' in the microbatch graph (see `autopar graph`)", node);
  const int32_t stage = plan.node_stage[static_cast<size_t>(*id)];
  if (stage < 0) {
    return fmt::format("{}: no single stage runs it (a placeholder or constant every stage that reads it "
                       "holds)\n", node);
  }
  const PipelineStageCost& s = plan.stages[static_cast<size_t>(stage)];
  const std::vector<int64_t> devices = group_devices(plan.mesh, plan.options.degree, s.rank);
  return fmt::format(
      "{}: stage {} of {} (units {}), on pipeline rank {}: devices {}..{} of the mesh, sharded over the stage "
      "group's mesh {}; the stage takes F {:.3f} ms and B {:.3f} ms per microbatch, send {:.3f} ms\n"
      "its strategy, chosen in the stage groups' solve (one microbatch, every stage):\n",
      node, stage, plan.stages.size(), units_text(s.units), s.rank, devices.front(), devices.back(), fmt::join(plan.sub_mesh, "x"), s.durations.f * 1e3, s.durations.b * 1e3,
      s.durations.comm * 1e3);
}

std::string pipeline_plan_json(const Graph& graph, const PipelinePlan& plan) {
  const PipelineOptions& o = plan.options;
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(plan_to_json(graph, plan.spmd, /*timings=*/false));
  nlohmann::ordered_json p;
  p["degree"] = o.degree;
  p["mesh"] = plan.mesh;
  p["mesh_dim"] = 0;
  p["sub_mesh"] = plan.sub_mesh;
  p["schedule"] = std::string(pipeline::schedule_kind_name(o.schedule));
  p["microbatches"] = o.microbatches;
  p["stages_per_rank"] = o.stages_per_rank;
  p["stage_groups"] = o.baseline.empty() ? std::string("solved") : o.baseline;
  if (o.recompute_layers) p["recompute"] = "full";
  p["step_time_s"] = plan.step_time_s;
  p["makespan_s"] = plan.simulation.makespan;
  p["bubble_fraction"] = plan.simulation.bubble_fraction();
  p["memory_budget_bytes"] = plan.memory_budget;
  p["fits"] = plan.fits;
  nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
  for (size_t r = 0; r < plan.rank_peak_bytes.size(); ++r) {
    ranks.push_back({{"rank", r},
                     {"stages", plan.schedule.stages_of(static_cast<int32_t>(r))},
                     {"devices", group_devices(plan.mesh, o.degree, static_cast<int32_t>(r))},
                     {"peak_bytes", plan.rank_peak_bytes[r]},
                     {"in_flight", plan.simulation.peak_in_flight[r]}});
  }
  p["ranks"] = ranks;
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (const PipelineStageCost& s : plan.stages) {
    stages.push_back({{"stage", s.stage},
                      {"rank", s.rank},
                      {"units", s.units},
                      {"nodes", s.nodes},
                      {"forward_s", s.durations.f},
                      {"backward_s", s.durations.b},
                      {"input_grad_s", s.durations.i},
                      {"weight_grad_s", s.durations.w},
                      {"send_bytes", s.send_bytes},
                      {"send_grad_bytes", s.send_grad_bytes},
                      {"send_s", s.durations.comm},
                      {"grad_sync_s", s.grad_sync_s},
                      {"optimizer_s", s.optimizer_s},
                      {"static_bytes", s.static_bytes},
                      {"saved_bytes_per_microbatch", s.saved_bytes}});
  }
  p["stages"] = stages;
  doc["pipeline"] = p;
  return doc.dump(2) + "\n";
}

}  // namespace autopar
