// The aten operators libtorch has, with their schemas, for ops the op table
// does not list (OpId::kGeneric, op_def.h).
//
// The list is generated at build time from the libtorch the runtime links
// (tools/aten_schemas), so "libtorch has this op" is decided here without
// linking libtorch into the planner. A schema is parsed just enough to bind a
// graph node to it: which arguments are tensors (and how many inputs each
// takes), which are attributes and of what type, and how many outputs it has.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/attr.h"
#include "ir/expected.h"

namespace autopar {

enum class AtenArgKind : uint8_t {
  kTensor,              // Tensor: one input
  kOptionalTensor,      // Tensor?: zero or one input
  kTensorList,          // Tensor[]: any number of inputs
  kOptionalTensorList,  // Tensor?[]: one entry per element, each a tensor or None
  kAttr,                // a value autopar stores as an attribute (type in attr_type)
  kUnsupported,         // Layout, Device, Generator, ...: must be left out (default / None)
};

struct AtenArg {
  std::string name;
  std::string type;  // as the schema spells it, without alias annotations: "int[2]", "float?"
  AtenArgKind kind = AtenArgKind::kAttr;
  AttrType attr_type = AttrType::kInt;  // kAttr only
  bool optional = false;                // "T?": may be None
  bool has_default = false;
  bool keyword_only = false;  // after "*"
  bool mutated = false;       // an alias annotation with '!': the op writes this argument

  bool is_tensor() const { return kind != AtenArgKind::kAttr && kind != AtenArgKind::kUnsupported; }
  // An argument that a graph node may leave out.
  bool may_omit() const { return optional || has_default; }
};

struct AtenSchema {
  std::string name;  // autopar's spelling: "aten.triu.default", "aten.add.Tensor"
  std::string text;  // the schema as libtorch prints it
  std::vector<AtenArg> args;
  int num_returns = 0;         // tensors returned (when !returns_list)
  bool returns_list = false;   // returns one Tensor[] (any number of outputs)
  bool returns_non_tensor = false;  // some return is not a tensor (int, float, ...)

  bool mutates() const;
  int num_tensor_args() const;
};

// Parses one schema as libtorch prints it ("aten::triu(Tensor self, int
// diagonal=0) -> Tensor").
Expected<AtenSchema> parse_aten_schema(std::string_view text);

// The schema of an aten op by autopar's name ("aten.triu.default"), or null
// when the linked libtorch has no such op.
const AtenSchema* find_aten_schema(std::string_view name);

// Number of aten schemas known (for tests and --version style reports).
size_t aten_schema_count();

}  // namespace autopar
