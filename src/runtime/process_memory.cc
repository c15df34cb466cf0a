#include "runtime/process_memory.h"

#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

namespace autopar {
namespace {

constexpr size_t kAlignment = 64;  // libtorch's CPU alignment (vectorised kernels)
constexpr size_t kGranule = 512;   // sizes round up to this, so near sizes share blocks

// Each block starts with a header that records its size; the data follows
// at the next alignment boundary. The data pointer is also the deleter's
// context, as libtorch's raw_allocate requires.
struct Header {
  size_t size;
};
static_assert(sizeof(Header) <= kAlignment);

class CachingCpuAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t bytes) const override {
    if (bytes == 0) return {nullptr, nullptr, &release, c10::Device(c10::DeviceType::CPU)};
    size_t size = (bytes + kGranule - 1) / kGranule * kGranule;
    void* block = take(size);
    if (block == nullptr) {
      block = std::aligned_alloc(kAlignment, size + kAlignment);
      if (block == nullptr) throw std::bad_alloc();
      static_cast<Header*>(block)->size = size;
    }
    void* data = static_cast<char*>(block) + kAlignment;
    return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static std::unordered_map<size_t, std::vector<void*>>& free_blocks() {
    static auto* blocks = new std::unordered_map<size_t, std::vector<void*>>();  // outlives exit-time frees
    return *blocks;
  }
  static void* take(size_t size) {
    std::lock_guard<std::mutex> lock(mutex());
    auto it = free_blocks().find(size);
    if (it == free_blocks().end() || it->second.empty()) return nullptr;
    void* block = it->second.back();
    it->second.pop_back();
    return block;
  }
  static void release(void* data) {
    if (data == nullptr) return;
    void* block = static_cast<char*>(data) - kAlignment;
    std::lock_guard<std::mutex> lock(mutex());
    free_blocks()[static_cast<Header*>(block)->size].push_back(block);
  }
};

}  // namespace

void keep_freed_memory() {
  static CachingCpuAllocator allocator;
  static const bool installed = [] {
    c10::SetCPUAllocator(&allocator, /*priority=*/1);
    return true;
  }();
  (void)installed;
}

}  // namespace autopar
