// Device mesh: the logical N-D grid of devices a plan shards tensors over.
//
// Each mesh dim has a name (default "d0", "d1", ...; --mesh-names overrides),
// a size, and the link its collectives run on (intra- or inter-node, with that
// link's bandwidth and latency from a HardwareProfile). Mesh dim 0 is the
// outermost: devices are numbered row-major over the mesh shape, so the
// innermost dims are the ones that stay inside a node. By default the innermost
// dims are intra-node while the product of their sizes fits devices_per_node;
// MeshOptions::intra_node_dims overrides that count.
//
// A dim's collective group (cost/comm_cost.h) says how its members sit on
// nodes: an intra-node dim's group is one node; an inter-node dim whose members
// are closer than devices_per_node apart (its inner dims use less than a node)
// has several members in each node, e.g. on 8-device nodes the outer dim of
// 4x4 has 2 members in each of 2 nodes. Under --intra-node-dims every
// inter-node dim has one member per node.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cost/comm_cost.h"
#include "cost/hardware.h"
#include "ir/expected.h"

namespace autopar {

using MeshDim = int32_t;
// Placements pack into fixed arrays of this size (see placement.h).
inline constexpr int kMaxMeshDims = 8;

struct MeshDimSpec {
  std::string name;
  int64_t size = 1;
  LinkClass link_class = LinkClass::kIntraNode;
  LinkSpec link;
  CollectiveGroup group;  // what its collectives cost with
};

struct DeviceMesh {
  std::vector<MeshDimSpec> dims;

  int ndim() const { return static_cast<int>(dims.size()); }
  int64_t size(MeshDim d) const { return dims[static_cast<size_t>(d)].size; }
  int64_t num_devices() const;
  std::vector<int64_t> shape() const;
};

struct MeshOptions {
  std::vector<std::string> names;         // empty: d0, d1, ...
  std::optional<int> intra_node_dims;     // innermost dims on intra-node links
};

// "8x8", "2x4", "8x8x8", "4" -> sizes. Errors name the text and the expected form.
Expected<std::vector<int64_t>> parse_mesh_shape(std::string_view text);
// "dp,tp" -> names; empty names or duplicates are errors.
Expected<std::vector<std::string>> parse_mesh_names(std::string_view text);

Expected<DeviceMesh> make_mesh(const std::vector<int64_t>& shape, const HardwareProfile& hw,
                               const MeshOptions& options = {});

// "2x4" (shape only) and "d0=2(inter) d1=4(intra)" (with names and links).
std::string mesh_shape_string(const DeviceMesh& mesh);
std::string to_string(const DeviceMesh& mesh);

}  // namespace autopar
