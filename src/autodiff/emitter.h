// GraphEmitter: appends nodes to a Graph under a current module scope and keeps
// the first error instead of returning one at every call.
//
// Model builders and gradient rules emit dozens of ops in a row; checking an
// Expected after each would bury the structure of the model. The emitter makes
// every failed add() sticky: it returns kNoNode, later calls that consume
// kNoNode emit nothing, and status() reports the first error with the scope it
// happened in. Every node still goes through Graph::add, so the op table's
// shape rules check each one.
#pragma once

#include <string>
#include <vector>

#include "ir/expected.h"
#include "ir/graph.h"

namespace autopar {

class GraphEmitter {
 public:
  explicit GraphEmitter(Graph& graph) : graph_(graph) {}

  Graph& graph() { return graph_; }
  const Graph& graph() const { return graph_; }
  void set_scope(std::string scope) { scope_ = std::move(scope); }
  const std::string& scope() const { return scope_; }

  // Appends op(inputs, attrs) in the current scope; kNoNode after any error.
  NodeId add(OpId op, std::vector<NodeId> inputs, Attrs attrs = {});
  NodeId getitem(NodeId node, int64_t index);
  NodeId view(NodeId x, const Shape& shape);
  NodeId to_dtype(NodeId x, DType dtype);  // aten._to_copy with a dtype
  // Sums a broadcast result back to `shape` (sum.dim_IntList keepdim, then a
  // view if the summed result still has extra leading dims). No-op if equal.
  NodeId sum_to(NodeId x, Shape shape);

  // The single output of a node; a scalar f32 placeholder meta for kNoNode so
  // callers may read it after an error. The reference dies at the next add().
  const TensorMeta& meta(NodeId id) const;

  bool ok() const { return error_.empty(); }
  Status status() const;
  void fail(std::string message);  // records the first error only

 private:
  Graph& graph_;
  std::string scope_;
  std::string error_;
};

}  // namespace autopar
