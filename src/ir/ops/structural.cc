// placeholder and getitem: graph structure, no computation.
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

}  // namespace autopar::rules
