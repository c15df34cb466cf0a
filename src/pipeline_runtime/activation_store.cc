// ActivationStore (see activation_store.h).
#include "pipeline_runtime/activation_store.h"

namespace autopar::pipeline {

ActivationStore::ActivationStore(const Graph& graph, int32_t slots, LiveStorages& held)
    : slots_(static_cast<size_t>(slots),
             std::vector<std::vector<at::Tensor>>(static_cast<size_t>(graph.size()))),
      held_(held) {}

const std::vector<at::Tensor>& ActivationStore::get(int32_t slot, NodeId id) const {
  return slots_[static_cast<size_t>(slot)][static_cast<size_t>(id)];
}

bool ActivationStore::has(int32_t slot, NodeId id) const { return !get(slot, id).empty(); }

void ActivationStore::put(int32_t slot, NodeId id, std::vector<at::Tensor> values) {
  drop(slot, id);
  if (values.empty()) return;
  held_.add(values);
  slots_[static_cast<size_t>(slot)][static_cast<size_t>(id)] = std::move(values);
  ++entries_;
}

void ActivationStore::drop(int32_t slot, NodeId id) {
  std::vector<at::Tensor>& values = slots_[static_cast<size_t>(slot)][static_cast<size_t>(id)];
  if (values.empty()) return;
  held_.remove(values);
  values.clear();
  --entries_;
}

}  // namespace autopar::pipeline
