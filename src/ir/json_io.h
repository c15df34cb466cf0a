// The JSON graph format (docs/graph-format.md): reader and writer.
//
// write_graph_json is canonical: reading its output and writing again gives the
// same bytes. read_graph_json checks everything a user file can get wrong and
// names the JSON path or node in the error; it runs the verifier before returning.
#pragma once

#include <string>
#include <string_view>

#include "ir/expected.h"
#include "ir/graph.h"

namespace autopar {

std::string write_graph_json(const Graph& graph);
Expected<Graph> read_graph_json(std::string_view text);

}  // namespace autopar
