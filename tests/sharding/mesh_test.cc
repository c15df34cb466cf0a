#include <gtest/gtest.h>

#include "fixtures.h"
#include "sharding/mesh.h"

namespace autopar {
namespace {

using testing::round_device;

TEST(MeshShape, ParsesOneToThreeDims) {
  EXPECT_EQ(*parse_mesh_shape("4"), (std::vector<int64_t>{4}));
  EXPECT_EQ(*parse_mesh_shape("2x4"), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(*parse_mesh_shape("8x8"), (std::vector<int64_t>{8, 8}));
  EXPECT_EQ(*parse_mesh_shape("8x8x8"), (std::vector<int64_t>{8, 8, 8}));
}

TEST(MeshShape, BadStringsNameTheTextAndTheExpectedForm) {
  for (std::string_view bad : {"", "0", "2x0", "ax4", "2x", "x2", "2*4", "-2", "2x4x"}) {
    Expected<std::vector<int64_t>> shape = parse_mesh_shape(bad);
    ASSERT_FALSE(shape.ok()) << bad;
    EXPECT_NE(shape.error().message.find(fmt::format("\"{}\"", bad)), std::string::npos)
        << shape.error().message;
    EXPECT_NE(shape.error().message.find("2x4"), std::string::npos) << shape.error().message;
  }
}

TEST(MeshNames, ParseAndRejectEmptyOrRepeated) {
  EXPECT_EQ(*parse_mesh_names("dp,tp"), (std::vector<std::string>{"dp", "tp"}));
  EXPECT_FALSE(parse_mesh_names("dp,,tp").ok());
  EXPECT_FALSE(parse_mesh_names("dp,dp").ok());
}

TEST(Mesh, DefaultNamesAreD0D1) {
  DeviceMesh mesh = *make_mesh({2, 4}, round_device());
  EXPECT_EQ(mesh.dims[0].name, "d0");
  EXPECT_EQ(mesh.dims[1].name, "d1");
  EXPECT_EQ(mesh.num_devices(), 8);
}

TEST(Mesh, InnermostDimsAreIntraNodeWhileTheyFitANode) {
  // 4 devices per node: 2x2x4 -> d2 (4) fits, d1 would make 8 > 4.
  DeviceMesh mesh = *make_mesh({2, 2, 4}, round_device());
  EXPECT_EQ(mesh.dims[2].link_class, LinkClass::kIntraNode);
  EXPECT_EQ(mesh.dims[1].link_class, LinkClass::kInterNode);
  EXPECT_EQ(mesh.dims[0].link_class, LinkClass::kInterNode);
  EXPECT_DOUBLE_EQ(mesh.dims[2].link.bandwidth_bytes_per_s, 100e9);
  EXPECT_DOUBLE_EQ(mesh.dims[0].link.bandwidth_bytes_per_s, 10e9);
  // 2x2: both fit in one 4-device node.
  DeviceMesh small = *make_mesh({2, 2}, round_device());
  EXPECT_EQ(small.dims[0].link_class, LinkClass::kIntraNode);
  EXPECT_EQ(to_string(small), "d0=2(intra) d1=2(intra)");
}

TEST(Mesh, EachDimsGroupKnowsHowManyOfItsMembersShareANode) {
  // 4 devices per node, row-major: in 4x2 the outer dim's members are 2 devices
  // apart, so each node holds 2 of them and the group spans 2 nodes.
  DeviceMesh mesh = *make_mesh({4, 2}, round_device());
  EXPECT_EQ(mesh.dims[1].group.per_node, 2);  // intra-node: the whole group
  EXPECT_FALSE(mesh.dims[1].group.crosses_nodes());
  EXPECT_EQ(mesh.dims[0].group.per_node, 2);
  EXPECT_TRUE(mesh.dims[0].group.crosses_nodes());
  // 2x2x4: d1's members are 4 apart, d0's 8: one per node.
  DeviceMesh deep = *make_mesh({2, 2, 4}, round_device());
  EXPECT_EQ(deep.dims[2].group.per_node, 4);
  EXPECT_EQ(deep.dims[1].group.per_node, 1);
  EXPECT_EQ(deep.dims[0].group.per_node, 1);
  EXPECT_DOUBLE_EQ(deep.dims[0].group.inter.bandwidth_bytes_per_s, 10e9);
}

TEST(Mesh, IntraNodeDimCountCanBeOverridden) {
  MeshOptions options;
  options.intra_node_dims = 0;
  options.names = {"dp", "tp"};
  DeviceMesh mesh = *make_mesh({2, 2}, round_device(), options);
  EXPECT_EQ(to_string(mesh), "dp=2(inter) tp=2(inter)");
  EXPECT_EQ(mesh.dims[1].group.per_node, 1);  // overridden dims cross nodes one member per node
  options.names = {"dp"};
  EXPECT_FALSE(make_mesh({2, 2}, round_device(), options).ok());
}

}  // namespace
}  // namespace autopar
