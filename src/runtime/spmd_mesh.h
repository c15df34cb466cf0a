// SPMD mesh: where this rank sits on the device mesh, and one communicator per
// mesh dim.
//
// Rank r of the world has the row-major coordinate of r over the mesh shape
// (the numbering DeviceMesh documents: mesh dim 0 outermost). The
// communicator of mesh dim m holds the ranks whose coordinates differ only on
// m, ordered by their coordinate on m, so a collective "on mesh dim m" is a
// collective on that communicator. Shard offsets say where this rank's shard
// of a tensor starts in the full tensor (for masked embedding lookups):
// shard_tensor.h's shard_offsets with coordinate().
#pragma once

#include <cstdint>
#include <vector>

#include "ir/expected.h"
#include "ir/tensor_meta.h"
#include "runtime/mpi_comm.h"
#include "runtime/shard_tensor.h"
#include "sharding/mesh.h"
#include "sharding/placement.h"

namespace autopar {

class SpmdMesh {
 public:
  // Errors when the world size is not the mesh's device count.
  static Expected<SpmdMesh> create(const DeviceMesh& mesh, const Communicator& world);

  const DeviceMesh& mesh() const { return mesh_; }
  const Communicator& world() const { return world_; }
  const Communicator& dim(MeshDim d) const { return dims_[static_cast<size_t>(d)]; }
  const std::vector<int64_t>& coordinate() const { return coord_; }
  int64_t coordinate(MeshDim d) const { return coord_[static_cast<size_t>(d)]; }

 private:
  SpmdMesh(DeviceMesh mesh, Communicator world) : mesh_(std::move(mesh)), world_(world) {}
  DeviceMesh mesh_;
  Communicator world_;
  std::vector<int64_t> coord_;
  std::vector<Communicator> dims_;
};

}  // namespace autopar
