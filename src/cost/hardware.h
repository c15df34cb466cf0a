// Hardware profiles: what one device and its links can do. Loaded from JSON
// files (profiles/*.json, or any path the user gives with --hardware FILE).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/dtype.h"
#include "ir/expected.h"

namespace autopar {

enum class LinkClass : uint8_t { kIntraNode, kInterNode };

struct LinkSpec {
  double bandwidth_bytes_per_s = 0;  // per device, one direction
  double latency_s = 0;              // per collective step (alpha)
};

struct HardwareProfile {
  std::string name;
  std::array<double, kDTypeCount> peak_flops{};  // per DType, FLOP/s; 0 = unsupported
  double memory_bandwidth_bytes_per_s = 0;        // HBM
  double memory_bytes = 0;                        // device memory capacity
  double compute_efficiency = 1;                  // achieved / peak FLOP/s
  double memory_efficiency = 1;                   // achieved / peak bandwidth
  double min_op_time_s = 0;                       // per-op floor (launch overhead)
  int64_t devices_per_node = 1;
  LinkSpec intra_node;
  LinkSpec inter_node;
  std::string source;  // citation of the figures

  const LinkSpec& link(LinkClass cls) const {
    return cls == LinkClass::kIntraNode ? intra_node : inter_node;
  }
};

// Built-in names ("a100", "b200", "cpu", "h100", "h200"), or a path to a JSON file.
Expected<HardwareProfile> load_hardware(std::string_view name_or_path);
std::vector<std::string> builtin_hardware_names();
Expected<HardwareProfile> parse_hardware_json(std::string_view text);
std::string write_hardware_json(const HardwareProfile& profile);

}  // namespace autopar
