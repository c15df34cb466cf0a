// Small helpers shared by the autodiff tests: build a forward graph with
// asserts, then inspect the backward part of the joint graph.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "autodiff/autodiff.h"
#include "ir/verifier.h"

namespace autopar::testing {

inline NodeId must(Expected<NodeId> id) {
  EXPECT_TRUE(id.ok()) << (id.ok() ? "" : id.error().message);
  return id.ok() ? *id : kNoNode;
}

// Sums every element: a scalar loss from any tensor.
inline NodeId sum_all(Graph& g, NodeId x) {
  return must(g.add(OpId::kSumDimIntList, {x}, {{"dim", std::vector<int64_t>{}}}));
}

inline Graph joint_of(const Graph& forward, NodeId loss) {
  Expected<Graph> joint = build_joint_graph(forward, {loss, {}});
  EXPECT_TRUE(joint.ok()) << (joint.ok() ? "" : joint.error().message);
  if (!joint.ok()) return Graph{};
  Status verified = verify(*joint);
  EXPECT_TRUE(verified.ok()) << (verified.ok() ? "" : verified.error().message);
  return std::move(*joint);
}

// The ops of the nodes after the first `forward_size` + 1 (the tangent) nodes.
inline std::vector<std::string> backward_ops(const Graph& joint, int32_t forward_size) {
  std::vector<std::string> ops;
  for (NodeId id = forward_size + 1; id < joint.size(); ++id) {
    ops.push_back(default_node_base_name(joint.node(id).op));
  }
  return ops;
}

inline NodeId grad_output(const Graph& joint, std::string_view param) {
  for (const GraphOutput& out : joint.outputs()) {
    if (out.kind == OutputKind::kGradient && joint.node(out.param).name == param) return out.node;
  }
  return kNoNode;
}

}  // namespace autopar::testing
