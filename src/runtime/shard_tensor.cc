// Shard slicing and assembly over a device mesh.
#include "runtime/shard_tensor.h"

#include <ATen/ops/allclose.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/maximum.h>
#include <ATen/ops/minimum.h>
#include <ATen/ops/zeros_like.h>

namespace autopar {
namespace {

Shape sizes_of(const at::Tensor& t) { return Shape(t.sizes().begin(), t.sizes().end()); }

// Index of the device's chunk of tensor dim `dim` among shard_count chunks:
// mixed radix over the mesh dims sharding it, lowest mesh dim most significant.
int64_t chunk_index(const Sharding& sharding, const DeviceMesh& mesh, const MeshCoord& coord,
                    int dim) {
  int64_t index = 0;
  for (MeshDim m = 0; m < mesh.ndim(); ++m) {
    Placement p = sharding[m];
    if (p.is_shard() && p.dim() == dim) {
      index = index * mesh.size(m) + coord[static_cast<size_t>(m)];
    }
  }
  return index;
}

// Combines `count` consecutive shards along one mesh dim's placement.
Expected<at::Tensor> combine(std::span<const at::Tensor> parts, Placement p, MeshDim m,
                             const AssembleTolerance& tolerance) {
  std::vector<at::Tensor> list(parts.begin(), parts.end());
  if (p.is_shard()) return at::cat(list, p.dim());
  if (p.is_partial()) {
    at::Tensor acc = list[0].clone();
    for (size_t i = 1; i < list.size(); ++i) {
      switch (p.reduce_op()) {
        case ReduceOp::kSum:
        case ReduceOp::kAvg: acc = acc.add(list[i]); break;
        case ReduceOp::kMax: acc = at::maximum(acc, list[i]); break;
        case ReduceOp::kMin: acc = at::minimum(acc, list[i]); break;
      }
    }
    if (p.reduce_op() == ReduceOp::kAvg) acc = acc.div(static_cast<double>(list.size()));
    return acc;
  }
  for (size_t i = 1; i < list.size(); ++i) {
    bool same = list[i].is_floating_point() || list[i].is_complex()
                    ? at::allclose(list[i], list[0], tolerance.rtol, tolerance.atol)
                    : list[i].equal(list[0]);
    if (!same) {
      double diff = list[i].to(at::kDouble).sub(list[0].to(at::kDouble)).abs().max().item<double>();
      return make_error(
          "replicas disagree on mesh dim {}: replica {} differs from replica 0 by up "
          "to {}",
          m, i, diff);
    }
  }
  return list[0];
}

}  // namespace

MeshCoord mesh_coordinate(const DeviceMesh& mesh, int64_t device) {
  MeshCoord coord(static_cast<size_t>(mesh.ndim()));
  for (MeshDim m = mesh.ndim() - 1; m >= 0; --m) {
    coord[static_cast<size_t>(m)] = device % mesh.size(m);
    device /= mesh.size(m);
  }
  return coord;
}

int64_t device_index(const DeviceMesh& mesh, const MeshCoord& coord) {
  int64_t index = 0;
  for (MeshDim m = 0; m < mesh.ndim(); ++m)
    index = index * mesh.size(m) + coord[static_cast<size_t>(m)];
  return index;
}

std::vector<int64_t> shard_offsets(const Shape& full_shape, const Sharding& sharding,
                                   const DeviceMesh& mesh, const MeshCoord& coord) {
  std::vector<int64_t> offsets(full_shape.size(), 0);
  for (size_t d = 0; d < full_shape.size(); ++d) {
    int64_t count = shard_count(sharding, mesh, static_cast<int>(d));
    if (count > 1) {
      offsets[d] = chunk_start(full_shape[d], count, chunk_index(sharding, mesh, coord, static_cast<int>(d)));
    }
  }
  return offsets;
}

Expected<at::Tensor> local_shard(const at::Tensor& full, const Sharding& sharding,
                                 const DeviceMesh& mesh, const MeshCoord& coord) {
  Shape shape = sizes_of(full);
  if (Status s = check_sharding(shape, sharding, mesh); !s) {
    return make_error_like(s.error(), "cannot shard {} as {}: {}", shape_to_string(shape), to_string(sharding),
                           s.error().message);
  }
  if (coord.size() != static_cast<size_t>(mesh.ndim())) {
    return make_error("mesh coordinate has {} entries for a {}-dim mesh", coord.size(),
                      mesh.ndim());
  }
  at::Tensor local = full;
  std::vector<int64_t> offsets = shard_offsets(shape, sharding, mesh, coord);
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t count = shard_count(sharding, mesh, static_cast<int>(d));
    if (count > 1) {
      int64_t size = chunk_size(shape[d], count, chunk_index(sharding, mesh, coord, static_cast<int>(d)));
      local = local.narrow(static_cast<int64_t>(d), offsets[d], size);
    }
  }
  for (MeshDim m = 0; m < mesh.ndim(); ++m) {
    Placement p = sharding[m];
    if (p.is_partial() && p.reduce_op() == ReduceOp::kSum && coord[static_cast<size_t>(m)] != 0) {
      return at::zeros_like(local);
    }
  }
  return local;
}

// Reduces mesh dims from the innermost out: with row-major device ids the
// shards that differ only in the last remaining mesh dim are consecutive.
Expected<at::Tensor> assemble(std::span<const at::Tensor> shards, const Sharding& sharding,
                              const DeviceMesh& mesh, const AssembleTolerance& tolerance) {
  if (static_cast<int64_t>(shards.size()) != mesh.num_devices()) {
    return make_error("assemble got {} shards for a mesh of {} devices ({})", shards.size(),
                      mesh.num_devices(), mesh_shape_string(mesh));
  }
  std::vector<at::Tensor> level(shards.begin(), shards.end());
  for (MeshDim m = mesh.ndim() - 1; m >= 0; --m) {
    size_t size = static_cast<size_t>(mesh.size(m));
    std::vector<at::Tensor> next;
    for (size_t start = 0; start < level.size(); start += size) {
      Expected<at::Tensor> combined =
          combine(std::span(level).subspan(start, size), sharding[m], m, tolerance);
      if (!combined) {
        return make_error_like(combined.error(), "assemble {} on {}: {}", to_string(sharding), mesh_shape_string(mesh),
                               combined.error().message);
      }
      next.push_back(*combined);
    }
    level = std::move(next);
  }
  return level.front();
}

}  // namespace autopar
