#include "ir/attr.h"

#include <cassert>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace autopar {

void Attrs::set(std::string_view name, AttrValue value) {
  for (Attr& attr : attrs_) {
    if (attr.name == name) {
      attr.value = std::move(value);
      return;
    }
  }
  attrs_.push_back(Attr{std::string(name), std::move(value)});
}

const AttrValue* Attrs::find(std::string_view name) const {
  for (const Attr& attr : attrs_) {
    if (attr.name == name) return &attr.value;
  }
  return nullptr;
}

int64_t Attrs::get_int(std::string_view name) const {
  const AttrValue* v = find(name);
  assert(v && std::holds_alternative<int64_t>(*v));
  return std::get<int64_t>(*v);
}

double Attrs::get_scalar(std::string_view name) const {
  const AttrValue* v = find(name);
  assert(v);
  if (const auto* i = std::get_if<int64_t>(v)) return static_cast<double>(*i);
  assert(std::holds_alternative<double>(*v));
  return std::get<double>(*v);
}

bool Attrs::get_bool(std::string_view name) const {
  const AttrValue* v = find(name);
  assert(v && std::holds_alternative<bool>(*v));
  return std::get<bool>(*v);
}

const std::vector<int64_t>& Attrs::get_ints(std::string_view name) const {
  const AttrValue* v = find(name);
  assert(v && std::holds_alternative<std::vector<int64_t>>(*v));
  return std::get<std::vector<int64_t>>(*v);
}

DType Attrs::get_dtype(std::string_view name) const {
  const AttrValue* v = find(name);
  assert(v && std::holds_alternative<DType>(*v));
  return std::get<DType>(*v);
}

const std::string& Attrs::get_string(std::string_view name) const {
  const AttrValue* v = find(name);
  assert(v && std::holds_alternative<std::string>(*v));
  return std::get<std::string>(*v);
}

const std::vector<double>& Attrs::get_floats(std::string_view name) const {
  const AttrValue* v = find(name);
  assert(v && std::holds_alternative<std::vector<double>>(*v));
  return std::get<std::vector<double>>(*v);
}

std::string_view attr_type_name(AttrType type) {
  switch (type) {
    case AttrType::kInt: return "int";
    case AttrType::kScalar: return "scalar";
    case AttrType::kBool: return "bool";
    case AttrType::kInts: return "int list";
    case AttrType::kDType: return "dtype";
    case AttrType::kString: return "string";
    case AttrType::kFloats: return "float list";
  }
  return "?";
}

bool attr_matches(const AttrValue& value, AttrType type) {
  switch (type) {
    case AttrType::kInt: return std::holds_alternative<int64_t>(value);
    case AttrType::kScalar:
      return std::holds_alternative<int64_t>(value) || std::holds_alternative<double>(value);
    case AttrType::kBool: return std::holds_alternative<bool>(value);
    case AttrType::kInts: return std::holds_alternative<std::vector<int64_t>>(value);
    case AttrType::kDType: return std::holds_alternative<DType>(value);
    case AttrType::kString: return std::holds_alternative<std::string>(value);
    case AttrType::kFloats: return std::holds_alternative<std::vector<double>>(value);
  }
  return false;
}

std::string attr_value_to_string(const AttrValue& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return fmt::format("{}", *i);
  if (const auto* d = std::get_if<double>(&value)) return fmt::format("{}", *d);
  if (const auto* b = std::get_if<bool>(&value)) return *b ? "True" : "False";
  if (const auto* l = std::get_if<std::vector<int64_t>>(&value)) {
    return fmt::format("[{}]", fmt::join(*l, ", "));
  }
  if (const auto* t = std::get_if<std::string>(&value)) return fmt::format("'{}'", *t);
  if (const auto* f = std::get_if<std::vector<double>>(&value)) {
    return fmt::format("[{}]", fmt::join(*f, ", "));
  }
  return std::string(dtype_name(std::get<DType>(value)));
}

}  // namespace autopar
