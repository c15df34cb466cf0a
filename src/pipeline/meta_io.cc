// Metadata messages between ranks, user-given stage shapes, and the check of
// given against inferred shapes.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "pipeline/stage_meta.h"

namespace autopar::pipeline {
namespace {

using nlohmann::json;

json meta_json(const TensorMeta& meta) {
  return json{{"dtype", std::string(dtype_name(meta.dtype))},
              {"shape", meta.shape},
              {"strides", meta.strides()}};
}

std::vector<int64_t> int_list(const json& j) {
  std::vector<int64_t> out;
  for (const json& x : j) out.push_back(x.get<int64_t>());
  return out;
}

bool is_int_list(const json& j) {
  if (!j.is_array()) return false;
  for (const json& x : j) {
    if (!x.is_number_integer()) return false;
  }
  return true;
}

// {"dtype": .., "shape": [..], "strides": [..]?}; `where` prefixes errors.
Expected<GivenMeta> read_meta(const json& j, const std::string& where) {
  if (!j.is_object() || !j.contains("dtype") || !j["dtype"].is_string() || !j.contains("shape") ||
      !is_int_list(j["shape"])) {
    return make_error(
        "{}: expected {{\"dtype\": NAME, \"shape\": [..], \"strides\": [..] "
        "(optional)}}, got {}",
        where, j.dump().substr(0, 80));
  }
  std::optional<DType> dtype = parse_dtype(j["dtype"].get<std::string>());
  if (!dtype) return make_error("{}: unknown dtype \"{}\"", where, j["dtype"].get<std::string>());
  GivenMeta given{TensorMeta{int_list(j["shape"]), *dtype}, {}};
  if (!checked_bytes(given.meta)) {
    return make_error("{}: shape {} must have sizes >= 0 and fit int64 in bytes", where,
                      shape_to_string(given.meta.shape));
  }
  if (j.contains("strides")) {
    if (!is_int_list(j["strides"]))
      return make_error("{}: strides must be a list of integers", where);
    given.strides = int_list(j["strides"]);
  } else {
    given.strides = given.meta.strides();
  }
  return given;
}

Expected<std::vector<GivenMeta>> read_metas(const json& j, const std::string& where) {
  if (!j.is_array()) return make_error("{}: expected a list of tensor metas", where);
  std::vector<GivenMeta> out;
  for (size_t i = 0; i < j.size(); ++i) {
    Expected<GivenMeta> m = read_meta(j[i], fmt::format("{} {}", where, i));
    if (!m) return m.error();
    out.push_back(std::move(*m));
  }
  return out;
}

Status compare(StageIdx stage, std::string_view side, const std::vector<GivenMeta>& given,
               const std::vector<TensorMeta>& inferred) {
  if (given.size() != inferred.size()) {
    return make_error("stage {} {}s: {} given, {} inferred", stage, side, given.size(),
                      inferred.size());
  }
  for (size_t i = 0; i < given.size(); ++i) {
    const TensorMeta& g = given[i].meta;
    const TensorMeta& m = inferred[i];
    if (g.shape != m.shape) {
      return make_error("stage {} {} {}: shape {} given, {} inferred", stage, side, i,
                        shape_to_string(g.shape), shape_to_string(m.shape));
    }
    if (g.dtype != m.dtype) {
      return make_error("stage {} {} {}: dtype {} given, {} inferred", stage, side, i,
                        dtype_name(g.dtype), dtype_name(m.dtype));
    }
    if (given[i].strides != m.strides()) {
      return make_error("stage {} {} {}: strides {} given, {} inferred (contiguous)", stage, side,
                        i, shape_to_string(given[i].strides), shape_to_string(m.strides()));
    }
  }
  return ok_status();
}

}  // namespace

std::string encode_metas(const MetaMessage& message) {
  json metas = json::array();
  for (size_t i = 0; i < message.metas.size(); ++i) {
    json m = meta_json(message.metas[i]);
    if (i < message.layouts.size()) {
      m["placement"] = message.layouts[i].placement;
      m["local_shape"] = message.layouts[i].local_shape;
    }
    metas.push_back(std::move(m));
  }
  return json{{"from", message.from}, {"to", message.to}, {"metas", metas}}.dump();
}

Expected<MetaMessage> decode_metas(std::string_view bytes) {
  json j = json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("from") || !j["from"].is_number_integer() ||
      !j.contains("to") || !j["to"].is_number_integer() || !j.contains("metas")) {
    return make_error(
        "bad metadata message: expected {{\"from\":S,\"to\":S,\"metas\":[..]}}, "
        "got {}",
        bytes.substr(0, 80));
  }
  MetaMessage message{j["from"].get<StageIdx>(), j["to"].get<StageIdx>(), {}, {}};
  Expected<std::vector<GivenMeta>> metas =
      read_metas(j["metas"], fmt::format("metadata message {}->{} meta", message.from, message.to));
  if (!metas) return metas.error();
  for (size_t i = 0; i < metas->size(); ++i) {
    const GivenMeta& g = (*metas)[i];
    if (g.strides != g.meta.strides()) {
      return make_error("metadata message {}->{} meta {}: strides {} are not contiguous for {}",
                        message.from, message.to, i, shape_to_string(g.strides), to_string(g.meta));
    }
    message.metas.push_back(g.meta);
    const json& entry = j["metas"][i];
    if (entry.contains("placement") != entry.contains("local_shape")) {
      return make_error("metadata message {}->{} meta {}: placement and local_shape come together",
                        message.from, message.to, i);
    }
    if (!entry.contains("placement")) continue;
    if (!entry["placement"].is_string() || !entry["local_shape"].is_array()) {
      return make_error("metadata message {}->{} meta {}: placement must be text and local_shape a list",
                        message.from, message.to, i);
    }
    BoundaryLayout layout{entry["placement"].get<std::string>(), {}};
    for (const json& d : entry["local_shape"]) {
      if (!d.is_number_integer()) return make_error("metadata message {}->{} meta {}: bad local_shape", message.from, message.to, i);
      layout.local_shape.push_back(d.get<int64_t>());
    }
    message.layouts.push_back(std::move(layout));
  }
  if (!message.layouts.empty() && message.layouts.size() != message.metas.size()) {
    return make_error("metadata message {}->{}: {} of {} metas carry a placement", message.from, message.to,
                      message.layouts.size(), message.metas.size());
  }
  return message;
}

