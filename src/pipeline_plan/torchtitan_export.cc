// A plan as torchtitan's parallelism settings (see torchtitan_export.h).
#include "pipeline_plan/torchtitan_export.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sharding/placement.h"

namespace autopar {
namespace {

enum class DimRole : uint8_t { kShard, kReplicate, kTensor, kUnknown };


std::string_view schedule_name(pipeline::ScheduleKind kind) {
  switch (kind) {
    case pipeline::ScheduleKind::kGPipe: return "GPipe";
    case pipeline::ScheduleKind::k1F1B: return "1F1B";
    case pipeline::ScheduleKind::kInterleaved1F1B: return "Interleaved1F1B";
    case pipeline::ScheduleKind::kZBH1: return "";
  }
  return "";
}

// The graph's token input: the first integer input placeholder (else the first input).
NodeId token_input(const Graph& graph) {
  NodeId first = kNoNode;
  for (NodeId v = 0; v < graph.size(); ++v) {
    const Node& n = graph.node(v);
    if (!n.is_placeholder() || n.kind != PlaceholderKind::kInput) continue;
    if (first == kNoNode) first = v;
    if (n.meta().dtype == DType::i64 || n.meta().dtype == DType::i32) return v;
  }
  return first;
}

std::string toml_list(const std::vector<std::string>& items) {
  std::vector<std::string> quoted;
  for (const std::string& s : items) quoted.push_back(fmt::format("\"{}\"", s));
  return fmt::format("[{}]", fmt::join(quoted, ", "));
}

// What mesh dim d does: from the tokens' placement and how many parameter
// bytes are sharded on it.
DimRole dim_role(const Graph& graph, const Plan& plan, NodeId tokens, MeshDim d, std::vector<std::string>& notes) {
  const std::string dim = plan.mesh.dims[static_cast<size_t>(d)].name;
  Placement in = tokens == kNoNode ? Placement::replicate() : planned_output_sharding(plan, tokens)[d];
  double sharded = 0, total = 0;
  int32_t sharded_params = 0, params = 0;
  for (NodeId v = 0; v < graph.size(); ++v) {
    const Node& n = graph.node(v);
    if (!n.is_placeholder() || n.kind != PlaceholderKind::kParam) continue;
    const double bytes = static_cast<double>(n.meta().bytes());
    total += bytes;
    ++params;
    if (planned_output_sharding(plan, v)[d].is_shard()) {
      sharded += bytes;
      ++sharded_params;
    }
  }
  if (in.is_shard() && in.dim() == 0) {
    if (sharded_params == params) return DimRole::kShard;
    if (sharded_params == 0) return DimRole::kReplicate;
    notes.push_back(fmt::format("mesh dim {} splits the batch but shards only {} of {} parameters ({:.0f}% of their "
                                "bytes); torchtitan's FSDP shards all of them: written as data_parallel_shard",
                                dim, sharded_params, params, total > 0 ? sharded / total * 100 : 0));
    return DimRole::kShard;
  }
  if (in.is_replicate() && sharded_params > 0) return DimRole::kTensor;
  if (in.is_replicate()) {
    notes.push_back(fmt::format("mesh dim {} splits neither the batch nor a parameter (its devices repeat the work); "
                                "torchtitan has no such degree: left out",
                                dim));
    return DimRole::kUnknown;
  }
  notes.push_back(fmt::format("mesh dim {} holds the tokens as {} (not split by batch); torchtitan's settings cannot "
                              "say it (context_parallel splits the sequence its own way): left out",
                              dim, to_string(in)));
  return DimRole::kUnknown;
}

}  // namespace

TorchtitanConfig torchtitan_config(const Graph& graph, const Plan& plan, const PipelinePlan* pipeline) {
  TorchtitanConfig out;
  const NodeId tokens = token_input(graph);
  int64_t shard = 1, replicate = 1, tensor = 1;
  std::vector<std::string> dims_text;
  for (MeshDim d = 0; d < plan.mesh.ndim(); ++d) {
    const int64_t size = plan.mesh.size(d);
    switch (dim_role(graph, plan, tokens, d, out.not_expressed)) {
      case DimRole::kShard: shard *= size; dims_text.push_back(fmt::format("{}={} dp_shard", plan.mesh.dims[static_cast<size_t>(d)].name, size)); break;
      case DimRole::kReplicate: replicate *= size; dims_text.push_back(fmt::format("{}={} dp_replicate", plan.mesh.dims[static_cast<size_t>(d)].name, size)); break;
      case DimRole::kTensor: tensor *= size; dims_text.push_back(fmt::format("{}={} tp", plan.mesh.dims[static_cast<size_t>(d)].name, size)); break;
      case DimRole::kUnknown: dims_text.push_back(fmt::format("{}={} (not expressed)", plan.mesh.dims[static_cast<size_t>(d)].name, size)); break;
    }
  }
  const int64_t microbatch_rows = tokens == kNoNode || graph.node(tokens).meta().shape.empty()
                                      ? 1
                                      : graph.node(tokens).meta().shape[0];
  const int32_t microbatches = pipeline ? pipeline->options.microbatches : 1;
  const int64_t data_ranks = shard * replicate;
  const int64_t global_batch = microbatch_rows * microbatches;
  std::string body;
  body += "[training]\n";
  if (global_batch % data_ranks != 0) {
    out.not_expressed.push_back(fmt::format("the batch of {} does not split over the {} data-parallel ranks",
                                            global_batch, data_ranks));
  }
  body += fmt::format("local_batch_size = {}\n\n[parallelism]\n", global_batch / std::max<int64_t>(1, data_ranks));
  body += fmt::format("data_parallel_replicate_degree = {}\ndata_parallel_shard_degree = {}\n", replicate, shard);
  body += fmt::format("tensor_parallel_degree = {}\ncontext_parallel_degree = 1\n", tensor);
  if (pipeline == nullptr) {
    body += "pipeline_parallel_degree = 1\n";
  } else {
    const PipelineOptions& o = pipeline->options;
    std::string_view name = schedule_name(o.schedule);
    if (name.empty()) {
      out.not_expressed.push_back(fmt::format(
          "schedule {} with {} stage per rank has no torchtitan schedule (its zero-bubble schedules are "
          "InterleavedZeroBubble and ZBVZeroBubble, with 2 or more stages per rank): written as 1F1B",
          pipeline::schedule_kind_name(o.schedule), o.stages_per_rank));
      name = "1F1B";
    }
    body += fmt::format("pipeline_parallel_degree = {}\npipeline_parallel_schedule = \"{}\"\n", o.degree, name);
    body += fmt::format("pipeline_parallel_microbatch_size = {}\n",
                        microbatch_rows / std::max<int64_t>(1, data_ranks));
    if (microbatch_rows % data_ranks != 0) {
      out.not_expressed.push_back(fmt::format("a microbatch of {} does not split over the {} data-parallel ranks",
                                              microbatch_rows, data_ranks));
    }
    std::vector<std::string> parts;
    for (const PipelineStageCost& s : pipeline->stages) {
      std::vector<std::string> modules;
      for (const std::string& unit : s.units) {
        if (unit != "loss" && !unit.empty()) modules.push_back(unit);
      }
      parts.push_back(toml_list(modules));
    }
    body += fmt::format("module_fqns_per_model_part = [{}]\n", fmt::join(parts, ", "));
  }
  std::string head = fmt::format("# torchtitan parallelism for {} by autopar ({}): mesh {}{}\n", graph.name,
                                 plan.label, fmt::join(dims_text, ", "),
                                 pipeline ? fmt::format(", pipeline of {} along the whole mesh's dim 0",
                                                        pipeline->options.degree)
                                          : "");
  if (out.not_expressed.empty()) {
    head += "# Every mesh dim maps to a torchtitan degree. These are degrees: torchtitan lays each parallelism out its\n"
            "# own way (FSDP shards every weight on dim 0, TP splits attention and MLP weights by heads and columns),\n"
            "# so placements the plan chose otherwise within a dim are not carried over.\n";
  } else {
    head += "# APPROXIMATE: what these settings cannot say:\n";
    for (const std::string& n : out.not_expressed) head += "#   - " + n + "\n";
  }
  out.toml = head + "\n" + body;
  return out;
}

}  // namespace autopar
