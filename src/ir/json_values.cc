// Value-level pieces of the JSON graph reader (json_reader.cc): typed field
// access, tensor metas and attributes, each error prefixed with its JSON path.
#include <algorithm>
#include <cstdint>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ir/base64.h"
#include "ir/json_io_internal.h"

namespace autopar::graph_json {
namespace {

// Appends a compact dump of value to out, stopping once out is past kBriefLimit:
// bounded work and depth even for a huge or deeply nested value.
constexpr size_t kBriefLimit = 40;
void brief(const Json& value, std::string& out) {
  if (!value.is_structured()) {
    out += value.dump(-1, ' ', false, Json::error_handler_t::replace);
    return;
  }
  out += value.is_array() ? '[' : '{';
  bool first = true;
  for (auto it = value.begin(); it != value.end() && out.size() <= kBriefLimit; ++it) {
    if (!first) out += ',';
    first = false;
    if (value.is_object()) out += Json(it.key()).dump(-1, ' ', false, Json::error_handler_t::replace) + ":";
    brief(*it, out);
  }
  out += value.is_array() ? ']' : '}';
}

Expected<std::vector<int64_t>> read_ints(const Json& value, const Where& where, bool non_negative) {
  if (!value.is_array()) return where.error("expected an array of ints, got {}", describe(value));
  std::vector<int64_t> ints;
  ints.reserve(value.size());
  for (size_t i = 0; i < value.size(); ++i) {
    std::optional<int64_t> v = as_int64(value[i]);
    if (!v) return where.at(fmt::format("[{}]", i)).error("expected an int, got {}", describe(value[i]));
    if (non_negative && *v < 0) {
      return where.at(fmt::format("[{}]", i)).error("a dimension must be >= 0, got {}", *v);
    }
    ints.push_back(*v);
  }
  return ints;
}

Expected<double> read_special_double(const Json& value) {
  std::string text = value.get<std::string>();
  if (text == "inf") return std::numeric_limits<double>::infinity();
  if (text == "-inf") return -std::numeric_limits<double>::infinity();
  if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
  return Error{};
}

Expected<std::vector<double>> read_floats(const Json& value, const Where& where) {
  std::vector<double> floats;
  for (size_t i = 0; i < value.size(); ++i) {
    if (!value[i].is_number()) {
      return where.at(fmt::format("[{}]", i)).error("expected a number, got {}", describe(value[i]));
    }
    floats.push_back(value[i].get<double>());
  }
  return floats;
}

std::string schema_names(const OpDef& def) {
  std::string names;
  for (const AttrSpec& spec : def.attrs) names += (names.empty() ? "" : ", ") + std::string(spec.name);
  return names.empty() ? "none" : names;
}

}  // namespace

Expected<AttrValue> read_attr_value(const Json& value, AttrType type, const Where& where) {
  switch (type) {
    case AttrType::kInt:
      if (std::optional<int64_t> v = as_int64(value)) return AttrValue(*v);
      break;
    case AttrType::kScalar:
      if (std::optional<int64_t> v = as_int64(value)) return AttrValue(*v);
      if (value.is_number_float()) return AttrValue(value.get<double>());
      if (value.is_string()) {
        if (Expected<double> d = read_special_double(value)) return AttrValue(*d);
      }
      break;
    case AttrType::kBool:
      if (value.is_boolean()) return AttrValue(value.get<bool>());
      break;
    case AttrType::kInts: {
      if (!value.is_array()) break;
      Expected<std::vector<int64_t>> ints = read_ints(value, where, /*non_negative=*/false);
      if (!ints) return ints.error();
      return AttrValue(std::move(*ints));
    }
    case AttrType::kDType: {
      if (!value.is_string()) break;
      Expected<DType> dtype = read_dtype(value, where);
      if (!dtype) return dtype.error();
      return AttrValue(*dtype);
    }
    case AttrType::kString:
      if (value.is_string()) return AttrValue(value.get<std::string>());
      break;
    case AttrType::kFloats: {
      if (!value.is_array()) break;
      Expected<std::vector<double>> floats = read_floats(value, where);
      if (!floats) return floats.error();
      return AttrValue(std::move(*floats));
    }
  }
  std::string_view hint = type == AttrType::kScalar ? " (int, float, \"inf\", \"-inf\" or \"nan\")" : "";
  return where.error("expected {}{}, got {}", attr_type_name(type), hint, describe(value));
}

// "number 5", "string \"f33\"", "array [1,2]" (long values cut).
std::string describe(const Json& value) {
  std::string text;
  brief(value, text);
  if (text.size() > kBriefLimit) text = text.substr(0, kBriefLimit - 3) + "...";
  return fmt::format("{} {}", value.type_name(), text);
}

std::optional<int64_t> as_int64(const Json& value) {
  if (value.is_number_unsigned()) {
    auto u = value.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (value.is_number_integer()) return value.get<int64_t>();
  return std::nullopt;
}

const Json* field(const Json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

Status check_keys(const Json& object, const Where& where, std::span<const std::string_view> known) {
  for (const auto& [key, value] : object.items()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      return where.error("unknown field '{}' (known: {})", key, fmt::join(known, ", "));
    }
  }
  return ok_status();
}

Expected<const Json*> require(const Json& object, const char* key, const Where& where) {
  const Json* value = field(object, key);
  if (value == nullptr) return where.error("missing field '{}'", key);
  return value;
}

Expected<std::string> read_string(const Json& value, const Where& where) {
  if (!value.is_string()) return where.error("expected a string, got {}", describe(value));
  return value.get<std::string>();
}

Expected<DType> read_dtype(const Json& value, const Where& where) {
  Expected<std::string> name = read_string(value, where);
  if (!name) return name.error();
  if (std::optional<DType> dtype = parse_dtype(*name)) return *dtype;
  std::string known;
  for (int i = 0; i < kDTypeCount; ++i) {
    known += (i > 0 ? ", " : "") + std::string(dtype_name(static_cast<DType>(i)));
  }
  return where.error("unknown dtype '{}' (known: {})", *name, known);
}

Expected<TensorMeta> read_meta(const Json& value, const Where& where) {
  if (!value.is_object()) return where.error("expected an object, got {}", describe(value));
  static constexpr std::array<std::string_view, 2> kKeys = {"shape", "dtype"};
  if (Status s = check_keys(value, where, kKeys); !s) return s.error();
  Expected<const Json*> shape = require(value, "shape", where);
  if (!shape) return shape.error();
  Expected<const Json*> dtype = require(value, "dtype", where);
  if (!dtype) return dtype.error();
  Expected<std::vector<int64_t>> dims = read_ints(**shape, where.at(".shape"), /*non_negative=*/true);
  if (!dims) return dims.error();
  Expected<DType> type = read_dtype(**dtype, where.at(".dtype"));
  if (!type) return type.error();
  TensorMeta meta{std::move(*dims), *type};
  if (!checked_bytes(meta)) {
    return where.at(".shape").error("{} is too large: its size in bytes does not fit int64", to_string(meta));
  }
  return meta;
}

Expected<std::shared_ptr<const TensorBytes>> read_tensor_value(const Json& value,
                                                               const TensorMeta& meta,
                                                               const Where& where) {
  Expected<std::string> text = read_string(value, where);
  if (!text) return text.error();
  Expected<std::vector<uint8_t>> bytes = base64_decode(*text);
  if (!bytes) return where.error("{}", bytes.error().message);
  if (static_cast<int64_t>(bytes->size()) != meta.bytes()) {
    return where.error("the value has {} bytes, but {} takes {}", bytes->size(), to_string(meta),
                       meta.bytes());
  }
  return std::make_shared<const TensorBytes>(std::move(*bytes));
}

// Attributes are stored in schema order whatever order the file uses.
Expected<Attrs> read_attrs(const Json* value, const OpDef& def, const Where& where) {
  Attrs attrs;
  if (value != nullptr && !value->is_object()) {
    return where.error("expected an object, got {}", describe(*value));
  }
  if (value != nullptr) {
    for (const auto& [key, v] : value->items()) {
      // An init-capture: clang 14 (the fuzz build) cannot capture a structured binding.
      auto spec = std::find_if(def.attrs.begin(), def.attrs.end(),
                               [&name = key](const AttrSpec& s) { return s.name == name; });
      if (spec == def.attrs.end()) {
        return where.at("." + key).error("{} has no attribute '{}' (it takes: {})", def.name,
                                         key, schema_names(def));
      }
    }
  }
  for (const AttrSpec& spec : def.attrs) {
    const Json* v = value == nullptr ? nullptr : field(*value, std::string(spec.name).c_str());
    if (v == nullptr) {
      if (!spec.required) continue;
      return where.error("{} needs attribute '{}' ({})", def.name, spec.name,
                         attr_type_name(spec.type));
    }
    Expected<AttrValue> attr = read_attr_value(*v, spec.type, where.at("." + std::string(spec.name)));
    if (!attr) return attr.error();
    attrs.set(spec.name, std::move(*attr));
  }
  return attrs;
}

}  // namespace autopar::graph_json
