#include "runtime/spmd_mesh.h"

namespace autopar {

Expected<SpmdMesh> SpmdMesh::create(const DeviceMesh& mesh, const Communicator& world) {
  if (mesh.num_devices() != world.size()) {
    return make_error("mesh {} has {} devices but the job has {} ranks", mesh_shape_string(mesh),
                      mesh.num_devices(), world.size());
  }
  SpmdMesh out(mesh, world);
  std::vector<int64_t> shape = mesh.shape();
  out.coord_ = mesh_coordinate(mesh, world.rank());
  for (MeshDim m = 0; m < mesh.ndim(); ++m) {
    // Color: the coordinate with dim m left out, as one row-major number.
    int64_t color = 0;
    for (MeshDim k = 0; k < mesh.ndim(); ++k) {
      if (k != m) color = color * shape[static_cast<size_t>(k)] + out.coord_[static_cast<size_t>(k)];
    }
    Expected<Communicator> comm =
        world.split(static_cast<int>(color), static_cast<int>(out.coord_[static_cast<size_t>(m)]));
    if (!comm) return make_error_like(comm.error(), "mesh dim {}: {}", m, comm.error().message);
    out.dims_.push_back(*comm);
  }
  return out;
}

}  // namespace autopar
