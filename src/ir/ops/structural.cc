// placeholder and getitem: graph structure, no computation. Generic aten ops
// (op_def.h, OpId::kGeneric): outputs recorded by the graph file.
#include "ir/ops/rules.h"

namespace autopar::rules {

Outputs placeholder_shape(const OpCall&) {
  return make_error("placeholder outputs are declared by the graph, not inferred");
}

Outputs getitem_shape(const OpCall& call) {
  const std::vector<TensorMeta>& tuple = *call.input_outputs[0];
  int64_t index = call.attrs.get_int("index");
  if (tuple.size() < 2) {
    return make_error("getitem applies to a node with several outputs; its input has {}",
                      tuple.size());
  }
  if (index < 0 || index >= static_cast<int64_t>(tuple.size())) {
    return make_error("getitem index {} is out of range for {} outputs", index, tuple.size());
  }
  return one(tuple[static_cast<size_t>(index)]);
}

Outputs generic_shape(const OpCall&) {
  return make_error("a generic aten op's outputs are recorded by the graph file; they cannot be "
                    "inferred again (for other input shapes) without a shape rule in the op table");
}

// Roofline by the bytes moved: one operation per output element, so the
// memory term decides unless the op is far from pointwise (then its own rule
// in the op table would pay off; autopar plan lists the generic ops).
double generic_flops(const OpCall&, Metas outputs) { return out_numel(outputs); }

}  // namespace autopar::rules
