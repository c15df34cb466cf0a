// The options every graph-building subcommand shares, and the one function that
// turns them into a Graph.
//
// A graph comes either from a built-in model (--model NAME with optional
// --batch/--seq/--layers/--dtype overrides, see models/registry.h) or from a JSON
// file (--graph FILE.json, see ir/json_io.h). Exactly one source must be given;
// model overrides together with --graph are a usage error, caught while parsing.
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "ir/expected.h"
#include "ir/graph.h"
#include "models/registry.h"

namespace autopar {

struct GraphOptions {
  std::string model;       // --model NAME
  std::string graph_file;  // --graph FILE.json
  int64_t batch = 0;       // --batch N   (0: the model's default)
  int64_t seq = 0;         // --seq N
  int64_t layers = 0;      // --layers N
  std::string dtype;       // --dtype NAME ("": the model's default)
};

// Registers the shared options on a subcommand. The options are bound to the
// fields of `options`, which must outlive parsing and the command's run.
// source_required = false: neither --model nor --graph is fine, and the
// command plans its default model (llama3-8b).
void add_graph_options(CLI::App& app, GraphOptions& options, bool source_required = true);

// The ModelOptions for --model; unknown model names and dtypes are errors that
// list the known ones.
Expected<ModelOptions> to_model_options(const GraphOptions& options);

// Builds the model or reads the JSON file. File errors name the path.
Expected<Graph> load_graph(const GraphOptions& options);

// "f32, bf16, ..." in DType order, for help texts and errors.
std::string dtype_names();

}  // namespace autopar
