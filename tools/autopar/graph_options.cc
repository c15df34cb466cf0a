#include "graph_options.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli_output.h"
#include "ir/json_io.h"

namespace autopar {

std::string dtype_names() {
  std::vector<std::string_view> names;
  for (int i = 0; i < kDTypeCount; ++i) names.push_back(dtype_name(static_cast<DType>(i)));
  return fmt::format("{}", fmt::join(names, ", "));
}

void add_graph_options(CLI::App& app, GraphOptions& options, bool source_required) {
  // One group so that CLI11 enforces the source count while parsing (exit 2).
  CLI::Option_group* source = app.add_option_group(
      "graph source", source_required ? "Where the graph comes from (exactly one)"
                                      : "Where the graph comes from (at most one; default "
                                        "--model llama3-8b)");
  CLI::Option* model = source->add_option("--model", options.model,
      fmt::format("Built-in model: {}", fmt::join(model_names(), ", ")));
  model->type_name("NAME");
  CLI::Option* graph = source->add_option("--graph", options.graph_file,
      "Read the graph from a JSON file (docs/graph-format.md)");
  graph->type_name("FILE.json");
  source->require_option(source_required ? 1 : 0, 1);

  // Validators with messages that say what was wrong (CLI11's ranges print 1e308).
  const CLI::Validator dtype_check(
      [](std::string& name) -> std::string {
        if (parse_dtype(name)) return {};
        return fmt::format("unknown dtype '{}' (known: {})", name, dtype_names());
      },
      "");
  const CLI::Validator positive(
      [](std::string& text) -> std::string {
        int64_t value = 0;
        if (CLI::detail::lexical_cast(text, value) && value > 0) return {};
        return fmt::format("must be a positive integer, got '{}'", text);
      },
      "");
  std::vector<CLI::Option*> overrides = {
      app.add_option("--batch", options.batch, "Batch size (default: the model's)")
          ->check(positive)->type_name("N"),
      app.add_option("--seq", options.seq, "Sequence length (default: the model's)")
          ->check(positive)->type_name("N"),
      app.add_option("--layers", options.layers, "Number of layers (default: the model's)")
          ->check(positive)->type_name("N"),
      app.add_option("--dtype", options.dtype,
                     fmt::format("Parameter/activation dtype: {}", dtype_names()))
          ->check(dtype_check)->type_name("DTYPE"),
  };
  // A JSON graph has its shapes fixed; silently ignoring an override would mislead.
  for (CLI::Option* option : overrides) option->excludes(graph);
}

Expected<ModelOptions> to_model_options(const GraphOptions& options) {
  std::vector<std::string> known = model_names();
  if (std::find(known.begin(), known.end(), options.model) == known.end()) {
    return make_error("unknown model '{}'; known models: {}", options.model, fmt::join(known, ", "));
  }
  ModelOptions model;
  model.name = options.model;
  if (options.batch > 0) model.batch = options.batch;
  if (options.seq > 0) model.seq = options.seq;
  if (options.layers > 0) model.layers = options.layers;
  if (!options.dtype.empty()) {
    std::optional<DType> dtype = parse_dtype(options.dtype);
    if (!dtype) return make_error("unknown dtype '{}' (known: {})", options.dtype, dtype_names());
    model.dtype = *dtype;
  }
  return model;
}

Expected<Graph> load_graph(const GraphOptions& options) {
  if (!options.graph_file.empty()) {
    Expected<std::string> text = read_text_file(options.graph_file);
    if (!text) return text.error();
    Expected<Graph> graph = read_graph_json(*text);
    if (!graph) return make_error_like(graph.error(), "graph file '{}': {}", options.graph_file, graph.error().message);
    return graph;
  }
  if (options.model.empty()) return make_error("no graph given: pass --model NAME or --graph FILE.json");
  Expected<ModelOptions> model = to_model_options(options);
  if (!model) return model.error();
  Expected<Graph> graph = build_model(*model);
  if (!graph) return make_error_like(graph.error(), "model '{}': {}", options.model, graph.error().message);
  return graph;
}

}  // namespace autopar
