// The exporter's values index (ir/values_index.h). Never throws: nlohmann is
// used through type checks before every get.
#include "ir/values_index.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace autopar {
namespace {

using Json = nlohmann::json;

// A short, never-throwing preview of a value for messages.
std::string preview(const Json& value) {
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  return text.size() > 40 ? text.substr(0, 37) + "..." : text;
}

// entry[key] as a string; absent: "" (as the index was always read).
Expected<std::string> text_field(const Json& entry, const char* key, const std::string& where) {
  auto it = entry.find(key);
  if (it == entry.end()) return std::string();
  if (!it->is_string()) return make_error("{}.{} must be a string, got {}", where, key, preview(*it));
  return it->get<std::string>();
}

Expected<Shape> shape_field(const Json& entry, const std::string& where) {
  auto it = entry.find("shape");
  if (it == entry.end()) return Shape{};
  if (!it->is_array()) return make_error("{}.shape must be a list of sizes, got {}", where, preview(*it));
  Shape shape;
  for (const Json& d : *it) {
    if (!d.is_number_integer() || (d.is_number_unsigned() && d.get<uint64_t>() > INT64_MAX) ||
        d.get<int64_t>() < 0) {
      return make_error("{}.shape must be a list of sizes >= 0, got {}", where, preview(*it));
    }
    shape.push_back(d.get<int64_t>());
  }
  return shape;
}

Expected<ValuesIndexEntry> read_entry(const Json& entry, const std::string& where, std::string_view dir) {
  if (!entry.is_object()) return make_error("{} must be an object, got {}", where, preview(entry));
  ValuesIndexEntry out;
  for (auto [key, field] : {std::pair{"role", &out.role}, std::pair{"name", &out.name},
                            std::pair{"file", &out.file}}) {
    Expected<std::string> text = text_field(entry, key, where);
    if (!text) return text.error();
    *field = std::move(*text);
  }
  Expected<std::string> dtype = text_field(entry, "dtype", where);
  if (!dtype) return dtype.error();
  std::optional<DType> parsed = parse_dtype(*dtype);
  if (!parsed) return make_error("{}/{}: unknown dtype '{}'", dir, out.file, *dtype);
  out.dtype = *parsed;
  Expected<Shape> shape = shape_field(entry, where);
  if (!shape) return shape.error();
  out.shape = std::move(*shape);
  std::optional<int64_t> bytes = checked_bytes(TensorMeta{out.shape, out.dtype});
  if (!bytes) {
    return make_error("{}/{}: {}{} has more bytes than a file can hold", dir, out.file,
                      dtype_name(out.dtype), shape_to_string(out.shape));
  }
  out.bytes = *bytes;
  if (out.role != "param" && out.role != "input" && out.role != "grad" && out.role != "loss" &&
      out.role != "buffer") {
    return make_error("{}/index.json: tensor '{}' has unknown role '{}'", dir, out.name, out.role);
  }
  return out;
}

}  // namespace

Expected<ValuesIndex> parse_values_index(std::string_view json_text, std::string_view dir) {
  Json index = Json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  const Json* tensors = nullptr;
  if (!index.is_discarded() && index.is_object()) {
    auto format = index.find("format");
    auto found = index.find("tensors");
    if (format != index.end() && *format == "autopar.values" && found != index.end()) tensors = &*found;
  }
  if (tensors == nullptr) return make_error("{}/index.json is not an autopar.values index", dir);
  if (!tensors->is_array()) {
    return make_error("{}/index.json: \"tensors\" must be a list, got {}", dir, preview(*tensors));
  }
  ValuesIndex out;
  for (size_t i = 0; i < tensors->size(); ++i) {
    Expected<ValuesIndexEntry> entry =
        read_entry((*tensors)[i], fmt::format("{}/index.json: tensors[{}]", dir, i), dir);
    if (!entry) return entry.error();
    out.entries.push_back(std::move(*entry));
  }
  return out;
}

}  // namespace autopar
