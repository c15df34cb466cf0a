// ActivationStore (see activation_store.h).
#include "pipeline_runtime/activation_store.h"

#include <algorithm>

namespace autopar::pipeline {

ActivationStore::ActivationStore(const Graph& graph, int32_t slots)
    : graph_(graph),
      slots_(static_cast<size_t>(slots),
             std::vector<std::vector<at::Tensor>>(static_cast<size_t>(graph.size()))) {}

const std::vector<at::Tensor>& ActivationStore::get(int32_t slot, NodeId id) const {
  return slots_[static_cast<size_t>(slot)][static_cast<size_t>(id)];
}

bool ActivationStore::has(int32_t slot, NodeId id) const { return !get(slot, id).empty(); }

void ActivationStore::add_ref(const at::Tensor& t) {
  if (!t.defined()) return;
  const c10::Storage& storage = t.storage();
  if (refs_[storage.unsafeGetStorageImpl()]++ == 0) {
    live_bytes_ += static_cast<int64_t>(storage.nbytes());
    peak_bytes_ = std::max(peak_bytes_, live_bytes_);
  }
}

void ActivationStore::remove_ref(const at::Tensor& t) {
  if (!t.defined()) return;
  const c10::Storage& storage = t.storage();
  auto it = refs_.find(storage.unsafeGetStorageImpl());
  if (it == refs_.end()) return;
  if (--it->second == 0) {
    live_bytes_ -= static_cast<int64_t>(storage.nbytes());
    refs_.erase(it);
  }
}

void ActivationStore::put(int32_t slot, NodeId id, std::vector<at::Tensor> values) {
  drop(slot, id);
  if (counted(id)) {
    for (const at::Tensor& t : values) add_ref(t);
  }
  slots_[static_cast<size_t>(slot)][static_cast<size_t>(id)] = std::move(values);
}

void ActivationStore::drop(int32_t slot, NodeId id) {
  std::vector<at::Tensor>& values = slots_[static_cast<size_t>(slot)][static_cast<size_t>(id)];
  if (counted(id)) {
    for (const at::Tensor& t : values) remove_ref(t);
  }
  values.clear();
}

void ActivationStore::clear(int32_t slot) {
  for (NodeId id = 0; id < graph_.size(); ++id) drop(slot, id);
}

}  // namespace autopar::pipeline
