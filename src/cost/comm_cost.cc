// Ring alpha-beta formulas of comm_cost.h.
#include "cost/comm_cost.h"

#include <array>

namespace autopar {
namespace {

struct CollectiveName {
  Collective collective;
  std::string_view name;
};

// Sorted by enumerator; names match the printed forms used in plans.
constexpr std::array<CollectiveName, 5> kNames{{
    {Collective::kAllGather, "all_gather"},
    {Collective::kReduceScatter, "reduce_scatter"},
    {Collective::kAllReduce, "all_reduce"},
    {Collective::kAllToAll, "all_to_all"},
    {Collective::kLocalSlice, "local_slice"},
}};

// All-reduce is a reduce-scatter followed by an all-gather: twice the steps and traffic.
double ring_factor(Collective c) {
  switch (c) {
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll:
      return 1;
    case Collective::kAllReduce:
      return 2;
    case Collective::kLocalSlice:
      return 0;
  }
  return 0;
}

}  // namespace

std::string_view collective_name(Collective c) { return kNames[static_cast<size_t>(c)].name; }

std::optional<Collective> parse_collective(std::string_view name) {
  for (const CollectiveName& entry : kNames) {
    if (entry.name == name) return entry.collective;
  }
  return std::nullopt;
}

int64_t collective_latency_steps(Collective c, int64_t group_size) {
  if (group_size <= 1) return 0;
  return static_cast<int64_t>(ring_factor(c)) * (group_size - 1);
}

double collective_sent_bytes(Collective c, int64_t group_size, double buffer_bytes) {
  if (group_size <= 1) return 0;
  double n = static_cast<double>(group_size);
  return ring_factor(c) * (n - 1) / n * buffer_bytes;
}

double collective_time(Collective c, int64_t group_size, double buffer_bytes, const LinkSpec& link) {
  double steps = static_cast<double>(collective_latency_steps(c, group_size));
  double sent = collective_sent_bytes(c, group_size, buffer_bytes);
  if (sent == 0) return steps * link.latency_s;
  return steps * link.latency_s + sent / link.bandwidth_bytes_per_s;
}

}  // namespace autopar
