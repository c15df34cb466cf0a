#include "sharding/placement.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

namespace autopar {

std::string_view reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "sum";
    case ReduceOp::kAvg: return "avg";
    case ReduceOp::kMax: return "max";
    case ReduceOp::kMin: return "min";
  }
  return "?";
}

Sharding Sharding::replicated(int ndim) {
  Sharding s;
  s.ndim = static_cast<int8_t>(ndim);
  return s;
}

bool Sharding::has_partial() const {
  for (int d = 0; d < ndim; ++d) {
    if (placements[static_cast<size_t>(d)].is_partial()) return true;
  }
  return false;
}

bool Sharding::is_replicated() const {
  for (int d = 0; d < ndim; ++d) {
    if (!placements[static_cast<size_t>(d)].is_replicate()) return false;
  }
  return true;
}

bool pairs_as_gradient(const Sharding& value, const Sharding& grad) {
  if (value.ndim != grad.ndim) return false;
  for (MeshDim d = 0; d < value.ndim; ++d) {
    Placement v = value[d], g = grad[d];
    bool ok = v.is_shard() ? g == v : v.is_partial() ? g.is_replicate() : !g.is_shard();
    if (!ok) return false;
  }
  return true;
}

std::string to_string(Placement p) {
  if (p.is_shard()) return fmt::format("S({})", p.dim());
  if (p.is_partial()) {
    return p.reduce_op() == ReduceOp::kSum ? "P" : fmt::format("P({})", reduce_op_name(p.reduce_op()));
  }
  return "R";
}

std::string to_string(const Sharding& s) {
  std::string out;
  for (int d = 0; d < s.ndim; ++d) out += to_string(s[d]);
  return out;
}

namespace {

constexpr std::string_view kPlacementForm = "S(<dim>), R, P, P(sum|avg|max|min)";

// Parses one placement at the front of `text`; returns its length, or 0.
size_t parse_one(std::string_view text, Placement& out) {
  if (text.starts_with("R")) {
    out = Placement::replicate();
    return 1;
  }
  if (text.starts_with("S(")) {
    size_t close = text.find(')');
    if (close == std::string_view::npos) return 0;
    int dim = -1;
    auto [end, ec] = std::from_chars(text.data() + 2, text.data() + close, dim);
    if (ec != std::errc() || end != text.data() + close || dim < 0 || dim > kMaxShardDim) return 0;
    out = Placement::shard(dim);
    return close + 1;
  }
  if (text.starts_with("P")) {
    if (!text.starts_with("P(")) {
      out = Placement::partial(ReduceOp::kSum);
      return 1;
    }
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAvg, ReduceOp::kMax, ReduceOp::kMin}) {
      std::string form = fmt::format("P({})", reduce_op_name(op));
      if (text.starts_with(form)) {
        out = Placement::partial(op);
        return form.size();
      }
    }
  }
  return 0;
}

}  // namespace

Expected<Placement> parse_placement(std::string_view text) {
  Placement p;
  size_t n = parse_one(text, p);
  if (n == 0 || n != text.size()) {
    return make_error("bad placement \"{}\"; expected one of {}", text, kPlacementForm);
  }
  return p;
}

Expected<Sharding> parse_sharding(std::string_view text, int mesh_ndim) {
  Sharding s;
  size_t pos = 0;
  while (pos < text.size()) {
    if (s.ndim == kMaxMeshDims) {
      return make_error("sharding \"{}\" has more than {} placements", text, kMaxMeshDims);
    }
    Placement p;
    size_t n = parse_one(text.substr(pos), p);
    if (n == 0) {
      return make_error("bad sharding \"{}\" at offset {} (\"{}\"); expected placements {} "
                        "concatenated, one per mesh dim, e.g. \"S(0)R\"",
                        text, pos, text.substr(pos), kPlacementForm);
    }
    s[s.ndim++] = p;
    pos += n;
  }
  if (s.ndim == 0) return make_error("sharding \"\" is empty; expected e.g. \"S(0)R\"");
  if (mesh_ndim >= 0 && s.ndim != mesh_ndim) {
    return make_error("sharding \"{}\" has {} placements but the mesh has {} dims", text, s.ndim,
                      mesh_ndim);
  }
  return s;
}

int64_t shard_count(const Sharding& s, const DeviceMesh& mesh, int dim) {
  int64_t n = 1;
  for (MeshDim m = 0; m < s.ndim; ++m) {
    if (s[m].is_shard() && s[m].dim() == dim) n *= mesh.size(m);
  }
  return n;
}

int64_t padded_chunk(int64_t size, int64_t count) { return count <= 1 ? size : (size + count - 1) / count; }

int64_t chunk_start(int64_t size, int64_t count, int64_t index) {
  return std::min(size, index * padded_chunk(size, count));
}

int64_t chunk_size(int64_t size, int64_t count, int64_t index) {
  return chunk_start(size, count, index + 1) - chunk_start(size, count, index);
}

