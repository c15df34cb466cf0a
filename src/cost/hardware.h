// Hardware profiles: what one device and its links can do. Loaded from JSON
// files (profiles/*.json, or any path the user gives with --hardware FILE).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/dtype.h"
#include "ir/expected.h"

namespace autopar {

enum class LinkClass : uint8_t { kIntraNode, kInterNode };

// How NCCL runs a collective: the algorithm (the data path) and the protocol
// (LL: low latency, low bandwidth; Simple: the full bandwidth after a longer
// start). docs/collective-model.md has the formulas.
enum class CollAlgorithm : uint8_t { kRing, kTree, kNvls };
enum class CollProtocol : uint8_t { kLowLatency, kSimple };
inline constexpr int kCollAlgorithmCount = 3;

std::string_view coll_algorithm_name(CollAlgorithm a);  // "ring", "tree", "nvls"
std::string_view coll_protocol_name(CollProtocol p);    // "ll", "simple"

// One (algorithm, protocol) a link offers, fitted to published nccl-tests runs.
struct AlgorithmSpec {
  CollAlgorithm algorithm = CollAlgorithm::kRing;
  CollProtocol protocol = CollProtocol::kSimple;
  double latency_s = 0;              // per algorithm step (the step counts are in comm_cost.h)
  double bandwidth_bytes_per_s = 0;  // nccl-tests busBw for ring and tree; algBw for nvls
};

// A ring's two figures: latency per step and bandwidth on the bytes each
// device sends (comm_cost.h). Bandwidth 0: not measured.
struct RingFigures {
  double latency_s = 0;
  double bandwidth_bytes_per_s = 0;
};
inline constexpr int kMeasuredCollectiveCount = 4;  // all_gather, reduce_scatter, all_reduce, all_to_all

struct LinkSpec {
  double bandwidth_bytes_per_s = 0;  // per device, one direction
  double latency_s = 0;              // per collective step (alpha)
  // The algorithms collectives may use on this link. Empty: one ring with the
  // two figures above (the plain alpha-beta model). On the inter-node link the
  // bandwidths are per network interface, one per device.
  std::vector<AlgorithmSpec> algorithms = {};
  // Per collective, in comm_cost.h's Collective order: the ring `autopar
  // calibrate` fitted to that collective as the runtime runs it (packing the
  // blocks, the transfer, unpacking into a new tensor). A measured collective
  // uses these figures instead of the algorithms above.
  std::array<RingFigures, kMeasuredCollectiveCount> measured = {};
};

// One optimizer update of a parameter tensor with n local elements takes
// per_tensor_s + n * per_element_s. Both 0: derived from the memory bandwidth
// (compute_cost.h).
struct UpdateCost {
  double per_tensor_s = 0;
  double per_element_s = 0;
  bool measured() const { return per_tensor_s > 0 || per_element_s > 0; }
};

struct HardwareProfile {
  std::string name;
  std::array<double, kDTypeCount> peak_flops{};  // per DType, FLOP/s; 0 = unsupported
  double memory_bandwidth_bytes_per_s = 0;        // HBM
  double memory_bytes = 0;                        // device memory capacity
  double compute_efficiency = 1;                  // achieved / peak FLOP/s
  double memory_efficiency = 1;                   // achieved / peak bandwidth
  double min_op_time_s = 0;                       // per-op floor (launch overhead)
  int64_t devices_per_node = 1;  // devices sharing the intra-node link (an NVLink domain)
  LinkSpec intra_node;
  LinkSpec inter_node;
  std::string source;  // citation of the figures
  // Measured by `autopar calibrate --model/--graph --mesh`: seconds of one op
  // call as the runtime runs it (dispatch, output allocation, kernel), keyed by
  // op_call_key (compute_cost.h). A call found here costs what was measured.
  std::unordered_map<std::string, double> op_times;
  // When op_times were timed with their operands in memory (a calibration
  // step larger than the caches): the same calls with their operands in cache,
  // and the cache a core can use. A run whose every device holds at most
  // cache_bytes meets its operands warm (operands_for_footprint).
  std::unordered_map<std::string, double> op_times_warm;
  double cache_bytes = 0;
  // The runtime's own time per op beyond the kernel (graph walk, bookkeeping,
  // tracing, dispatch after a different op), added to every op that computes.
  // Measured with op_times: a ddp step's time outside its collectives less
  // its calibrated op calls, per op.
  double node_overhead_s = 0;
  UpdateCost adamw_update;  // the optimizer step (measured by `autopar calibrate`)
  UpdateCost sgd_update;

  const LinkSpec& link(LinkClass cls) const {
    return cls == LinkClass::kIntraNode ? intra_node : inter_node;
  }
};

// The profile for a run whose devices each hold at most `bytes_per_device`:
// with the warm op times when they fit the measured cache, else unchanged.
HardwareProfile operands_for_footprint(const HardwareProfile& profile, double bytes_per_device);

// Built-in names ("a100", "b200", "cpu", "h100", "h200"), or a path to a JSON file.
Expected<HardwareProfile> load_hardware(std::string_view name_or_path);
std::vector<std::string> builtin_hardware_names();
Expected<HardwareProfile> parse_hardware_json(std::string_view text);
std::string write_hardware_json(const HardwareProfile& profile);

}  // namespace autopar
