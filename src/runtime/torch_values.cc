#include "runtime/torch_values.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include <ATen/ops/empty.h>
#include <ATen/ops/ones.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

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

Expected<at::Tensor> read_tensor(const std::string& dir, const nlohmann::json& entry) {
  std::string file = dir + "/" + entry.value("file", std::string());
  std::optional<DType> dtype = parse_dtype(entry.value("dtype", std::string()));
  if (!dtype) return make_error("{}: unknown dtype '{}'", file, entry.value("dtype", std::string()));
  std::vector<int64_t> shape = entry.value("shape", std::vector<int64_t>{});
  at::Tensor t = at::empty(shape, at::TensorOptions().dtype(to_scalar_type(*dtype)));
  Expected<std::string> bytes = read_file(file);
  if (!bytes) return bytes.error();
  size_t want = static_cast<size_t>(t.numel()) * t.element_size();
  if (bytes->size() != want) {
    return make_error("{}: {} bytes, expected {} for {}{}", file, bytes->size(), want,
                      dtype_name(*dtype), shape_to_string(shape));
  }
  std::memcpy(t.data_ptr(), bytes->data(), want);  // little-endian hosts only (x86, arm64)
  return t;
}

}  // namespace

Expected<TorchValues> read_torch_values(const std::string& dir) {
  Expected<std::string> text = read_file(dir + "/index.json");
  if (!text) return make_error("--check-against-torch: {} (write it with autopar_export.py --with-values)", text.error().message);
  nlohmann::json index = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (index.is_discarded() || index.value("format", "") != "autopar.values" || !index.contains("tensors")) {
    return make_error("{}/index.json is not an autopar.values index", dir);
  }
  TorchValues values;
  for (const nlohmann::json& entry : index["tensors"]) {
    Expected<at::Tensor> t = read_tensor(dir, entry);
    if (!t) return t.error();
    std::string role = entry.value("role", "");
    std::string name = entry.value("name", "");
    if (role == "param") values.params[name] = *t;
    else if (role == "input") values.inputs[name] = *t;
    else if (role == "grad") values.grads[name] = *t;
    else if (role == "loss") values.loss = *t;
    else if (role == "buffer") values.buffers[name] = *t;
    else return make_error("{}/index.json: tensor '{}' has unknown role '{}'", dir, name, role);
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
      if (!t) return make_error("placeholder '{}': {}", node.name, t.error().message);
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
