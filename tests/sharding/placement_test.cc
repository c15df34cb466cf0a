#include <gtest/gtest.h>

#include "fixtures.h"
#include "sharding/placement.h"

namespace autopar {
namespace {

using testing::mesh_of;

Sharding sh(std::string_view text) { return *parse_sharding(text); }

TEST(Placement, PrintsAndParsesBack) {
  for (std::string_view text : {"S(0)", "S(12)", "R", "P", "P(avg)", "P(max)", "P(min)"}) {
    Expected<Placement> p = parse_placement(text);
    ASSERT_TRUE(p.ok()) << text;
    EXPECT_EQ(to_string(*p), text);
  }
  EXPECT_EQ(to_string(*parse_placement("P(sum)")), "P");
}

TEST(Sharding, PrintsConcatenatedPlacementsAndParsesBack) {
  for (std::string_view text : {"S(0)S(2)", "RP", "S(0)S(0)", "R", "P(max)S(1)R"}) {
    Expected<Sharding> s = parse_sharding(text);
    ASSERT_TRUE(s.ok()) << text;
    EXPECT_EQ(to_string(*s), text);
  }
}

TEST(Sharding, GradientPairsWithItsValuePerMeshDim) {
  EXPECT_TRUE(pairs_as_gradient(sh("S(0)S(1)"), sh("S(0)S(1)")));
  EXPECT_FALSE(pairs_as_gradient(sh("S(0)S(1)"), sh("S(1)S(0)")));
  EXPECT_FALSE(pairs_as_gradient(sh("S(0)R"), sh("RR")));  // a sharded value's grad stays sharded
  EXPECT_TRUE(pairs_as_gradient(sh("PR"), sh("RR")));       // a pending sum's grad is replicated
  EXPECT_FALSE(pairs_as_gradient(sh("PR"), sh("PR")));
  EXPECT_TRUE(pairs_as_gradient(sh("RS(2)"), sh("PS(2)")));  // a replicated value's grad: maybe P
  EXPECT_FALSE(pairs_as_gradient(sh("RR"), sh("S(0)R")));
  EXPECT_FALSE(pairs_as_gradient(sh("R"), sh("RR")));  // mesh rank must agree
}

TEST(Sharding, BadTextIsAnErrorNamingIt) {
  for (std::string_view bad : {"", "S(", "S()", "S(x)", "Q", "RX", "P(prod)", "S(-1)"}) {
    Expected<Sharding> s = parse_sharding(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.error().message.find(fmt::format("\"{}\"", bad)), std::string::npos)
        << s.error().message;
  }
  EXPECT_FALSE(parse_sharding("RR", /*mesh_ndim=*/3).ok());
}

TEST(Sharding, KeysDifferForDifferentShardings) {
  EXPECT_NE(sh("S(0)R").key(), sh("RS(0)").key());
  EXPECT_NE(sh("P").key(), sh("P(avg)").key());
  EXPECT_EQ(sh("S(1)P").key(), sh("S(1)P").key());
}

// The seed case: [32, 4096, 4096] as S(0)S(0) on a (32, 8) mesh would split dim
// 0 (size 32) into 32 * 8 = 256 shards.
TEST(Validity, DimSmallerThanItsShardCountIsNeverSharded) {
  DeviceMesh mesh = mesh_of({32, 8});
  Shape shape{32, 4096, 4096};
  EXPECT_FALSE(is_valid_sharding(shape, sh("S(0)S(0)"), mesh));
  Status why = check_sharding(shape, sh("S(0)S(0)"), mesh);
  ASSERT_FALSE(why.ok());
  EXPECT_NE(why.error().message.find("size 32 into 256 shards"), std::string::npos)
      << why.error().message;
  EXPECT_TRUE(is_valid_sharding(shape, sh("S(0)S(1)"), mesh));   // 32/32, 4096/8
  EXPECT_TRUE(is_valid_sharding(shape, sh("S(1)S(1)"), mesh));   // 4096 / 256 = 16
}

TEST(Validity, EvenOnlyRejectsShardCountsThatDoNotDivide) {
  DeviceMesh mesh = mesh_of({2, 4});
  EXPECT_TRUE(is_valid_sharding({6, 8}, sh("S(0)S(1)"), mesh));    // 6/2, 8/4
  EXPECT_FALSE(is_valid_sharding({6, 8}, sh("S(1)S(0)"), mesh));   // 6/4 is uneven
  EXPECT_FALSE(is_valid_sharding({6, 8}, sh("S(0)S(0)"), mesh));   // 6 into 8 shards
  EXPECT_FALSE(is_valid_sharding({6, 8}, sh("S(2)R"), mesh));      // no dim 2
  EXPECT_FALSE(check_sharding({6, 8}, sh("S(1)S(0)"), mesh).ok());
  EXPECT_TRUE(is_valid_sharding({6, 8}, sh("PR"), mesh));
}

TEST(Validity, LocalShapeDividesEachShardedDimByItsShardCount) {
  DeviceMesh mesh = mesh_of({2, 4});
  EXPECT_EQ(local_shape({16, 8, 3}, sh("S(0)S(0)"), mesh), (Shape{2, 8, 3}));  // 16/8
  EXPECT_EQ(local_shape({16, 8, 3}, sh("S(1)P"), mesh), (Shape{16, 4, 3}));
  EXPECT_EQ(shard_count(sh("S(0)S(0)"), mesh, 0), 8);
}

}  // namespace
}  // namespace autopar
