// `autopar graph`: build (or read) a graph and print it as a summary, as FX-style
// text, or as canonical JSON.
#include <memory>
#include <string>

#include "cli_output.h"
#include "commands.h"
#include "graph_options.h"
#include "graph_summary.h"
#include "ir/json_io.h"
#include "ir/printer.h"

namespace autopar {
namespace {

struct GraphCommandOptions {
  GraphOptions graph;
  std::string format = "summary";
  std::string out;  // "" -> stdout
};

int run_graph(const GraphCommandOptions& options) {
  Expected<Graph> graph = load_graph(options.graph);
  if (!graph) return report_error(graph.error());
  std::string text;
  if (options.format == "summary") {
    text = format_summary(summarize_graph(*graph));
  } else if (options.format == "text") {
    text = print_graph(*graph);
  } else {
    text = write_graph_json(*graph);
  }
  Status written = write_output(text, options.out);
  if (!written) return report_error(written.error());
  return kExitOk;
}

}  // namespace

Command add_graph_command(CLI::App& parent) {
  auto options = std::make_shared<GraphCommandOptions>();
  CLI::App* app = parent.add_subcommand(
      "graph", "Build a model's joint forward+backward graph (or read one) and print it");
  add_graph_options(*app, options->graph);
  app->add_option("--format", options->format,
                  "summary: counts and sizes; text: one FX-style line per node; json: the "
                  "canonical JSON graph")
      ->check(CLI::IsMember({"json", "summary", "text"}))
      ->capture_default_str();
  app->add_option("--out", options->out, "Write to this file instead of stdout")
      ->type_name("FILE");
  return Command{app, [options] { return run_graph(*options); }};
}

}  // namespace autopar
