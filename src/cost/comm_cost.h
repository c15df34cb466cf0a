// Communication cost of one collective on a group of devices.
//
// buffer_bytes is B, the full per-device buffer of the collective: the gathered
// output of an all-gather, the unreduced input of a reduce-scatter, the buffer of
// an all-reduce, the whole send buffer of an all-to-all.
//
// The model is NCCL's (docs/collective-model.md): a link offers algorithms
// (ring, tree, nvls), each with a protocol, a latency per step and a bandwidth,
// and a collective takes the fastest one it may use, as NCCL's tuner does:
//
//   time = steps(algorithm, collective, n) * latency
//        + bytes(algorithm, collective, n, B) / bandwidth
//
//   ring:  steps (n-1), 2(n-1) for all-reduce; bytes as nccl-tests' busBw counts them:
//          (n-1)/n * B, 2(n-1)/n * B for all-reduce. Every collective.
//   tree:  steps 2*ceil(log2 n); bytes 2(n-1)/n * B. All-reduce only.
//   nvls:  steps 2; bytes B (the NVLink switch reduces). All-reduce inside a node only.
//   local slice: 0 (no communication).
//
// A group that stays inside one node runs on the intra-node link. A group that
// spans nodes, with k members in each, runs on the inter-node link with k
// network interfaces per node: bandwidth k * (per-interface bandwidth), at most
// what the intra-node ring carries; all-to-all cannot spread over interfaces and
// gets one. A link without algorithms is one ring at its bandwidth and latency:
// the plain ring alpha-beta model. A collective the profile measured through
// the runtime (LinkSpec::measured, from `autopar calibrate`) is that ring.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "cost/hardware.h"

namespace autopar {

enum class Collective : uint8_t { kAllGather, kReduceScatter, kAllReduce, kAllToAll, kLocalSlice };

std::string_view collective_name(Collective c);  // "all_gather", "reduce_scatter", ...
std::optional<Collective> parse_collective(std::string_view name);

// The devices one collective runs over (one mesh dim's group) and their links.
struct CollectiveGroup {
  int64_t size = 1;
  int64_t per_node = 1;  // members in each node; == size when the group stays in one node
  LinkSpec intra;        // inside a node (NVLink)
  LinkSpec inter;        // across nodes (the network)

  bool crosses_nodes() const { return per_node < size; }
};

// A group of n on one link (per_node = n).
CollectiveGroup single_link_group(int64_t size, const LinkSpec& link);

// The algorithm a collective runs with and its time (kRing/kSimple and 0 for
// a local slice or a group of one).
struct CollectiveChoice {
  CollAlgorithm algorithm = CollAlgorithm::kRing;
  CollProtocol protocol = CollProtocol::kSimple;
  double time_s = 0;
};

CollectiveChoice choose_collective(Collective c, const CollectiveGroup& group, double buffer_bytes);
// As choose_collective, limited to one algorithm; nullopt when the link has none
// that this collective may use.
std::optional<CollectiveChoice> collective_with(Collective c, const CollectiveGroup& group,
                                                double buffer_bytes, CollAlgorithm algorithm);
double collective_time(Collective c, const CollectiveGroup& group, double buffer_bytes);
double collective_time(Collective c, int64_t group_size, double buffer_bytes, const LinkSpec& link);

// nccl-tests' busBw of a collective that took time_s: B / time_s times 2(n-1)/n
// for all-reduce, (n-1)/n for all-gather, reduce-scatter and all-to-all.
double bus_bandwidth(Collective c, int64_t group_size, double buffer_bytes, double time_s);

// The ring's figures, used for traffic volumes and by the alpha-beta fit of
// `autopar calibrate`: the bytes each device sends ((n-1)/n * B, twice for
// all-reduce, 0 for a local slice) and the steps ((n-1), 2(n-1) or 0).
double collective_sent_bytes(Collective c, int64_t group_size, double buffer_bytes);
int64_t collective_latency_steps(Collective c, int64_t group_size);

}  // namespace autopar
