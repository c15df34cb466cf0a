#include "autodiff/emitter.h"

#include <algorithm>

namespace autopar {

NodeId GraphEmitter::add(OpId op, std::vector<NodeId> inputs, Attrs attrs) {
  if (!ok()) return kNoNode;
  if (std::find(inputs.begin(), inputs.end(), kNoNode) != inputs.end()) {
    fail(fmt::format("{}: an input is missing", op_name(op)));
    return kNoNode;
  }
  Expected<NodeId> id = graph_.add(op, std::move(inputs), std::move(attrs), scope_);
  if (!id) {
    fail(id.error().message);
    return kNoNode;
  }
  return *id;
}

NodeId GraphEmitter::getitem(NodeId node, int64_t index) {
  return add(OpId::kGetItem, {node}, {{"index", index}});
}

NodeId GraphEmitter::view(NodeId x, const Shape& shape) {
  return add(OpId::kView, {x}, {{"size", shape}});
}

NodeId GraphEmitter::to_dtype(NodeId x, DType dtype) {
  return add(OpId::kToCopy, {x}, {{"dtype", dtype}});
}

NodeId GraphEmitter::sum_to(NodeId x, Shape shape) {
  if (!ok()) return kNoNode;
  Shape have = meta(x).shape;
  if (have == shape) return x;
  if (have.size() < shape.size()) {
    fail(fmt::format("cannot sum {} down to {}", shape_to_string(have), shape_to_string(shape)));
    return kNoNode;
  }
  size_t lead = have.size() - shape.size();
  std::vector<int64_t> dims;
  for (size_t i = 0; i < have.size(); ++i) {
    if (i < lead || (shape[i - lead] == 1 && have[i] != 1)) dims.push_back(static_cast<int64_t>(i));
  }
  NodeId summed = x;
  if (!dims.empty()) {
    summed = add(OpId::kSumDimIntList, {x}, {{"dim", dims}, {"keepdim", true}});
  }
  return meta(summed).shape == shape ? summed : view(summed, shape);
}

const TensorMeta& GraphEmitter::meta(NodeId id) const {
  static const TensorMeta kMissing{};
  if (id == kNoNode) return kMissing;
  return graph_.node(id).meta();
}

Status GraphEmitter::status() const {
  if (ok()) return ok_status();
  return make_error("{}", error_);
}

void GraphEmitter::fail(std::string message) {
  if (!ok()) return;
  error_ = scope_.empty() ? std::move(message) : fmt::format("in {}: {}", scope_, message);
}

}  // namespace autopar
