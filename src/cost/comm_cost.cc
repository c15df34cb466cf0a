// The per-algorithm collective model of comm_cost.h.
#include "cost/comm_cost.h"

#include <algorithm>
#include <array>
#include <span>

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

int64_t ceil_log2(int64_t n) {
  int64_t bits = 0;
  while ((int64_t{1} << bits) < n) ++bits;
  return bits;
}

// Trees and NVLink SHARP only reduce; the other collectives run as rings.
bool may_use(Collective c, CollAlgorithm a, const CollectiveGroup& group) {
  if (a == CollAlgorithm::kRing) return true;
  if (c != Collective::kAllReduce) return false;
  return a != CollAlgorithm::kNvls || !group.crosses_nodes();
}

double algorithm_steps(CollAlgorithm a, Collective c, int64_t n) {
  switch (a) {
    case CollAlgorithm::kRing:
      return ring_factor(c) * static_cast<double>(n - 1);
    case CollAlgorithm::kTree:
      return 2.0 * static_cast<double>(ceil_log2(n));  // up the tree, then down
    case CollAlgorithm::kNvls:
      return 2;  // to the switch, which reduces, and back
  }
  return 0;
}

// Bytes per device over the algorithm's bandwidth: busBw's count for ring and
// tree (the same expression as collective_sent_bytes, so a link without
// algorithms costs exactly the plain ring model), the buffer once for nvls.
double algorithm_bytes(CollAlgorithm a, Collective c, int64_t n, double buffer_bytes) {
  if (a == CollAlgorithm::kNvls) return buffer_bytes;
  double size = static_cast<double>(n);
  return ring_factor(c) * (size - 1) / size * buffer_bytes;
}

std::span<const AlgorithmSpec> algorithms_of(const LinkSpec& link, AlgorithmSpec& plain_ring) {
  if (!link.algorithms.empty()) return link.algorithms;
  plain_ring = AlgorithmSpec{CollAlgorithm::kRing, CollProtocol::kSimple, link.latency_s,
                             link.bandwidth_bytes_per_s};
  return {&plain_ring, 1};
}

// What the intra-node ring carries per device: the bound on a ring or tree
// that also passes through every node it spans.
double intra_ring_bandwidth(const LinkSpec& intra) {
  AlgorithmSpec plain_ring;
  double best = 0;
  for (const AlgorithmSpec& a : algorithms_of(intra, plain_ring)) {
    if (a.algorithm == CollAlgorithm::kRing) best = std::max(best, a.bandwidth_bytes_per_s);
  }
  return best;
}

// The bandwidth one algorithm gives the group. Across nodes each of the k
// members in a node brings its own network interface, except for all-to-all,
// whose point-to-point transfers cannot be spread over them.
double group_bandwidth(const AlgorithmSpec& a, Collective c, const CollectiveGroup& group) {
  if (!group.crosses_nodes()) return a.bandwidth_bytes_per_s;
  double interfaces = c == Collective::kAllToAll ? 1.0 : static_cast<double>(group.per_node);
  return std::min(interfaces * a.bandwidth_bytes_per_s, intra_ring_bandwidth(group.intra));
}

std::optional<CollectiveChoice> fastest(Collective c, const CollectiveGroup& group,
                                        double buffer_bytes, std::optional<CollAlgorithm> only) {
  if (group.size <= 1 || c == Collective::kLocalSlice) return CollectiveChoice{};
  AlgorithmSpec plain_ring;
  std::optional<CollectiveChoice> best;
  const LinkSpec& link = group.crosses_nodes() ? group.inter : group.intra;
  const RingFigures& measured = link.measured[static_cast<size_t>(c)];
  if (measured.bandwidth_bytes_per_s > 0 && (!only || *only == CollAlgorithm::kRing)) {
    // As calibration measured this collective through the runtime.
    double time = static_cast<double>(collective_latency_steps(c, group.size)) * measured.latency_s +
                  collective_sent_bytes(c, group.size, buffer_bytes) / measured.bandwidth_bytes_per_s;
    return CollectiveChoice{CollAlgorithm::kRing, CollProtocol::kSimple, time};
  }
  for (const AlgorithmSpec& a : algorithms_of(link, plain_ring)) {
    if (!may_use(c, a.algorithm, group) || (only && a.algorithm != *only)) continue;
    double time = algorithm_steps(a.algorithm, c, group.size) * a.latency_s +
                  algorithm_bytes(a.algorithm, c, group.size, buffer_bytes) /
                      group_bandwidth(a, c, group);
    if (!best || time < best->time_s) best = CollectiveChoice{a.algorithm, a.protocol, time};
  }
  return best;
}

}  // namespace

std::string_view collective_name(Collective c) { return kNames[static_cast<size_t>(c)].name; }

std::optional<Collective> parse_collective(std::string_view name) {
  for (const CollectiveName& entry : kNames) {
    if (entry.name == name) return entry.collective;
  }
  return std::nullopt;
}

CollectiveGroup single_link_group(int64_t size, const LinkSpec& link) {
  return CollectiveGroup{size, size, link, link};
}

CollectiveChoice choose_collective(Collective c, const CollectiveGroup& group, double buffer_bytes) {
  // Every link has a ring (hardware.cc checks), so some algorithm always fits.
  return *fastest(c, group, buffer_bytes, std::nullopt);
}

std::optional<CollectiveChoice> collective_with(Collective c, const CollectiveGroup& group,
                                                double buffer_bytes, CollAlgorithm algorithm) {
  return fastest(c, group, buffer_bytes, algorithm);
}

double collective_time(Collective c, const CollectiveGroup& group, double buffer_bytes) {
  return choose_collective(c, group, buffer_bytes).time_s;
}

double collective_time(Collective c, int64_t group_size, double buffer_bytes, const LinkSpec& link) {
  return collective_time(c, single_link_group(group_size, link), buffer_bytes);
}

double bus_bandwidth(Collective c, int64_t group_size, double buffer_bytes, double time_s) {
  return collective_sent_bytes(c, group_size, buffer_bytes) / time_s;
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

}  // namespace autopar
