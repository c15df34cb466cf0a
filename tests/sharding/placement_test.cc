#include <gtest/gtest.h>

#include <tuple>
#include <vector>

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
  const ShardingOptions even_only{.even_only = true};
  EXPECT_TRUE(is_valid_sharding({6, 8}, sh("S(0)S(1)"), mesh, even_only));    // 6/2, 8/4
  EXPECT_FALSE(is_valid_sharding({6, 8}, sh("S(1)S(0)"), mesh, even_only));   // 6/4 is uneven
  EXPECT_FALSE(is_valid_sharding({6, 8}, sh("S(0)S(0)"), mesh, even_only));   // 6 into 8 shards
  EXPECT_FALSE(is_valid_sharding({6, 8}, sh("S(2)R"), mesh, even_only));      // no dim 2
  Status why = check_sharding({6, 8}, sh("S(1)S(0)"), mesh, even_only);
  ASSERT_FALSE(why.ok());
  EXPECT_NE(why.error().message.find("--even-only"), std::string::npos) << why.error().message;
  EXPECT_TRUE(is_valid_sharding({6, 8}, sh("PR"), mesh, even_only));
}

TEST(Validity, UnevenShardsAreTorchChunksPieces) {
  // 10 over 4: pieces of ceil(10/4) = 3, the last one smaller: 3, 3, 3, 1.
  EXPECT_EQ(padded_chunk(10, 4), 3);
  std::vector<int64_t> starts, sizes;
  for (int64_t i = 0; i < 4; ++i) starts.push_back(chunk_start(10, 4, i)), sizes.push_back(chunk_size(10, 4, i));
  EXPECT_EQ(starts, (std::vector<int64_t>{0, 3, 6, 9}));
  EXPECT_EQ(sizes, (std::vector<int64_t>{3, 3, 3, 1}));
  // Even splits are unchanged.
  EXPECT_EQ(chunk_size(12, 4, 3), 3);
  EXPECT_EQ(chunk_start(12, 4, 2), 6);
  // 5 over 4: ceil is 2, so pieces 2, 2, 1, 0: the last device would be empty.
  EXPECT_EQ(chunk_size(5, 4, 3), 0);
}

TEST(Validity, UnevenShardsNeedOneSplitterAndEveryDeviceAPiece) {
  DeviceMesh mesh = mesh_of({2, 4});
  EXPECT_TRUE(is_valid_sharding({6, 10}, sh("S(0)S(1)"), mesh));   // 10 over 4: 3, 3, 3, 1
  EXPECT_FALSE(is_valid_sharding({6, 8}, sh("S(1)S(0)"), mesh));   // 6 over 4: 2, 2, 2, 0
  EXPECT_TRUE(is_valid_sharding({7, 8}, sh("S(0)R"), mesh));       // 7 over 2: 4, 3
  EXPECT_FALSE(is_valid_sharding({5, 8}, sh("RS(0)"), mesh));      // 5 over 4: 2, 2, 1, 0
  EXPECT_FALSE(is_valid_sharding({3, 8}, sh("RS(0)"), mesh));      // smaller than the mesh dim
  EXPECT_FALSE(is_valid_sharding({12, 8}, sh("S(0)S(0)"), mesh));  // uneven over two mesh dims
  EXPECT_TRUE(is_valid_sharding({16, 8}, sh("S(0)S(0)"), mesh));   // even over two is fine
  for (auto [shape, text, reason] : {std::tuple{Shape{5, 8}, "RS(0)", "last device empty"},
                                     std::tuple{Shape{12, 8}, "S(0)S(0)", "more than one mesh dim"},
                                     std::tuple{Shape{3, 8}, "RS(0)", "smaller than the shard count"}}) {
    Status why = check_sharding(shape, sh(text), mesh);
    ASSERT_FALSE(why.ok()) << text;
    EXPECT_NE(why.error().message.find(reason), std::string::npos) << why.error().message;
  }
}

TEST(Validity, LocalShapeIsThePaddedPieceAndLocalShapeAtEachDevicesOwn) {
  DeviceMesh mesh = mesh_of({2, 4});
  const Sharding s = sh("S(1)S(0)");  // dim 0 (10) over 4 devices, dim 1 (7) over 2
  EXPECT_TRUE(is_uneven({10, 7}, s, mesh));
  EXPECT_FALSE(is_uneven({12, 8}, s, mesh));
  EXPECT_EQ(local_shape({10, 7}, s, mesh), (Shape{3, 4}));
  EXPECT_EQ(local_shape_at({10, 7}, s, mesh, {0, 0}), (Shape{3, 4}));
  EXPECT_EQ(local_shape_at({10, 7}, s, mesh, {1, 3}), (Shape{1, 3}));
  EXPECT_EQ(local_shape_at({10, 7}, s, mesh, {1, 2}), (Shape{3, 3}));
}

TEST(Validity, LocalShapeDividesEachShardedDimByItsShardCount) {
  DeviceMesh mesh = mesh_of({2, 4});
  EXPECT_EQ(local_shape({16, 8, 3}, sh("S(0)S(0)"), mesh), (Shape{2, 8, 3}));  // 16/8
  EXPECT_EQ(local_shape({16, 8, 3}, sh("S(1)P"), mesh), (Shape{16, 4, 3}));
  EXPECT_EQ(shard_count(sh("S(0)S(0)"), mesh, 0), 8);
}

}  // namespace
}  // namespace autopar
