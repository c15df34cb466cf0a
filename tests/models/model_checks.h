// Checks shared by the model tests.
#pragma once

#include <gtest/gtest.h>

#include "ir/graph.h"
#include "models/registry.h"

namespace autopar::testing {

inline Graph build_or_fail(const ModelOptions& options) {
  Expected<Graph> graph = build_model(options);
  EXPECT_TRUE(graph.ok()) << (graph.ok() ? "" : graph.error().message);
  return graph.ok() ? std::move(*graph) : Graph{};
}

inline int count_op(const Graph& g, OpId op) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.op == op ? 1 : 0;
  return n;
}

inline int count_params(const Graph& g) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.kind == PlaceholderKind::kParam ? 1 : 0;
  return n;
}

// One gradient output per param, in placeholder order, each with the param's meta.
inline void expect_one_matching_grad_per_param(const Graph& g) {
  ASSERT_EQ(g.outputs().size(), static_cast<size_t>(count_params(g)) + 1);
  EXPECT_EQ(g.outputs()[0].kind, OutputKind::kLoss);
  size_t out = 1;
  for (NodeId id = 0; id < g.size(); ++id) {
    if (g.node(id).kind != PlaceholderKind::kParam) continue;
    const GraphOutput& grad = g.outputs()[out++];
    EXPECT_EQ(grad.kind, OutputKind::kGradient);
    EXPECT_EQ(grad.param, id) << g.node(id).name;
    EXPECT_EQ(g.node(grad.node).meta(), g.node(id).meta()) << g.node(id).name;
  }
}

}  // namespace autopar::testing
