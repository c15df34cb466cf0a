// Helpers shared by the JSON writer (json_io.cc), reader (json_reader.cc) and
// value readers (json_values.cc); not part of the public API.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ir/aten_schema.h"
#include "ir/expected.h"
#include "ir/graph.h"

namespace autopar::graph_json {

using Json = nlohmann::ordered_json;

inline constexpr std::string_view kGraphFormatName = "autopar.graph";
inline constexpr int kGraphFormatVersion = 1;

// Op names close to an unknown one ("aten.mm" -> aten.mm.default,
// aten.bmm.default), closest first, at most max_count.
std::vector<std::string_view> similar_op_names(std::string_view name, size_t max_count);

// Where an error is: a JSON path ("nodes[3].attrs.dim") and, once known, the
// node's name. Messages read "nodes[3].attrs.dim (node 'sum'): <problem>".
struct Where {
  std::string path;
  std::string node;

  Where at(std::string_view suffix) const { return {path + std::string(suffix), node}; }
  template <typename... Args>
  Error error(fmt::format_string<Args...> format, Args&&... args) const {
    std::string prefix = node.empty() ? path : fmt::format("{} (node '{}')", path, node);
    return Error{prefix + ": " + fmt::format(format, std::forward<Args>(args)...)};
  }
};

// Value readers (json_values.cc). None throws; errors are prefixed with `where`.

// "number 5", "string \"f33\"", "array [1,2]": type and a short preview.
std::string describe(const Json& value);
// An integer that fits int64 (unsigned values above INT64_MAX do not).
std::optional<int64_t> as_int64(const Json& value);
// The member named key, or nullptr.
const Json* field(const Json& object, const char* key);
// Fails on the first member whose name is not in `known`.
Status check_keys(const Json& object, const Where& where, std::span<const std::string_view> known);
Expected<const Json*> require(const Json& object, const char* key, const Where& where);
Expected<std::string> read_string(const Json& value, const Where& where);
Expected<DType> read_dtype(const Json& value, const Where& where);
Expected<TensorMeta> read_meta(const Json& value, const Where& where);
// value may be null (no "attrs" field). Checks names, types and required
// attributes against the op's schema; the result is in schema order.
Expected<Attrs> read_attrs(const Json* value, const OpDef& def, const Where& where);
// One attribute value, converted by the type its schema declares.
Expected<AttrValue> read_attr_value(const Json& value, AttrType type, const Where& where);
// A placeholder's "value": base64 of exactly meta.bytes() raw bytes.
Expected<std::shared_ptr<const TensorBytes>> read_tensor_value(const Json& value,
                                                               const TensorMeta& meta,
                                                               const Where& where);

// Generic aten ops (json_generic.cc).
// "arg_inputs" (value may be null: absent); the counts must add up to num_inputs.
Expected<std::vector<TensorArg>> read_arg_inputs(const Json* value, size_t num_inputs,
                                                 const Where& where);
// The schema is usable in a graph: no argument written in place, tensor returns only.
Status check_generic_schema(const AtenSchema& schema, const Where& where);
// Inputs bind to the schema's tensor arguments (args empty: one each).
Status check_generic_inputs(const AtenSchema& schema, const std::vector<TensorArg>& args,
                            size_t num_inputs, const Where& where);
// Attributes by the schema's non-tensor arguments; the result is in schema order.
Expected<Attrs> read_generic_attrs(const Json* value, const AtenSchema& schema, const Where& where);
Status check_generic_outputs(const AtenSchema& schema, size_t count, const Where& where);

}  // namespace autopar::graph_json
