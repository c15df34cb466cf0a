#include <gtest/gtest.h>

#include "cost/comm_cost.h"

namespace autopar {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
const LinkSpec kLink{/*bandwidth_bytes_per_s=*/100e9, /*latency_s=*/1e-6};

TEST(CommCost, AllGatherOfOneGibOverFourDevicesPaysThreeLatenciesAndThreeQuartersOfTheBuffer) {
  // (4-1) * 1 us + (4-1)/4 * 2^30 B / 1e11 B/s
  double expected = 3e-6 + 0.75 * kGiB / 1e11;
  EXPECT_DOUBLE_EQ(collective_time(Collective::kAllGather, 4, kGiB, kLink), expected);
  EXPECT_DOUBLE_EQ(collective_sent_bytes(Collective::kAllGather, 4, kGiB), 0.75 * kGiB);
}

TEST(CommCost, ReduceScatterCostsTheSameAsAllGather) {
  // Same ring traffic, reversed: (8-1) * 1 us + 7/8 * 1 GiB / 1e11.
  double expected = 7e-6 + 0.875 * kGiB / 1e11;
  EXPECT_DOUBLE_EQ(collective_time(Collective::kReduceScatter, 8, kGiB, kLink), expected);
}

TEST(CommCost, AllReduceIsReduceScatterPlusAllGather) {
  // 2 * (4-1) * 1 us + 2 * 3/4 * 1 GiB / 1e11
  double expected = 6e-6 + 1.5 * kGiB / 1e11;
  EXPECT_DOUBLE_EQ(collective_time(Collective::kAllReduce, 4, kGiB, kLink), expected);
  EXPECT_EQ(collective_latency_steps(Collective::kAllReduce, 4), 6);
}

TEST(CommCost, AllToAllSendsAllButOwnShare) {
  // (2-1) * 1 us + 1/2 * 64 MiB / 1e11
  double buffer = 64.0 * 1024 * 1024;
  double expected = 1e-6 + 0.5 * buffer / 1e11;
  EXPECT_DOUBLE_EQ(collective_time(Collective::kAllToAll, 2, buffer, kLink), expected);
}

TEST(CommCost, LocalSliceAndSingleDeviceGroupsAreFree) {
  EXPECT_EQ(collective_time(Collective::kLocalSlice, 8, kGiB, kLink), 0);
  EXPECT_EQ(collective_sent_bytes(Collective::kLocalSlice, 8, kGiB), 0);
  EXPECT_EQ(collective_time(Collective::kAllReduce, 1, kGiB, kLink), 0);
}

// A link with a low-latency ring and NVLink SHARP, in round numbers.
LinkSpec two_algorithm_link() {
  LinkSpec link{/*bandwidth_bytes_per_s=*/100e9, /*latency_s=*/1e-6};
  link.algorithms = {
      {CollAlgorithm::kRing, CollProtocol::kLowLatency, /*latency_s=*/1e-6, /*bandwidth=*/50e9},
      {CollAlgorithm::kNvls, CollProtocol::kSimple, /*latency_s=*/20e-6, /*bandwidth=*/100e9},
  };
  return link;
}

TEST(CommCost, AllReduceTakesTheFasterAlgorithmAtEachSize) {
  CollectiveGroup group = single_link_group(8, two_algorithm_link());
  // 1 MiB: ring 14 * 1 us + 1.75 * 2^20 / 5e10 = 50.7 us; nvls 2 * 20 us + 2^20 / 1e11 = 50.5 us.
  double mib = 1024.0 * 1024.0;
  CollectiveChoice small = choose_collective(Collective::kAllReduce, group, mib / 2);
  EXPECT_EQ(small.algorithm, CollAlgorithm::kRing);  // 512 KiB: 32.4 us against 45.2 us
  EXPECT_DOUBLE_EQ(small.time_s, 14e-6 + 1.75 * (mib / 2) / 50e9);
  CollectiveChoice large = choose_collective(Collective::kAllReduce, group, kGiB);
  EXPECT_EQ(large.algorithm, CollAlgorithm::kNvls);
  EXPECT_EQ(large.protocol, CollProtocol::kSimple);
  EXPECT_DOUBLE_EQ(large.time_s, 40e-6 + kGiB / 100e9);  // the switch reduces: B, not 2(n-1)/n B
}

TEST(CommCost, OnlyAllReduceUsesTreesAndNvls) {
  CollectiveGroup group = single_link_group(8, two_algorithm_link());
  CollectiveChoice gather = choose_collective(Collective::kAllGather, group, kGiB);
  EXPECT_EQ(gather.algorithm, CollAlgorithm::kRing);
  EXPECT_DOUBLE_EQ(gather.time_s, 7e-6 + 0.875 * kGiB / 50e9);
  EXPECT_FALSE(collective_with(Collective::kReduceScatter, group, kGiB, CollAlgorithm::kNvls));
  EXPECT_FALSE(collective_with(Collective::kAllReduce, group, kGiB, CollAlgorithm::kTree));
}

TEST(CommCost, TreeAllReducePaysTwiceLogNSteps) {
  LinkSpec link{100e9, 1e-6};
  link.algorithms = {{CollAlgorithm::kRing, CollProtocol::kSimple, 1e-6, 10e9},
                     {CollAlgorithm::kTree, CollProtocol::kSimple, 1e-6, 10e9}};
  // 16 devices: tree 2 * log2(16) = 8 steps, ring 2 * 15 = 30; same bandwidth.
  std::optional<CollectiveChoice> tree =
      collective_with(Collective::kAllReduce, single_link_group(16, link), 0, CollAlgorithm::kTree);
  ASSERT_TRUE(tree);
  EXPECT_DOUBLE_EQ(tree->time_s, 8e-6);
  EXPECT_EQ(choose_collective(Collective::kAllReduce, single_link_group(16, link), 1e6).algorithm,
            CollAlgorithm::kTree);
  // 5 devices round up to 2 * 3 steps.
  EXPECT_DOUBLE_EQ(
      collective_with(Collective::kAllReduce, single_link_group(5, link), 0, CollAlgorithm::kTree)->time_s,
      6e-6);
}

TEST(CommCost, GroupAcrossNodesUsesOneNetworkInterfacePerMemberInANode) {
  CollectiveGroup group{/*size=*/8, /*per_node=*/2, /*intra=*/kLink, /*inter=*/LinkSpec{10e9, 5e-6}};
  // 4 nodes x 2: ring on the network at 2 * 10 GB/s, each of the 7 steps at 5 us.
  EXPECT_DOUBLE_EQ(collective_time(Collective::kAllGather, group, kGiB), 35e-6 + 0.875 * kGiB / 20e9);
  // All-to-all cannot spread over the interfaces: 10 GB/s.
  EXPECT_DOUBLE_EQ(collective_time(Collective::kAllToAll, group, kGiB), 35e-6 + 0.875 * kGiB / 10e9);
  // 2 nodes x 4 at 4 * 40 GB/s would beat the node's own ring (100 GB/s), which bounds it.
  CollectiveGroup fat{8, 4, kLink, LinkSpec{40e9, 5e-6}};
  EXPECT_DOUBLE_EQ(collective_time(Collective::kAllGather, fat, kGiB), 35e-6 + 0.875 * kGiB / 100e9);
  EXPECT_TRUE(fat.crosses_nodes());
  EXPECT_FALSE(single_link_group(8, kLink).crosses_nodes());
}

TEST(CommCost, NvlsNeverRunsAcrossNodes) {
  CollectiveGroup group{8, 4, two_algorithm_link(), two_algorithm_link()};
  EXPECT_EQ(choose_collective(Collective::kAllReduce, group, kGiB).algorithm, CollAlgorithm::kRing);
}

TEST(CommCost, BusBandwidthIsNcclTestsBusBw) {
  // all_reduce: 2(n-1)/n * B / t; all_gather: (n-1)/n * B / t.
  EXPECT_DOUBLE_EQ(bus_bandwidth(Collective::kAllReduce, 8, 8e9, 1.0), 14e9);
  EXPECT_DOUBLE_EQ(bus_bandwidth(Collective::kAllGather, 8, 8e9, 1.0), 7e9);
}

TEST(CommCost, CollectiveNamesParseBack) {
  for (Collective c : {Collective::kAllGather, Collective::kReduceScatter, Collective::kAllReduce,
                       Collective::kAllToAll, Collective::kLocalSlice}) {
    std::optional<Collective> parsed = parse_collective(collective_name(c));
    ASSERT_TRUE(parsed.has_value()) << collective_name(c);
    EXPECT_EQ(*parsed, c);
  }
  EXPECT_EQ(collective_name(Collective::kAllReduce), "all_reduce");
  EXPECT_FALSE(parse_collective("broadcast").has_value());
}

}  // namespace
}  // namespace autopar
