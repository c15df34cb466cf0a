// The plan JSON's pipeline section read back (docs/plan-format.md).
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
  if (!kind) return make_error("the pipeline section's schedule: {}", kind.error().message);
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
  if (p.contains("stage_groups") && p["stage_groups"].is_string() && p["stage_groups"] != "solved") {
    section.options.baseline = p["stage_groups"].get<std::string>();
  }
  return std::optional<PipelineSection>{std::move(section)};
}

}  // namespace autopar
