// Reading nodes of generic aten ops (OpId::kGeneric): the op's libtorch schema
// (ir/aten_schema.h) takes the place of the op table's arity and attribute
// specs. Also the node field "arg_inputs", which says how tensor arguments
// bind to inputs when that is not one each.
#include <algorithm>

#include <fmt/format.h>

#include "ir/json_io_internal.h"

namespace autopar::graph_json {
namespace {

Expected<TensorArg> read_tensor_arg(const Json& value, const Where& where) {
  TensorArg arg;
  if (std::optional<int64_t> count = as_int64(value)) {
    if (*count < 0) return where.error("an input count must be >= 0, got {}", *count);
    arg.count = static_cast<int32_t>(*count);
    return arg;
  }
  if (!value.is_array()) {
    return where.error("expected an input count or an array of 0/1 flags, got {}", describe(value));
  }
  arg.count = 0;
  for (size_t i = 0; i < value.size(); ++i) {
    std::optional<int64_t> flag = as_int64(value[i]);
    if (!flag || (*flag != 0 && *flag != 1)) {
      return where.at(fmt::format("[{}]", i)).error("expected 0 (None) or 1 (a tensor), got {}",
                                                    describe(value[i]));
    }
    arg.present.push_back(static_cast<uint8_t>(*flag));
    arg.count += static_cast<int32_t>(*flag);
  }
  return arg;
}

// Whether `arg` may bind a schema argument of this kind.
bool fits(const TensorArg& arg, AtenArgKind kind) {
  switch (kind) {
    case AtenArgKind::kTensor: return arg.present.empty() && arg.count == 1;
    case AtenArgKind::kOptionalTensor: return arg.present.empty() && arg.count <= 1;
    case AtenArgKind::kTensorList: return arg.present.empty();
    case AtenArgKind::kOptionalTensorList: return true;
    default: return false;
  }
}

}  // namespace

Expected<std::vector<TensorArg>> read_arg_inputs(const Json* value, size_t num_inputs,
                                                 const Where& where) {
  std::vector<TensorArg> args;
  if (value == nullptr) return args;
  if (!value->is_array()) return where.error("expected an array, got {}", describe(*value));
  size_t total = 0;
  for (size_t i = 0; i < value->size(); ++i) {
    Expected<TensorArg> arg = read_tensor_arg((*value)[i], where.at(fmt::format("[{}]", i)));
    if (!arg) return arg.error();
    total += static_cast<size_t>(arg->count);
    args.push_back(std::move(*arg));
  }
  if (total != num_inputs) {
    return where.error("binds {} inputs, but the node has {}", total, num_inputs);
  }
  return args;
}

Status check_generic_inputs(const AtenSchema& schema, const std::vector<TensorArg>& args,
                            size_t num_inputs, const Where& where) {
  std::vector<const AtenArg*> tensors;
  for (const AtenArg& a : schema.args) {
    if (a.is_tensor()) tensors.push_back(&a);
  }
  if (args.empty()) {
    if (tensors.size() != num_inputs) {
      return where.error("{} takes {} tensor arguments, got {} inputs (an optional tensor left out "
                         "or a tensor list needs \"arg_inputs\"; schema: {})", schema.name,
                         tensors.size(), num_inputs, schema.text);
    }
    return ok_status();
  }
  if (args.size() != tensors.size()) {
    return where.error("\"arg_inputs\" has {} entries, but {} has {} tensor arguments (schema: {})",
                       args.size(), schema.name, tensors.size(), schema.text);
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (!fits(args[i], tensors[i]->kind)) {
      return where.error("\"arg_inputs\"[{}] cannot bind argument '{}' of type {} (schema: {})", i,
                         tensors[i]->name, tensors[i]->type, schema.text);
    }
  }
  return ok_status();
}

Expected<Attrs> read_generic_attrs(const Json* value, const AtenSchema& schema, const Where& where) {
  if (value != nullptr && !value->is_object()) {
    return where.error("expected an object, got {}", describe(*value));
  }
  Attrs attrs;
  for (const AtenArg& arg : schema.args) {
    if (arg.is_tensor()) continue;
    const Json* v = value == nullptr ? nullptr : field(*value, arg.name.c_str());
    if (v == nullptr) {
      if (arg.may_omit()) continue;
      return where.error("{} needs attribute '{}' ({}; schema: {})", schema.name, arg.name,
                         arg.type, schema.text);
    }
    Where at = where.at("." + arg.name);
    if (arg.kind == AtenArgKind::kUnsupported) {
      return at.error("{} argument '{}' of type {} cannot be given in a graph file; leave it out "
                      "(its default is used)", schema.name, arg.name, arg.type);
    }
    Expected<AttrValue> attr = read_attr_value(*v, arg.attr_type, at);
    if (!attr) return attr.error();
    attrs.set(arg.name, std::move(*attr));
  }
  if (value != nullptr) {
    for (const auto& [key, v] : value->items()) {
      // An init-capture: clang 14 (the fuzz build) cannot capture a structured binding.
      auto it = std::find_if(schema.args.begin(), schema.args.end(), [&name = key](const AtenArg& a) {
        return a.name == name && !a.is_tensor();
      });
      if (it == schema.args.end()) {
        return where.at("." + key).error("{} has no attribute '{}' (schema: {})", schema.name, key,
                                         schema.text);
      }
    }
  }
  return attrs;
}

Status check_generic_schema(const AtenSchema& schema, const Where& where) {
  if (schema.mutates()) {
    return where.error("{} writes one of its arguments in place, and autopar graphs are "
                       "functional; export the model with python/autopar_export.py, which "
                       "functionalizes the step (schema: {})", schema.name, schema.text);
  }
  if (schema.returns_non_tensor) {
    return where.error("{} returns a value that is not a tensor; autopar graph nodes produce "
                       "tensors only (schema: {})", schema.name, schema.text);
  }
  return ok_status();
}

Status check_generic_outputs(const AtenSchema& schema, size_t count, const Where& where) {
  if (schema.returns_list || static_cast<size_t>(schema.num_returns) == count) return ok_status();
  return where.error("{} returns {} tensors, the node declares {} outputs (schema: {})",
                     schema.name, schema.num_returns, count, schema.text);
}

}  // namespace autopar::graph_json