namespace {

// Why `count` pieces of a dim of `size` split by `splitters` mesh dims are
// not allowed, or "" when they are.
std::string split_problem(int64_t size, int64_t count, int splitters, const ShardingOptions& options) {
  if (size < count) return "smaller than the shard count";
  if (size % count == 0) return "";
  if (options.even_only) return "uneven shards (--even-only)";
  if (splitters > 1) return "uneven shards split by more than one mesh dim";
  if (chunk_start(size, count, count - 1) >= size) return "uneven shards that leave the last device empty";
  return "";
}

}  // namespace

Status check_sharding(const Shape& shape, const Sharding& s, const DeviceMesh& mesh,
                      const ShardingOptions& options) {
  if (s.ndim != mesh.ndim()) {
    return make_error("sharding {} has {} placements but the mesh has {} dims", to_string(s),
                      s.ndim, mesh.ndim());
  }
  for (MeshDim m = 0; m < s.ndim; ++m) {
    if (s[m].is_shard() && s[m].dim() >= static_cast<int>(shape.size())) {
      return make_error("sharding {} shards dim {} of rank-{} shape {}", to_string(s), s[m].dim(),
                        shape.size(), shape_to_string(shape));
    }
  }
  for (size_t dim = 0; dim < shape.size(); ++dim) {
    int64_t n = shard_count(s, mesh, static_cast<int>(dim));
    if (n == 1) continue;
    int splitters = 0;
    for (MeshDim m = 0; m < s.ndim; ++m) splitters += s[m].is_shard() && s[m].dim() == static_cast<int>(dim);
    std::string problem = split_problem(shape[dim], n, splitters, options);
    if (!problem.empty()) {
      return make_error("sharding {} splits dim {} of size {} into {} shards ({}) for shape {}", to_string(s), dim,
                        shape[dim], n, problem, shape_to_string(shape));
    }
  }
  return ok_status();
}

bool is_valid_sharding(const Shape& shape, const Sharding& s, const DeviceMesh& mesh,
                       const ShardingOptions& options) {
  // Hot path of strategy enumeration: the same checks as check_sharding, no strings.
  if (s.ndim != mesh.ndim()) return false;
  std::array<int64_t, kMaxShardDim + 1> counts;
  std::array<int8_t, kMaxShardDim + 1> splitters;
  size_t rank = shape.size();
  for (size_t i = 0; i < rank && i <= kMaxShardDim; ++i) counts[i] = 1, splitters[i] = 0;
  for (MeshDim m = 0; m < s.ndim; ++m) {
    if (!s[m].is_shard()) continue;
    size_t dim = static_cast<size_t>(s[m].dim());
    if (dim >= rank) return false;
    counts[dim] *= mesh.size(m);
    ++splitters[dim];
  }
  for (MeshDim m = 0; m < s.ndim; ++m) {
    if (!s[m].is_shard()) continue;
    size_t dim = static_cast<size_t>(s[m].dim());
    const int64_t size = shape[dim], count = counts[dim];
    if (size < count) return false;
    if (size % count == 0) continue;
    if (options.even_only || splitters[dim] > 1 || chunk_start(size, count, count - 1) >= size) return false;
  }
  return true;
}

bool is_uneven(const Shape& shape, const Sharding& s, const DeviceMesh& mesh) {
  for (MeshDim m = 0; m < s.ndim; ++m) {
    if (!s[m].is_shard()) continue;
    const auto dim = static_cast<size_t>(s[m].dim());
    if (dim < shape.size() && shape[dim] % shard_count(s, mesh, s[m].dim()) != 0) return true;
  }
  return false;
}

void local_shape_into(const Shape& shape, const Sharding& s, const DeviceMesh& mesh, Shape& out) {
  out.assign(shape.begin(), shape.end());
  for (MeshDim m = 0; m < s.ndim; ++m) {
    if (!s[m].is_shard()) continue;
    auto dim = static_cast<size_t>(s[m].dim());
    // Even splits, nested or not, divide exactly; an uneven dim has one splitter.
    out[dim] = out[dim] % mesh.size(m) == 0 ? out[dim] / mesh.size(m) : padded_chunk(out[dim], mesh.size(m));
  }
}

Shape local_shape(const Shape& shape, const Sharding& s, const DeviceMesh& mesh) {
  Shape out;
  local_shape_into(shape, s, mesh, out);
  return out;
}

Shape local_shape_at(const Shape& shape, const Sharding& s, const DeviceMesh& mesh,
                     const std::vector<int64_t>& coord) {
  Shape out(shape.begin(), shape.end());
  // Mesh dims in order: a lower one splits first, a higher one splits its piece.
  for (MeshDim m = 0; m < s.ndim; ++m) {
    if (!s[m].is_shard()) continue;
    auto dim = static_cast<size_t>(s[m].dim());
    out[dim] = chunk_size(out[dim], mesh.size(m), coord[static_cast<size_t>(m)]);
  }
  return out;
}

}  // namespace autopar