Expected<std::vector<GivenStageShapes>> parse_stage_shapes(std::string_view json_text) {
  json j = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("stages") || !j["stages"].is_array()) {
    return make_error(
        "stage shapes: expected {{\"stages\": [{{\"stage\": S, \"inputs\": [..], "
        "\"outputs\": [..]}}, ..]}}");
  }
  std::vector<GivenStageShapes> out;
  for (const json& s : j["stages"]) {
    if (!s.is_object() || !s.contains("stage") || !s["stage"].is_number_integer()) {
      return make_error("stage shapes: each entry needs an integer \"stage\", got {}",
                        s.dump().substr(0, 80));
    }
    GivenStageShapes given{s["stage"].get<StageIdx>(), {}, {}};
    for (const char* side : {"inputs", "outputs"}) {
      if (!s.contains(side)) continue;
      Expected<std::vector<GivenMeta>> metas =
          read_metas(s[side], fmt::format("stage shapes: stage {} {}", given.stage, side));
      if (!metas) return metas.error();
      (std::string_view(side) == "inputs" ? given.inputs : given.outputs) = std::move(*metas);
    }
    out.push_back(std::move(given));
  }
  return out;
}

Status check_stage_shapes(const std::vector<StageMeta>& inferred,
                          const std::vector<GivenStageShapes>& given) {
  for (const GivenStageShapes& g : given) {
    if (g.stage < 0 || g.stage >= static_cast<StageIdx>(inferred.size())) {
      return make_error("stage shapes name stage {}, but the pipeline has stages 0..{}", g.stage,
                        inferred.size() - 1);
    }
    const StageMeta& m = inferred[static_cast<size_t>(g.stage)];
    if (g.inputs) {
      if (Status ok = compare(g.stage, "input", *g.inputs, m.inputs); !ok) return ok;
    }
    if (g.outputs) {
      if (Status ok = compare(g.stage, "output", *g.outputs, m.outputs); !ok) return ok;
    }
  }
  return ok_status();
}

}  // namespace autopar::pipeline
