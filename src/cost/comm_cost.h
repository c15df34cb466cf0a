// Alpha-beta communication cost with ring formulas, per mesh dim.
//
// buffer_bytes is B, the full per-device buffer of the collective: the gathered
// output of an all-gather, the unreduced input of a reduce-scatter, the buffer of
// an all-reduce, the whole send buffer of an all-to-all. Over a group of n:
//   all-gather, reduce-scatter:  (n-1)·alpha + (n-1)/n · B / bw
//   all-reduce:                  2(n-1)·alpha + 2(n-1)/n · B / bw
//   all-to-all:                  (n-1)·alpha + (n-1)/n · B / bw
//   local slice:                 0 (no communication)
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "cost/hardware.h"

namespace autopar {

enum class Collective : uint8_t { kAllGather, kReduceScatter, kAllReduce, kAllToAll, kLocalSlice };

std::string_view collective_name(Collective c);  // "all_gather", "reduce_scatter", ...
std::optional<Collective> parse_collective(std::string_view name);

// Bytes each device sends: the ring traffic terms above (0 for a local slice).
double collective_sent_bytes(Collective c, int64_t group_size, double buffer_bytes);
// How many alphas the collective pays: the latency terms above ((n-1), 2(n-1) or 0).
int64_t collective_latency_steps(Collective c, int64_t group_size);
double collective_time(Collective c, int64_t group_size, double buffer_bytes, const LinkSpec& link);

}  // namespace autopar
