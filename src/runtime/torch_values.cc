#include "runtime/torch_values.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include <ATen/ops/empty.h>
#include <ATen/ops/ones.h>
#include <fmt/format.h>

#include "ir/values_index.h"
#include "runtime/init.h"
#include "runtime/kernels.h"

namespace autopar {
namespace {

Expected<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error("cannot open {}", path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The index checked the entry (ir/values_index.h); its size is known before
// allocating, so a wrong file costs no tensor.
Expected<at::Tensor> read_tensor(const std::string& dir, const ValuesIndexEntry& entry) {
  std::string file = dir + "/" + entry.file;
  Expected<std::string> bytes = read_file(file);
  if (!bytes) return bytes.error();
  size_t want = static_cast<size_t>(entry.bytes);
  if (bytes->size() != want) {
    return make_error("{}: {} bytes, expected {} for {}{}", file, bytes->size(), want,
                      dtype_name(entry.dtype), shape_to_string(entry.shape));
  }
  at::Tensor t = at::empty(entry.shape, at::TensorOptions().dtype(to_scalar_type(entry.dtype)));
  std::memcpy(t.data_ptr(), bytes->data(), want);  // little-endian hosts only (x86, arm64)
  return t;
}

}  // namespace

Expected<TorchValues> read_torch_values(const std::string& dir) {
  Expected<std::string> text = read_file(dir + "/index.json");
  if (!text) return make_error_like(text.error(),
      "--check-against-torch: {} (write it with autopar_export.py --with-values)", text.error().message);
  Expected<ValuesIndex> index = parse_values_index(*text, dir);
  if (!index) return index.error();
  TorchValues values;
  for (const ValuesIndexEntry& entry : index->entries) {
    Expected<at::Tensor> t = read_tensor(dir, entry);
    if (!t) return t.error();
    if (entry.role == "param") values.params[entry.name] = *t;
    else if (entry.role == "input") values.inputs[entry.name] = *t;
    else if (entry.role == "grad") values.grads[entry.name] = *t;
    else if (entry.role == "loss") values.loss = *t;
    else values.buffers[entry.name] = *t;  // "buffer": the index allows no other role
  }
  return values;
}

Expected<std::vector<at::Tensor>> torch_placeholders(const Graph& graph, const TorchValues& values) {
  std::vector<at::Tensor> out(static_cast<size_t>(graph.size()));
  for (NodeId v = 0; v < graph.size(); ++v) {
    const Node& node = graph.node(v);
    if (!node.is_placeholder()) continue;
    const TensorMeta& meta = node.meta();
    if (node.kind == PlaceholderKind::kTangent) {
      out[static_cast<size_t>(v)] = at::ones(meta.shape, at::TensorOptions().dtype(to_scalar_type(meta.dtype)));
      continue;
    }
    if (node.value) {
      Expected<at::Tensor> t = tensor_from_bytes(*node.value, meta);
      if (!t) return make_error_like(t.error(), "placeholder '{}': {}", node.name, t.error().message);
      out[static_cast<size_t>(v)] = std::move(*t);
      continue;
    }
    const auto& table = node.kind == PlaceholderKind::kParam ? values.params : values.inputs;
    auto it = table.find(node.target);
    if (it == table.end()) {
      return make_error("placeholder '{}' (target '{}'): no value in the exporter's values", node.name, node.target);
    }
    if (it->second.sizes() != at::IntArrayRef(meta.shape)) {
      return make_error("placeholder '{}': the exporter's value has another shape than {}", node.name, to_string(meta));
    }
    out[static_cast<size_t>(v)] = it->second;
  }
  return out;
}

}  // namespace autopar
