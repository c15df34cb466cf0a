// Hardware profile JSON: parsing with field-named errors, writing, and lookup of
// built-in profiles (embedded at build time) or files.
#include "cost/hardware.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cost/builtin_profiles.h"

namespace autopar {
namespace {

using nlohmann::json;

// Keys a profile may carry besides the figures: free text and calibration data
// that the cost model does not read.
constexpr std::string_view kTopLevelKeys[] = {
    "cache_bytes",   "calibration",  "compute_efficiency", "devices_per_node", "inter_node",
    "intra_node",    "memory_bandwidth_bytes_per_s",       "memory_bytes",     "memory_efficiency",
    "min_op_time_s", "name",         "node_overhead_s",    "notes",            "op_times",
    "op_times_warm", "optimizer_update", "peak_flops",     "source"};
constexpr std::string_view kLinkKeys[] = {"algorithms", "bandwidth_bytes_per_s", "collectives",
                                          "latency_s"};
// A link's "collectives", by comm_cost.h's Collective order.
constexpr std::string_view kMeasuredCollectiveNames[] = {"all_gather", "reduce_scatter", "all_reduce",
                                                         "all_to_all"};
static_assert(std::size(kMeasuredCollectiveNames) == kMeasuredCollectiveCount);
constexpr std::string_view kRingKeys[] = {"bandwidth_bytes_per_s", "latency_s"};
constexpr std::string_view kOptimizerNames[] = {"adamw", "sgd"};
constexpr std::string_view kUpdateKeys[] = {"per_element_s", "per_tensor_s"};
constexpr std::string_view kAlgorithmKeys[] = {"algorithm", "bandwidth_bytes_per_s", "latency_s",
                                               "protocol"};
constexpr std::string_view kAlgorithmNames[] = {"ring", "tree", "nvls"};  // by CollAlgorithm
constexpr std::string_view kProtocolNames[] = {"ll", "simple"};           // by CollProtocol
static_assert(std::size(kAlgorithmNames) == kCollAlgorithmCount);

template <size_t N>
Status check_keys(const json& object, std::string_view where, const std::string_view (&known)[N]) {
  for (const auto& [key, value] : object.items()) {
    if (std::find(std::begin(known), std::end(known), key) == std::end(known)) {
      return make_error("hardware profile field '{}{}' is not known (known: {})", where, key,
                        fmt::join(known, ", "));
    }
  }
  return ok_status();
}

// A number >= min (strictly > when positive is set) stored at object[key].
Expected<double> get_number(const json& object, std::string_view where, const std::string& key,
                            bool positive, std::optional<double> fallback = std::nullopt) {
  std::string field = fmt::format("{}{}", where, key);
  auto it = object.find(key);
  if (it == object.end()) {
    if (fallback) return *fallback;
    return make_error("hardware profile field '{}' is missing", field);
  }
  if (!it->is_number()) {
    return make_error("hardware profile field '{}' must be a number, got {}", field, it->dump());
  }
  double value = it->get<double>();
  if (value < 0 || (positive && value == 0)) {
    return make_error("hardware profile field '{}' must be {}, got {}", field,
                      positive ? "positive" : "non-negative", value);
  }
  return value;
}

// Index of object[key] in names, or an error listing the names.
template <size_t N>
Expected<size_t> get_name(const json& object, const std::string& where, const char* key,
                          const std::string_view (&names)[N]) {
  auto it = object.find(key);
  if (it == object.end()) return make_error("hardware profile field '{}{}' is missing", where, key);
  for (size_t i = 0; i < N; ++i) {
    if (it->is_string() && it->get<std::string>() == names[i]) return i;
  }
  return make_error("hardware profile field '{}{}' must be one of {}, got {}", where, key,
                    fmt::join(names, ", "), it->dump());
}

Expected<AlgorithmSpec> parse_algorithm(const json& entry, const std::string& where) {
  if (!entry.is_object()) {
    return make_error("hardware profile field '{}' must be an object, got {}", where, entry.dump());
  }
  std::string prefix = where + ".";
  if (Status s = check_keys(entry, prefix, kAlgorithmKeys); !s) return s.error();
  Expected<size_t> algorithm = get_name(entry, prefix, "algorithm", kAlgorithmNames);
  if (!algorithm) return algorithm.error();
  Expected<size_t> protocol = get_name(entry, prefix, "protocol", kProtocolNames);
  if (!protocol) return protocol.error();
  Expected<double> bandwidth = get_number(entry, prefix, "bandwidth_bytes_per_s", /*positive=*/true);
  if (!bandwidth) return bandwidth.error();
  Expected<double> latency = get_number(entry, prefix, "latency_s", /*positive=*/false);
  if (!latency) return latency.error();
  return AlgorithmSpec{static_cast<CollAlgorithm>(*algorithm), static_cast<CollProtocol>(*protocol),
                       *latency, *bandwidth};
}

// A link's "algorithms": each (algorithm, protocol) once, a ring among them
// (every collective can run as a ring), NVLS only inside a node.
Status parse_algorithms(const json& link, const std::string& key, LinkSpec& out) {
  auto it = link.find("algorithms");
  if (it == link.end()) return ok_status();
  std::string where = key + ".algorithms";
  if (!it->is_array() || it->empty()) {
    return make_error("hardware profile field '{}' must be a non-empty array, got {}", where,
                      it->dump());
  }
  for (size_t i = 0; i < it->size(); ++i) {
    std::string at = fmt::format("{}[{}]", where, i);
    Expected<AlgorithmSpec> spec = parse_algorithm((*it)[i], at);
    if (!spec) return spec.error();
    for (const AlgorithmSpec& seen : out.algorithms) {
      if (seen.algorithm == spec->algorithm && seen.protocol == spec->protocol) {
        return make_error("hardware profile field '{}' repeats {}/{}", at,
                          coll_algorithm_name(spec->algorithm), coll_protocol_name(spec->protocol));
      }
    }
    if (spec->algorithm == CollAlgorithm::kNvls && key != "intra_node") {
      return make_error("hardware profile field '{}': nvls runs on NVLink switches, so only "
                        "intra_node may list it", at);
    }
    out.algorithms.push_back(*spec);
  }
  bool has_ring = std::any_of(out.algorithms.begin(), out.algorithms.end(), [](const AlgorithmSpec& a) {
    return a.algorithm == CollAlgorithm::kRing;
  });
  if (!has_ring) {
    return make_error("hardware profile field '{}' needs a ring entry (all-gather, reduce-scatter "
                      "and all-to-all run only as rings)", where);
  }
  return ok_status();
}

Status require_object(const json& value, const std::string& where) {
  if (value.is_object()) return ok_status();
  return make_error("hardware profile field '{}' must be an object, got {}", where, value.dump());
}

// A link's "collectives": {"all_gather": {"latency_s", "bandwidth_bytes_per_s"}, ...}.
Status parse_measured(const json& link, const std::string& key, LinkSpec& out) {
  auto it = link.find("collectives");
  if (it == link.end()) return ok_status();
  std::string where = key + ".collectives";
  if (Status s = require_object(*it, where); !s) return s;
  if (Status s = check_keys(*it, where + ".", kMeasuredCollectiveNames); !s) return s;
  for (size_t c = 0; c < std::size(kMeasuredCollectiveNames); ++c) {
    auto entry = it->find(std::string(kMeasuredCollectiveNames[c]));
    if (entry == it->end()) continue;
    std::string at = fmt::format("{}.{}", where, kMeasuredCollectiveNames[c]);
    if (Status s = require_object(*entry, at); !s) return s;
    if (Status s = check_keys(*entry, at + ".", kRingKeys); !s) return s;
    Expected<double> bandwidth = get_number(*entry, at + ".", "bandwidth_bytes_per_s", /*positive=*/true);
    if (!bandwidth) return bandwidth.error();
    Expected<double> latency = get_number(*entry, at + ".", "latency_s", /*positive=*/false);
    if (!latency) return latency.error();
    out.measured[c] = RingFigures{*latency, *bandwidth};
  }
  return ok_status();
}

// "op_times" and "op_times_warm": {op_call_key: seconds}.
Status parse_op_table(const json& root, const char* field, std::unordered_map<std::string, double>& table) {
  auto it = root.find(field);
  if (it == root.end()) return ok_status();
  if (Status s = require_object(*it, field); !s) return s;
  for (const auto& [key, value] : it->items()) {
    if (!value.is_number() || value.get<double>() < 0) {
      return make_error("hardware profile field '{}.{}' must be a non-negative number of seconds, got {}",
                        field, key, value.dump());
    }
    table.emplace(key, value.get<double>());
  }
  return ok_status();
}

Status parse_op_times(const json& root, HardwareProfile& p) {
  if (Status s = parse_op_table(root, "op_times", p.op_times); !s) return s;
  if (Status s = parse_op_table(root, "op_times_warm", p.op_times_warm); !s) return s;
  if (auto it = root.find("cache_bytes"); it != root.end()) {
    if (!it->is_number() || it->get<double>() < 0) {
      return make_error("hardware profile field 'cache_bytes' must be a non-negative number of bytes");
    }
    p.cache_bytes = it->get<double>();
  }
  return ok_status();
}

// "optimizer_update": {"adamw": {"per_tensor_s", "per_element_s"}, "sgd": {...}}.
Status parse_updates(const json& root, HardwareProfile& p) {
  auto it = root.find("optimizer_update");
  if (it == root.end()) return ok_status();
  if (Status s = require_object(*it, "optimizer_update"); !s) return s;
  if (Status s = check_keys(*it, "optimizer_update.", kOptimizerNames); !s) return s;
  UpdateCost* targets[] = {&p.adamw_update, &p.sgd_update};
  for (size_t i = 0; i < std::size(kOptimizerNames); ++i) {
    auto entry = it->find(std::string(kOptimizerNames[i]));
    if (entry == it->end()) continue;
    std::string at = fmt::format("optimizer_update.{}", kOptimizerNames[i]);
    if (Status s = require_object(*entry, at); !s) return s;
    if (Status s = check_keys(*entry, at + ".", kUpdateKeys); !s) return s;
    Expected<double> tensor = get_number(*entry, at + ".", "per_tensor_s", /*positive=*/false, 0.0);
    if (!tensor) return tensor.error();
    Expected<double> element = get_number(*entry, at + ".", "per_element_s", /*positive=*/false, 0.0);
    if (!element) return element.error();
    *targets[i] = UpdateCost{*tensor, *element};
  }
  return ok_status();
}

Expected<LinkSpec> parse_link(const json& root, const std::string& key) {
  std::string where = key + ".";
  auto it = root.find(key);
  if (it == root.end()) return make_error("hardware profile field '{}' is missing", key);
  if (!it->is_object()) {
    return make_error("hardware profile field '{}' must be an object, got {}", key, it->dump());
  }
  if (Status s = check_keys(*it, where, kLinkKeys); !s) return s.error();
  Expected<double> bandwidth = get_number(*it, where, "bandwidth_bytes_per_s", /*positive=*/true);
  if (!bandwidth) return bandwidth.error();
  Expected<double> latency = get_number(*it, where, "latency_s", /*positive=*/false);
  if (!latency) return latency.error();
  LinkSpec link{*bandwidth, *latency};
  if (Status s = parse_algorithms(*it, key, link); !s) return s.error();
  if (Status s = parse_measured(*it, key, link); !s) return s.error();
  return link;
}

Status parse_peaks(const json& root, HardwareProfile& profile) {
  auto it = root.find("peak_flops");
  if (it == root.end()) return make_error("hardware profile field 'peak_flops' is missing");
  if (!it->is_object()) {
    return make_error("hardware profile field 'peak_flops' must be an object of dtype -> FLOP/s, got {}",
                      it->dump());
  }
  for (const auto& [key, value] : it->items()) {
    std::optional<DType> dtype = parse_dtype(key);
    if (!dtype) return make_error("hardware profile field 'peak_flops.{}' is not a dtype", key);
    Expected<double> peak = get_number(*it, "peak_flops.", key, /*positive=*/false);
    if (!peak) return peak.error();
    profile.peak_flops[static_cast<size_t>(*dtype)] = *peak;
  }
  // f32 is the fallback for every dtype without a peak, so it must be there.
  if (profile.peak_flops[static_cast<size_t>(DType::f32)] <= 0) {
    return make_error("hardware profile field 'peak_flops.f32' must be positive (it is the fallback "
                      "for dtypes with peak 0)");
  }
  return ok_status();
}

Status parse_figures(const json& root, HardwareProfile& p) {
  struct NumberField {
    const char* key;
    double* target;
    bool positive;
    std::optional<double> fallback;
  };
  const NumberField fields[] = {
      {"memory_bandwidth_bytes_per_s", &p.memory_bandwidth_bytes_per_s, true, std::nullopt},
      {"memory_bytes", &p.memory_bytes, true, std::nullopt},
      {"compute_efficiency", &p.compute_efficiency, true, 1.0},
      {"memory_efficiency", &p.memory_efficiency, true, 1.0},
      {"min_op_time_s", &p.min_op_time_s, false, 0.0},
      {"node_overhead_s", &p.node_overhead_s, false, 0.0},
  };
  for (const NumberField& f : fields) {
    Expected<double> value = get_number(root, "", f.key, f.positive, f.fallback);
    if (!value) return value.error();
    *f.target = *value;
  }
  for (const char* key : {"compute_efficiency", "memory_efficiency"}) {
    double value = root.value(key, 1.0);
    if (value > 1) return make_error("hardware profile field '{}' must be at most 1, got {}", key, value);
  }
  auto devices = root.find("devices_per_node");
  if (devices == root.end()) return make_error("hardware profile field 'devices_per_node' is missing");
  if (!devices->is_number_integer() || devices->get<int64_t>() < 1) {
    return make_error("hardware profile field 'devices_per_node' must be a positive integer, got {}",
                      devices->dump());
  }
  p.devices_per_node = devices->get<int64_t>();
  return ok_status();
}

Expected<std::string> get_string(const json& root, const char* key, bool required) {
  auto it = root.find(key);
  if (it == root.end()) {
    if (required) return make_error("hardware profile field '{}' is missing", key);
    return std::string();
  }
  if (!it->is_string()) {
    return make_error("hardware profile field '{}' must be a string, got {}", key, it->dump());
  }
  return it->get<std::string>();
}

Expected<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error("cannot open hardware profile file '{}'", path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string_view coll_algorithm_name(CollAlgorithm a) { return kAlgorithmNames[static_cast<size_t>(a)]; }
std::string_view coll_protocol_name(CollProtocol p) { return kProtocolNames[static_cast<size_t>(p)]; }

Expected<HardwareProfile> parse_hardware_json(std::string_view text) {
  json root = json::parse(text, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return make_error("hardware profile is not valid JSON");
  if (!root.is_object()) return make_error("hardware profile must be a JSON object");
  if (Status s = check_keys(root, "", kTopLevelKeys); !s) return s.error();
  HardwareProfile profile;
  Expected<std::string> name = get_string(root, "name", /*required=*/true);
  if (!name) return name.error();
  profile.name = *name;
  Expected<std::string> source = get_string(root, "source", /*required=*/false);
  if (!source) return source.error();
  profile.source = *source;
  if (Status s = parse_peaks(root, profile); !s) return s.error();
  if (Status s = parse_figures(root, profile); !s) return s.error();
  Expected<LinkSpec> intra = parse_link(root, "intra_node");
  if (!intra) return intra.error();
  Expected<LinkSpec> inter = parse_link(root, "inter_node");
  if (!inter) return inter.error();
  profile.intra_node = *intra;
  profile.inter_node = *inter;
  if (Status s = parse_op_times(root, profile); !s) return s.error();
  if (Status s = parse_updates(root, profile); !s) return s.error();
  return profile;
}

std::string write_hardware_json(const HardwareProfile& p) {
  json peaks = json::object();
  for (int i = 0; i < kDTypeCount; ++i) {
    DType dtype = static_cast<DType>(i);
    if (is_floating(dtype) || p.peak_flops[i] > 0) peaks[std::string(dtype_name(dtype))] = p.peak_flops[i];
  }
  auto link = [](const LinkSpec& l) {
    nlohmann::ordered_json out{{"bandwidth_bytes_per_s", l.bandwidth_bytes_per_s},
                               {"latency_s", l.latency_s}};
    for (const AlgorithmSpec& a : l.algorithms) {
      out["algorithms"].push_back(nlohmann::ordered_json{
          {"algorithm", coll_algorithm_name(a.algorithm)},
          {"protocol", coll_protocol_name(a.protocol)},
          {"latency_s", a.latency_s},
          {"bandwidth_bytes_per_s", a.bandwidth_bytes_per_s}});
    }
    for (size_t c = 0; c < l.measured.size(); ++c) {
      if (l.measured[c].bandwidth_bytes_per_s <= 0) continue;
      out["collectives"][std::string(kMeasuredCollectiveNames[c])] = nlohmann::ordered_json{
          {"latency_s", l.measured[c].latency_s},
          {"bandwidth_bytes_per_s", l.measured[c].bandwidth_bytes_per_s}};
    }
    return out;
  };
  auto update = [](const UpdateCost& u) {
    return nlohmann::ordered_json{{"per_tensor_s", u.per_tensor_s}, {"per_element_s", u.per_element_s}};
  };
  // ordered_json keeps the same key order as the files in profiles/.
  nlohmann::ordered_json out;
  out["name"] = p.name;
  out["source"] = p.source;
  out["peak_flops"] = peaks;
  out["memory_bandwidth_bytes_per_s"] = p.memory_bandwidth_bytes_per_s;
  out["memory_bytes"] = p.memory_bytes;
  out["compute_efficiency"] = p.compute_efficiency;
  out["memory_efficiency"] = p.memory_efficiency;
  out["min_op_time_s"] = p.min_op_time_s;
  if (p.node_overhead_s > 0) out["node_overhead_s"] = p.node_overhead_s;
  out["devices_per_node"] = p.devices_per_node;
  out["intra_node"] = link(p.intra_node);
  out["inter_node"] = link(p.inter_node);
  if (p.adamw_update.measured()) out["optimizer_update"]["adamw"] = update(p.adamw_update);
  if (p.sgd_update.measured()) out["optimizer_update"]["sgd"] = update(p.sgd_update);
  if (!p.op_times.empty()) {
    // Sorted by key, so that the same measurements give the same file.
    std::vector<std::pair<std::string, double>> times(p.op_times.begin(), p.op_times.end());
    std::sort(times.begin(), times.end());
    for (const auto& [key, seconds] : times) out["op_times"][key] = seconds;
  }
  if (!p.op_times_warm.empty()) {
    std::vector<std::pair<std::string, double>> times(p.op_times_warm.begin(), p.op_times_warm.end());
    std::sort(times.begin(), times.end());
    for (const auto& [key, seconds] : times) out["op_times_warm"][key] = seconds;
  }
  if (p.cache_bytes > 0) out["cache_bytes"] = p.cache_bytes;
  return out.dump(2) + "\n";
}

HardwareProfile operands_for_footprint(const HardwareProfile& profile, double bytes_per_device) {
  if (profile.op_times_warm.empty() || profile.cache_bytes <= 0 || bytes_per_device > profile.cache_bytes) {
    return profile;
  }
  HardwareProfile warm = profile;
  for (const auto& [key, seconds] : profile.op_times_warm) warm.op_times[key] = seconds;
  return warm;
}

std::vector<std::string> builtin_hardware_names() {
  std::vector<std::string> names;
  for (const detail::BuiltinProfileText& t : detail::builtin_profile_texts()) names.emplace_back(t.name);
  return names;
}

Expected<HardwareProfile> load_hardware(std::string_view name_or_path) {
  for (const detail::BuiltinProfileText& t : detail::builtin_profile_texts()) {
    if (t.name != name_or_path) continue;
    Expected<HardwareProfile> profile = parse_hardware_json(t.json);
    if (!profile) {
      return make_error_like(profile.error(), "built-in hardware '{}': {}", t.name, profile.error().message);
    }
    return profile;
  }
  std::string path(name_or_path);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return make_error("unknown hardware '{}': built-in profiles are {}; a path to a JSON file also "
                      "works (no file '{}' exists)",
                      name_or_path, fmt::join(builtin_hardware_names(), ", "), path);
  }
  Expected<std::string> text = read_file(path);
  if (!text) return text.error();
  Expected<HardwareProfile> profile = parse_hardware_json(*text);
  if (!profile) return make_error_like(profile.error(), "{}: {}", path, profile.error().message);
  return profile;
}

}  // namespace autopar
