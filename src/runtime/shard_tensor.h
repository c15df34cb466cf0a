// Shard tensors: cut a full tensor into one device's local shard for a
// sharding on a device mesh, and put shards back together.
//
// Devices are identified by their mesh coordinate (one index per mesh dim;
// device ids are row-major over the mesh shape, mesh dim 0 outermost). When
// several mesh dims shard one tensor dim, the lower mesh dim splits it first
// (outer chunks) and higher ones split each chunk further (docs/sharding.md).
// Used by the SPMD executor (slicing init values, gathering results), the
// rule soundness sweep and tests.
//
// Runtime-only header: includes ATen.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <ATen/core/Tensor.h>

#include "ir/expected.h"
#include "sharding/mesh.h"
#include "sharding/placement.h"

namespace autopar {

using MeshCoord = std::vector<int64_t>;

// Row-major coordinate of device `device` (0 <= device < num_devices) and back.
MeshCoord mesh_coordinate(const DeviceMesh& mesh, int64_t device);
int64_t device_index(const DeviceMesh& mesh, const MeshCoord& coord);

// Where the device's shard starts in the full tensor, per tensor dim (uneven
// dims in torch.chunk's pieces, placement.h).
std::vector<int64_t> shard_offsets(const Shape& full_shape, const Sharding& sharding,
                                   const DeviceMesh& mesh, const MeshCoord& coord);

// The device's local shard (a view into `full` where possible). Partial mesh
// dims are the local step R -> P: with P(sum) the device with index 0 on every
// Partial mesh dim holds the value and the others zeros; P(avg), P(max) and
// P(min) give every device the value. Errors name the sharding and shape when
// the sharding is invalid for the tensor.
Expected<at::Tensor> local_shard(const at::Tensor& full, const Sharding& sharding,
                                 const DeviceMesh& mesh, const MeshCoord& coord);

struct AssembleTolerance {
  double rtol = 1e-5;
  double atol = 1e-6;
};

// The full tensor from every device's shard (indexed by device id): shards
// concatenate along S dims, Partial dims reduce (sum, mean, max, min), and
// replicas must agree within the tolerance (error naming the mesh dim and the
// largest difference otherwise).
Expected<at::Tensor> assemble(std::span<const at::Tensor> shards, const Sharding& sharding,
                              const DeviceMesh& mesh, const AssembleTolerance& tolerance = {});

}  // namespace autopar
