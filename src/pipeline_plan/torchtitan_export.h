// A plan as torchtitan's parallelism settings (`autopar plan --format
// torchtitan`): the [parallelism] and [training] sections of a torchtitan job
// config (TOML) for a plan torchtitan's own layouts can express.
//
// Each mesh dim of the stage groups' plan is read from what the plan does on
// it: the tokens split by batch (a data dim) with every parameter sharded
// (data_parallel_shard_degree, FSDP) or none (data_parallel_replicate_degree,
// DDP); the tokens whole and parameters sharded (tensor_parallel_degree).
// Dims of the same kind multiply. The pipeline (mesh dim 0, when planned)
// gives pipeline_parallel_degree, its schedule's torchtitan name, the
// microbatch size and each stage's modules (module_fqns_per_model_part).
// torchtitan applies its own layouts within those degrees (its TP plan shards
// attention and MLP weights column- and row-wise), so the degrees are what is
// carried over, not every placement; everything the settings cannot say (a
// dim that splits the sequence, parameters sharded on only part of a data
// dim, a schedule torchtitan does not have) is listed, in the file as
// comments and returned.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "pipeline_plan/pipeline_plan.h"
#include "planner/auto_plan.h"

namespace autopar {

struct TorchtitanConfig {
  std::string toml;
  std::vector<std::string> not_expressed;  // empty: the settings say the whole plan
};

// `plan`: the SPMD plan (for a pipeline, the stage groups' plan of one
// microbatch); `pipeline`: the pipeline plan, or null.
TorchtitanConfig torchtitan_config(const Graph& graph, const Plan& plan, const PipelinePlan* pipeline);

}  // namespace autopar
