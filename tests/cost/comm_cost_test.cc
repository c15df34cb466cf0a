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
