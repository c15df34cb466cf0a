// The index of the values the PyTorch exporter writes (python/autopar_export.py
// --with-values DIR, read by `autopar run --check-against-torch DIR`):
//   DIR/index.json: {"format": "autopar.values", "version": 1, "tensors": [
//     {"role": "param"|"input"|"loss"|"grad"|"buffer", "name": "fc.weight",
//      "file": "0_param_fc_weight.bin", "shape": [16, 8], "dtype": "f32"}, ...]}
//
// Parsing the index is kept apart from reading the tensors
// (runtime/torch_values.h), and here in ir rather than with them, because it
// needs no libtorch: every check on the text (types, dtypes, roles, sizes)
// happens here, the fuzz build (fuzz/values_index_fuzz.cc) fuzzes it without
// compiling libtorch, and the runtime only reads files of known sizes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/dtype.h"
#include "ir/expected.h"
#include "ir/tensor_meta.h"

namespace autopar {

struct ValuesIndexEntry {
  std::string role;  // "param", "input", "loss", "grad" or "buffer"
  std::string name;  // module parameter, input or buffer name
  std::string file;  // relative to DIR
  Shape shape;
  DType dtype = DType::f32;
  int64_t bytes = 0;  // the file's expected size: elements * dtype size
};

struct ValuesIndex {
  std::vector<ValuesIndexEntry> entries;  // in file order
};

// `dir` names the folder in messages ("DIR/index.json: ..."). Missing fields
// read as before this check existed (an empty name, file or role, a scalar
// shape); a field of the wrong type, a negative dim, a size beyond int64, an
// unknown dtype or role is an error naming the tensor and the field.
Expected<ValuesIndex> parse_values_index(std::string_view json_text, std::string_view dir);

}  // namespace autopar
