// The pipeline options of the planning subcommands (plan, report): --pipeline
// N|auto, --schedule, --microbatches, --stages-per-rank, a --baseline named by
// its degrees (pp8-fsdp8-tp8), and the one function that turns them into a
// pipeline plan (pipeline_plan/pipeline_plan.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "graph_options.h"
#include "ir/expected.h"
#include "pipeline_plan/pipeline_plan.h"
#include "plan_options.h"

namespace autopar {

struct PipelineCliOptions {
  std::string pipeline;      // "": no pipeline; N or auto
  std::string schedule;      // "": searched with --pipeline auto, else 1f1b
  std::string microbatches;  // "": twice the degree; "auto": searched
  int32_t stages_per_rank = 1;
};

void add_pipeline_options(CLI::App& app, PipelineCliOptions& options);

// A positive count, or "auto" (nullopt); anything else is an error naming the option.
Expected<std::optional<int32_t>> count_or_auto(const std::string& option, const std::string& text);

// The model of `options` built for one of M microbatches (batch / M); `full`,
// the model at its batch, decides the rows. A --graph file is one microbatch
// already: `full` itself.
Expected<Graph> microbatch_graph(const GraphOptions& options, const Graph& full, int32_t microbatches);

// A --baseline named by its degrees with pp sets --pipeline and becomes the
// stage groups' baseline; --schedule and friends without a pipeline are
// refused. Errors are usage errors.
Status resolve_pipeline_options(PlanCliOptions& plan, PipelineCliOptions& pipeline);

struct PlannedPipeline {
  Graph graph;         // one microbatch's
  PlanOptions options;  // the whole mesh's, as make_pipeline_plan took them
  PipelinePlan plan;
  std::string search;  // the candidates table when searched, else ""
};
// Loads the graph (llama3-8b without --model/--graph), builds it for one
// microbatch, and plans or searches.
std::variant<PlannedPipeline, Error> plan_pipeline(const GraphOptions& graph, const PlanCliOptions& plan,
                                                   PipelineCliOptions pipeline);

}  // namespace autopar
