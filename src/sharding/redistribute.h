// Redistribution: the collectives that turn one sharding of a tensor into
// another, one step per mesh dim change, each costed on that mesh dim's link.
//
//   from -> to on mesh dim m   step             buffer bytes (per device)
//   S(d) -> R                  all_gather       the gathered local tensor
//   P    -> R                  all_reduce       the local tensor
//   P    -> S(d)               reduce_scatter   the unreduced local tensor
//   S(d) -> S(e)               all_to_all       the local tensor
//   R    -> S(d), R -> P       local_slice      0 (no communication)
//   S(d) -> P                  all_gather, then local
//   P(x) -> P(y)               all_reduce, then local
// Times come from cost/comm_cost.h (the fastest algorithm on the mesh dim's links);
// sent bytes are the ring's traffic.
//
// Order with nested sharding (several mesh dims split one tensor dim, the
// lower mesh dim outermost): gathers, reductions and all-to-alls run from the
// innermost mesh dim outwards, then local slices from the outermost inwards.
// A mesh dim can only be changed while no higher mesh dim splits the same
// tensor dim(s) inside it, so such inner shards are gathered first (and sliced
// again at the end).
//
// Complex tensors are never sent as complex: a c64 tensor is planned on its
// real view (f32 with an extra trailing dim of 2; shard dims are unchanged)
// and every step records the dtype it actually sends.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "cost/comm_cost.h"
#include "sharding/placement.h"

namespace autopar {

struct RedistStep {
  Collective collective = Collective::kLocalSlice;
  MeshDim mesh_dim = 0;
  Placement from, to;   // on mesh_dim
  DType dtype = DType::f32;  // what is sent: never complex
  Shape local_shape;    // the per-device buffer the bytes are counted on
  double buffer_bytes = 0;  // comm_cost.h's B
  double sent_bytes = 0;    // bytes each device sends
  double time_s = 0;
};

struct RedistPlan {
  TensorMeta sent_meta;  // the tensor as communicated (the real view of a complex one)
  Sharding from;         // the sharding the first step starts from
  std::vector<RedistStep> steps;
  double time_s = 0;
  double sent_bytes = 0;
};

// The real view a tensor is communicated as: c64[a, b] -> f32[a, b, 2].
TensorMeta communicated_meta(const TensorMeta& meta);

// Both shardings must be valid for the tensor on the mesh.
RedistPlan plan_redistribution(const TensorMeta& meta, const Sharding& from, const Sharding& to,
                               const DeviceMesh& mesh);

// "all_gather d1 S(0)->R f32[4, 8] B=128 sent=64 t=1.2us"
std::string to_string(const RedistStep& step, const DeviceMesh& mesh);
std::string to_string(const RedistPlan& plan, const DeviceMesh& mesh);

// Memoised redistribution times per (tensor meta, from, to). The planner asks
// for the same pairs on every layer, so the cache makes edge costs cheap.
class RedistributionCache {
 public:
  explicit RedistributionCache(const DeviceMesh& mesh) : mesh_(mesh) {}

  using MetaId = uint32_t;
  MetaId intern(const TensorMeta& meta);
  double time(MetaId meta, const Sharding& from, const Sharding& to);
  double time(const TensorMeta& meta, const Sharding& from, const Sharding& to) {
    return from == to ? 0.0 : time(intern(meta), from, to);
  }
  // Times of every (from[i], to[j]) pair, row-major, memoised per block: the
  // edges of repeated layers ask for the same blocks.
  const std::vector<double>& block(MetaId meta, std::span<const Sharding> from,
                                   std::span<const Sharding> to);
  const DeviceMesh& mesh() const { return mesh_; }
  size_t cached_pairs() const { return times_.size(); }
  size_t cached_blocks() const { return blocks_.size(); }

 private:
  struct Key {
    MetaId meta;
    uint64_t from, to;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  struct MetaHash {
    size_t operator()(const TensorMeta& m) const;
  };
  struct BlockKey {
    MetaId meta = 0;
    std::vector<uint64_t> from, to;
    bool operator==(const BlockKey&) const = default;
  };
  struct BlockKeyHash {
    size_t operator()(const BlockKey& k) const;
  };
  DeviceMesh mesh_;
  std::unordered_map<BlockKey, std::vector<double>, BlockKeyHash> blocks_;
  BlockKey probe_;  // reused for lookups
  std::unordered_map<TensorMeta, MetaId, MetaHash> meta_ids_;
  std::vector<TensorMeta> metas_;
  std::unordered_map<Key, double, KeyHash> times_;
};

}  // namespace autopar
