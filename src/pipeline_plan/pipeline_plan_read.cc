// The plan JSON's pipeline section read back (docs/plan-format.md).
#include <regex>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "pipeline_plan/pipeline_plan.h"

namespace autopar {
namespace {

using Json = nlohmann::json;

Expected<const Json*> field(const Json& j, const char* name, bool (Json::*is)() const noexcept, const char* type) {
  if (!j.contains(name)) return make_error("the pipeline section has no \"{}\"", name);
  const Json& v = j[name];
  if (!(v.*is)()) return make_error("the pipeline section's \"{}\" must be {}", name, type);
  return &v;
}

Expected<std::vector<int64_t>> dims(const Json& j, const char* name) {
  Expected<const Json*> v = field(j, name, &Json::is_array, "a list of sizes");
  if (!v) return v.error();
  std::vector<int64_t> out;
  for (const Json& d : **v) {
    if (!d.is_number_integer() || d.get<int64_t>() < 1) return make_error("the pipeline section's \"{}\" has a bad size", name);
    out.push_back(d.get<int64_t>());
  }
  return out;
}

Expected<int32_t> count(const Json& j, const char* name) {
  Expected<const Json*> v = field(j, name, &Json::is_number_integer, "a whole number");
  if (!v) return v.error();
  return (*v)->get<int32_t>();
}

}  // namespace

Expected<std::optional<DegreeLayout>> parse_degree_layout(const std::string& name, const std::vector<int64_t>& mesh) {
  static const std::regex pattern(R"(^(?:pp(\d{1,6}))?-?(?:(fsdp|ddp)(\d{1,6}))?-?(?:tp(\d{1,6}))?$)");
  std::smatch m;
  if (name.empty() || !std::regex_match(name, m, pattern) || (!m[1].matched && !m[2].matched && !m[4].matched) ||
      (!m[1].matched && !m[3].matched && !m[4].matched)) {
    return std::optional<DegreeLayout>{};
  }
  const int64_t pp = m[1].matched ? std::stoll(m[1].str()) : 1;
  const std::string data = m[2].matched ? m[2].str() : "";
  const bool tensor = m[4].matched;
  if (!tensor && data.empty()) {
    return make_error("--baseline {}: give the stage groups' layout too (for example {}-fsdp{})", name, name,
                      mesh.empty() ? 1 : mesh.back());
  }
  Expected<std::vector<int64_t>> sub = pipeline_sub_mesh(mesh, static_cast<int32_t>(pp));
  if (!sub) return make_error_like(sub.error(), "--baseline {}: {}", name, sub.error().message);
  // tp on the last dim of the stage groups' mesh, data parallelism on the others.
  const int64_t tp_size = tensor ? sub->back() : 1;
  int64_t data_size = 1;
  for (size_t d = 0; d + (tensor ? 1 : 0) < sub->size(); ++d) data_size *= (*sub)[d];
  const int64_t tp = tensor ? std::stoll(m[4].str()) : 1;
  const int64_t dp = data.empty() ? 1 : std::stoll(m[3].str());
  if (tp != tp_size || dp != data_size) {
    std::vector<std::string> parts;
    if (pp > 1) parts.push_back(fmt::format("pp{}", pp));
    if (data_size > 1 || !tensor) parts.push_back(fmt::format("{}{}", data.empty() ? "fsdp" : data, data_size));
    if (tensor) parts.push_back(fmt::format("tp{}", tp_size));
    return make_error("--baseline {} does not fit mesh {}: {}the stage groups' mesh is {}, tp takes its last dim and "
                      "data parallelism the others, so the layout here is {}",
                      name, fmt::join(mesh, "x"), pp > 1 ? fmt::format("pp{} runs along dim 0, ", pp) : "",
                      fmt::join(*sub, "x"), fmt::join(parts, "-"));
  }
  DegreeLayout layout;
  layout.pipeline = static_cast<int32_t>(pp);
  if (tensor) {
    layout.stage_baseline = data == "fsdp" ? "fsdp-tp" : "tp";  // tp: data parallel (ddp) on the other dims
  } else {
    layout.stage_baseline = data;
  }
  return std::optional<DegreeLayout>{layout};
}

Expected<std::optional<PipelineSection>> read_pipeline_section(const std::string& json_text) {
  Json doc = Json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return make_error("not a JSON object");
  if (!doc.contains("pipeline")) return std::optional<PipelineSection>{};
  const Json& p = doc["pipeline"];
  if (!p.is_object()) return make_error("\"pipeline\" must be an object");
  PipelineSection section;
  Expected<int32_t> degree = count(p, "degree");
  if (!degree) return degree.error();
  Expected<int32_t> microbatches = count(p, "microbatches");
  if (!microbatches) return microbatches.error();
  Expected<int32_t> per_rank = count(p, "stages_per_rank");
  if (!per_rank) return per_rank.error();
  Expected<std::vector<int64_t>> mesh = dims(p, "mesh");
  if (!mesh) return mesh.error();
  Expected<std::vector<int64_t>> sub_mesh = dims(p, "sub_mesh");
  if (!sub_mesh) return sub_mesh.error();
  Expected<const Json*> schedule = field(p, "schedule", &Json::is_string, "text");
  if (!schedule) return schedule.error();
  Expected<const Json*> stages = field(p, "stages", &Json::is_array, "a list");
  if (!stages) return stages.error();
  Expected<pipeline::ScheduleKind> kind = pipeline::parse_schedule_kind((*schedule)->get<std::string>());
  if (!kind) return make_error_like(kind.error(), "the pipeline section's schedule: {}", kind.error().message);
  section.options.degree = *degree;
  section.options.microbatches = *microbatches;
  section.options.stages_per_rank = *per_rank;
  section.options.schedule = *kind;
  section.mesh = std::move(*mesh);
  section.sub_mesh = std::move(*sub_mesh);
  for (const Json& stage : **stages) {
    if (!stage.is_object() || !stage.contains("units") || !stage["units"].is_array()) {
      return make_error("every stage of the pipeline section needs its \"units\"");
    }
    std::vector<std::string> units;
    for (const Json& u : stage["units"]) {
      if (!u.is_string()) return make_error("a stage's units must be names");
      units.push_back(u.get<std::string>());
    }
    section.options.stage_units.push_back(std::move(units));
  }
  if (p.contains("recompute")) {
    if (p["recompute"] != "full" && p["recompute"] != "none") {
      return make_error("the pipeline section's \"recompute\" must be \"full\" or \"none\"");
    }
    section.options.recompute_layers = p["recompute"] == "full";
  }
  if (p.contains("stage_groups") && p["stage_groups"].is_string() && p["stage_groups"] != "solved") {
    section.options.baseline = p["stage_groups"].get<std::string>();
  }
  return std::optional<PipelineSection>{std::move(section)};
}

}  // namespace autopar
