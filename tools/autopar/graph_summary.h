// A one-screen summary of a graph: what `autopar graph` prints by default.
//
// Counts are exact integers so that tests and scripts can grep them; the
// formatted text shows large numbers with thousands separators and the raw
// integer next to them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace autopar {

struct OpCount {
  std::string_view op;  // aten overload name, e.g. "aten.mm.default"
  int64_t count = 0;
};

struct GraphSummary {
  std::string name;
  int64_t nodes = 0;
  std::vector<OpCount> ops;  // by count (largest first), then by name
  int64_t params = 0;        // elements of all param placeholders
  int64_t param_bytes = 0;
  // Bytes of the outputs of non-placeholder nodes. Forward = the nodes a loss
  // output depends on (all nodes when there is no loss output). getitem nodes are
  // skipped: they alias an output of the node they index, already counted.
  int64_t forward_activation_bytes = 0;
  int64_t joint_activation_bytes = 0;
  int64_t param_placeholders = 0;
  int64_t buffers = 0;
  int64_t inputs = 0;
  int64_t tangents = 0;
  int64_t constants = 0;
  int64_t loss_outputs = 0;
  int64_t grad_outputs = 0;
  int64_t buffer_outputs = 0;
  int64_t generic_nodes = 0;  // aten ops run without a rule of their own (OpId::kGeneric)
};

GraphSummary summarize_graph(const Graph& graph);
std::string format_summary(const GraphSummary& summary);

}  // namespace autopar
