// Placements: how one tensor is laid out over one mesh dim, and shardings
// (one placement per mesh dim).
//
//   S(d)      Shard: tensor dim d is split evenly over the mesh dim
//   R         Replicate: every device holds the whole tensor
//   P         Partial(sum): every device holds a term; the tensor is their sum
//   P(avg), P(max), P(min)   other pending reductions
//
// A sharding prints as its placements concatenated in mesh-dim order:
// "S(0)S(2)", "RP", "S(0)S(0)". When several mesh dims shard the same tensor
// dim, the lower mesh dim splits it first (outer chunks), the higher ones split
// each chunk further, as in PyTorch DTensor.
//
// Validity: a tensor dim may be sharded over a set of mesh dims only when it
// is at least as large as the product of their sizes (a dim smaller than the
// mesh is never sharded). It need not divide evenly (uneven sharding, as
// DTensor and FSDP do it), with three limits:
//   - the shards of a size-n dim over k devices are torch.chunk's: shard i
//     holds [i*c, min((i+1)*c, n)) with c = ceil(n/k), so the last shard is
//     the smaller one, and every shard must hold at least one element;
//   - an uneven dim is split by one mesh dim only (several mesh dims
//     splitting one dim need it to divide by their product: chunks of chunks
//     would not be torch.chunk's pieces of the whole);
//   - ShardingOptions::even_only turns uneven shards off (`--even-only`).
// Costs and memory count the padded size c (local_shape); the runtime holds
// the true pieces (local_shape_at) and pads only the buffers a collective
// sends. Which strategies may use uneven shards is strategy.h's concern.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "ir/expected.h"
#include "ir/tensor_meta.h"
#include "sharding/mesh.h"

namespace autopar {

enum class ReduceOp : uint8_t { kSum, kAvg, kMax, kMin };
std::string_view reduce_op_name(ReduceOp op);  // "sum", "avg", "max", "min"

// One byte: the kind in the top two bits, the shard dim or reduce op below.
class Placement {
 public:
  constexpr Placement() = default;  // Replicate
  static constexpr Placement replicate() { return Placement(); }
  static constexpr Placement shard(int dim) { return Placement(kShardTag | static_cast<uint8_t>(dim)); }
  static constexpr Placement partial(ReduceOp op = ReduceOp::kSum) {
    return Placement(kPartialTag | static_cast<uint8_t>(op));
  }

  constexpr bool is_replicate() const { return code_ == 0; }
  constexpr bool is_shard() const { return (code_ & kTagMask) == kShardTag; }
  constexpr bool is_partial() const { return (code_ & kTagMask) == kPartialTag; }
  constexpr int dim() const { return code_ & ~kTagMask; }  // shard only
  constexpr ReduceOp reduce_op() const { return static_cast<ReduceOp>(code_ & ~kTagMask); }
  constexpr uint8_t code() const { return code_; }

  constexpr bool operator==(const Placement&) const = default;

 private:
  static constexpr uint8_t kTagMask = 0xC0;
  static constexpr uint8_t kShardTag = 0x40;
  static constexpr uint8_t kPartialTag = 0x80;
  constexpr explicit Placement(uint8_t code) : code_(code) {}
  uint8_t code_ = 0;
};

// Tensor dims above this cannot be sharded (the placement byte holds the dim).
inline constexpr int kMaxShardDim = 63;

// A tensor's placement on every mesh dim. Fixed size, so strategies store
// shardings without allocating; key() packs it into one integer for hashing.
struct Sharding {
  std::array<Placement, kMaxMeshDims> placements{};
  int8_t ndim = 0;

  static Sharding replicated(int ndim);
  Placement operator[](MeshDim d) const { return placements[static_cast<size_t>(d)]; }
  Placement& operator[](MeshDim d) { return placements[static_cast<size_t>(d)]; }
  bool has_partial() const;
  bool is_replicated() const;
  // Unused entries stay Replicate (code 0), so the bytes are the key.
  uint64_t key() const {
    static_assert(sizeof(placements) == sizeof(uint64_t));
    uint64_t k;
    std::memcpy(&k, placements.data(), sizeof(k));
    return k;
  }
  bool operator==(const Sharding& other) const { return key() == other.key() && ndim == other.ndim; }
};

// Whether `grad` may place the gradient that flows back to a value placed as
// `value`, mesh dim by mesh dim: Shard(d) pairs with the same Shard(d);
// Partial with Replicate (the gradient of a pending sum is the same on every
// device); Replicate with Replicate or Partial (each device may hold its own
// contribution, summed later).
bool pairs_as_gradient(const Sharding& value, const Sharding& grad);

std::string to_string(Placement p);
std::string to_string(const Sharding& s);
Expected<Placement> parse_placement(std::string_view text);
// Parses "S(0)S(2)"; mesh_ndim >= 0 also checks the placement count.
Expected<Sharding> parse_sharding(std::string_view text, int mesh_ndim = -1);

struct ShardingOptions {
  bool even_only = false;  // true: every sharded dim divides evenly
};

// torch.chunk's pieces: the padded size ceil(size / count), and piece
// `index`'s start and true size (0 when the dim runs out before it).
int64_t padded_chunk(int64_t size, int64_t count);
int64_t chunk_start(int64_t size, int64_t count, int64_t index);
int64_t chunk_size(int64_t size, int64_t count, int64_t index);
// Whether some tensor dim of `shape` is sharded into pieces of unequal size.
bool is_uneven(const Shape& shape, const Sharding& s, const DeviceMesh& mesh);

// Number of shards of tensor dim `dim`: the product of the sizes of the mesh
// dims that shard it.
int64_t shard_count(const Sharding& s, const DeviceMesh& mesh, int dim);
bool is_valid_sharding(const Shape& shape, const Sharding& s, const DeviceMesh& mesh,
                       const ShardingOptions& options = {});
// Why a sharding is invalid for a shape, naming dims and sizes; ok when valid.
Status check_sharding(const Shape& shape, const Sharding& s, const DeviceMesh& mesh,
                      const ShardingOptions& options = {});
// The per-device shape the planner costs: padded (ceil-sized) pieces, the
// largest any device holds. The sharding must be valid.
Shape local_shape(const Shape& shape, const Sharding& s, const DeviceMesh& mesh);
// Writes the local shape into `out`, reusing its capacity.
void local_shape_into(const Shape& shape, const Sharding& s, const DeviceMesh& mesh, Shape& out);
// The shape the device at mesh coordinate `coord` (one index per mesh dim)
// really holds: its own piece of every sharded dim.
Shape local_shape_at(const Shape& shape, const Sharding& s, const DeviceMesh& mesh,
                     const std::vector<int64_t>& coord);

}  // namespace autopar
