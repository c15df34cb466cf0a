// A graph to build single ops on in shape- and cost-rule tests: placeholders
// by shape, an op's outputs as text, and its FLOPs and bytes from the op table.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/op_def.h"

namespace autopar::testing {

struct OpGraph {
  Graph g;
  NodeId in(Shape shape, DType dtype = DType::f32) {
    return g.add_placeholder(g.fresh_name("x"), PlaceholderKind::kInput, {std::move(shape), dtype});
  }
  // "f32[2, 3]" per output, or "error: ..." when the op was refused.
  std::string out(const Expected<NodeId>& id) {
    if (!id) return "error: " + id.error().message;
    std::string s;
    for (const TensorMeta& m : g.node(*id).outputs) s += (s.empty() ? "" : " ") + to_string(m);
    return s;
  }
  double flops(NodeId id) {
    std::vector<const std::vector<TensorMeta>*> ins;
    return op_def(g.node(id).op).flops(call(id, ins), g.node(id).outputs);
  }
  double bytes(NodeId id) {
    std::vector<const std::vector<TensorMeta>*> ins;
    return op_def(g.node(id).op).bytes(call(id, ins), g.node(id).outputs);
  }

 private:
  OpCall call(NodeId id, std::vector<const std::vector<TensorMeta>*>& ins) {
    const Node& n = g.node(id);
    for (NodeId i : n.inputs) ins.push_back(&g.node(i).outputs);
    return OpCall{ins, n.attrs};
  }
};

}  // namespace autopar::testing
