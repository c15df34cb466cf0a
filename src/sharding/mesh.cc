#include "sharding/mesh.h"

#include <algorithm>
#include <charconv>
#include <numeric>

#include <fmt/format.h>

namespace autopar {
namespace {

constexpr std::string_view kMeshForm =
    "sizes >= 1 joined by 'x', e.g. \"8\", \"2x4\", \"8x8x8\"";

// Members of inter-node dim d in each node: devices are row-major, so d's
// members are `stride` (the product of the inner sizes) devices apart, and a
// node of devices_per_node holds devices_per_node / stride of them.
int64_t members_per_node(const std::vector<int64_t>& shape, int d, int64_t devices_per_node) {
  int64_t stride = 1;
  for (size_t k = static_cast<size_t>(d) + 1; k < shape.size(); ++k) stride *= shape[k];
  int64_t size = shape[static_cast<size_t>(d)];
  if (stride >= devices_per_node) return 1;
  return std::gcd(size, devices_per_node / stride);
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

}  // namespace

int64_t DeviceMesh::num_devices() const {
  int64_t n = 1;
  for (const MeshDimSpec& d : dims) n *= d.size;
  return n;
}

std::vector<int64_t> DeviceMesh::shape() const {
  std::vector<int64_t> out;
  for (const MeshDimSpec& d : dims) out.push_back(d.size);
  return out;
}

Expected<std::vector<int64_t>> parse_mesh_shape(std::string_view text) {
  if (text.empty()) return make_error("mesh \"\" is empty; expected {}", kMeshForm);
  std::vector<int64_t> sizes;
  for (std::string_view part : split(text, 'x')) {
    int64_t size = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), size);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size() || size < 1) {
      return make_error("mesh \"{}\" has a bad size \"{}\"; expected {}", text, part, kMeshForm);
    }
    sizes.push_back(size);
  }
  if (sizes.size() > static_cast<size_t>(kMaxMeshDims)) {
    return make_error("mesh \"{}\" has {} dims; at most {} are supported", text, sizes.size(),
                      kMaxMeshDims);
  }
  return sizes;
}

Expected<std::vector<std::string>> parse_mesh_names(std::string_view text) {
  std::vector<std::string> names;
  for (std::string_view part : split(text, ',')) {
    if (part.empty()) {
      return make_error("mesh names \"{}\" have an empty name; expected e.g. \"dp,tp\"", text);
    }
    if (std::find(names.begin(), names.end(), part) != names.end()) {
      return make_error("mesh names \"{}\" repeat \"{}\"", text, part);
    }
    names.emplace_back(part);
  }
  return names;
}

Expected<DeviceMesh> make_mesh(const std::vector<int64_t>& shape, const HardwareProfile& hw,
                               const MeshOptions& options) {
  int ndim = static_cast<int>(shape.size());
  if (ndim == 0 || ndim > kMaxMeshDims) {
    return make_error("a mesh needs 1 to {} dims, got {}", kMaxMeshDims, ndim);
  }
  if (!options.names.empty() && static_cast<int>(options.names.size()) != ndim) {
    return make_error("{} mesh names given for a {}-D mesh", options.names.size(), ndim);
  }
  if (options.intra_node_dims && (*options.intra_node_dims < 0 || *options.intra_node_dims > ndim)) {
    return make_error("intra-node dims {} is out of range for a {}-D mesh",
                      *options.intra_node_dims, ndim);
  }
  // Innermost dims stay inside a node while their product fits devices_per_node.
  int intra = 0;
  int64_t inner = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    if (inner * shape[static_cast<size_t>(d)] > std::max<int64_t>(hw.devices_per_node, 1)) break;
    inner *= shape[static_cast<size_t>(d)];
    ++intra;
  }
  if (options.intra_node_dims) intra = *options.intra_node_dims;
  DeviceMesh mesh;
  for (int d = 0; d < ndim; ++d) {
    MeshDimSpec spec;
    spec.name = options.names.empty() ? fmt::format("d{}", d) : options.names[static_cast<size_t>(d)];
    spec.size = shape[static_cast<size_t>(d)];
    if (spec.size < 1) return make_error("mesh dim {} has size {}; sizes must be >= 1", d, spec.size);
    spec.link_class = d >= ndim - intra ? LinkClass::kIntraNode : LinkClass::kInterNode;
    spec.link = hw.link(spec.link_class);
    int64_t per_node = spec.size;
    if (spec.link_class == LinkClass::kInterNode) {
      per_node = options.intra_node_dims ? 1 : members_per_node(shape, d, hw.devices_per_node);
    }
    spec.group = CollectiveGroup{spec.size, per_node, hw.intra_node, hw.inter_node};
    mesh.dims.push_back(std::move(spec));
  }
  return mesh;
}

std::string mesh_shape_string(const DeviceMesh& mesh) {
  std::string out;
  for (const MeshDimSpec& d : mesh.dims) out += fmt::format("{}{}", out.empty() ? "" : "x", d.size);
  return out;
}

std::string to_string(const DeviceMesh& mesh) {
  std::string out;
  for (const MeshDimSpec& d : mesh.dims) {
    out += fmt::format("{}{}={}({})", out.empty() ? "" : " ", d.name, d.size,
                       d.link_class == LinkClass::kIntraNode ? "intra" : "inter");
  }
  return out;
}

}  // namespace autopar
