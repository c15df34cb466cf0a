// Live storages: bytes of the distinct tensor storages a rank holds.
//
// Views and getitems share their base's storage, so counting every value's
// bytes would count one allocation several times. Both executors (local and
// SPMD) measure memory with this, kept up to date as values come and go (a
// node costs its own outputs and frees, never a scan of every value), so the
// measured peak is comparable with the planner's liveness-based estimate.
#pragma once

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include <ATen/core/Tensor.h>

namespace autopar {

class LiveStorages {
 public:
  void add(const std::vector<at::Tensor>& values) {
    for (const at::Tensor& t : values) {
      if (!t.defined()) continue;
      if (refs_[t.storage().unsafeGetStorageImpl()]++ > 0) continue;
      bytes_ += storage_bytes(t);
      peak_ = std::max(peak_, bytes_);
    }
  }
  void remove(const std::vector<at::Tensor>& values) {
    for (const at::Tensor& t : values) {
      if (!t.defined()) continue;
      auto it = refs_.find(t.storage().unsafeGetStorageImpl());
      if (it == refs_.end() || --it->second > 0) continue;
      bytes_ -= storage_bytes(t);
      refs_.erase(it);
    }
  }
  int64_t bytes() const { return bytes_; }
  int64_t peak() const { return peak_; }  // the largest bytes() so far

 private:
  static int64_t storage_bytes(const at::Tensor& t) {
    return static_cast<int64_t>(t.storage().nbytes());
  }
  std::unordered_map<const void*, int32_t> refs_;
  int64_t bytes_ = 0, peak_ = 0;
};

}  // namespace autopar
