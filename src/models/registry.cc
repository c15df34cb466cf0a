#include "models/registry.h"

#include <algorithm>
#include <array>

#include "models/llama3.h"
#include "models/mlp.h"

namespace autopar {
namespace {

constexpr std::array<std::string_view, 5> kModelNames = {"llama3-405b", "llama3-70b", "llama3-8b",
                                                         "llama3-debugmodel", "mlp"};
static_assert(std::is_sorted(kModelNames.begin(), kModelNames.end()));

Status check_positive(std::string_view option, const std::optional<int64_t>& value,
                      std::string_view model) {
  if (value && *value <= 0) {
    return make_error("invalid {} {} for model {}: must be a positive integer", option, *value,
                      model);
  }
  return ok_status();
}

Status check_options(const ModelOptions& o) {
  if (Status s = check_positive("--batch", o.batch, o.name); !s) return s;
  if (Status s = check_positive("--seq", o.seq, o.name); !s) return s;
  if (Status s = check_positive("--layers", o.layers, o.name); !s) return s;
  if (o.dtype && *o.dtype != DType::f32 && *o.dtype != DType::bf16 && *o.dtype != DType::f16) {
    return make_error("invalid --dtype {} for model {}: use f32, bf16 or f16", dtype_name(*o.dtype),
                      o.name);
  }
  return ok_status();
}

Expected<Graph> build_mlp_model(const ModelOptions& o) {
  if (o.seq) {
    return make_error("invalid --seq {} for model mlp: its samples have no sequence dimension",
                      *o.seq);
  }
  MlpConfig config;
  config.batch = o.batch.value_or(config.batch);
  config.hidden_layers = o.layers.value_or(config.hidden_layers);
  config.dtype = o.dtype.value_or(config.dtype);
  return build_mlp(config);
}

Expected<Graph> build_llama3_model(Llama3Config config, const ModelOptions& o) {
  config.batch = o.batch.value_or(config.batch);
  config.seq = o.seq.value_or(config.seq);
  config.n_layers = o.layers.value_or(config.n_layers);
  config.dtype = o.dtype.value_or(config.dtype);
  return build_llama3(config);
}

}  // namespace

std::vector<std::string> model_names() { return {kModelNames.begin(), kModelNames.end()}; }

Expected<Graph> build_model(const ModelOptions& options) {
  if (std::find(kModelNames.begin(), kModelNames.end(), options.name) == kModelNames.end()) {
    std::string known;
    for (std::string_view name : kModelNames)
      known += (known.empty() ? "" : ", ") + std::string(name);
    return make_error("unknown model '{}'; known models: {}", options.name, known);
  }
  if (Status s = check_options(options); !s) return s.error();
  if (options.name == "mlp") return build_mlp_model(options);
  return build_llama3_model(*llama3_config(options.name), options);
}

}  // namespace autopar
