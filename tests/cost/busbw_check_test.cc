#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "cost/busbw_check.h"

namespace autopar {
namespace {

constexpr const char* kHeader =
    "profile,collective,group_size,per_node,run,compare,size_bytes,busbw_gbps,source\n";

TEST(BusBwCheck, ParsesRowsAndSkipsComments) {
  std::string csv = std::string("# a comment\n") + kHeader +
                    "h100,all_reduce,8,8,default,auto,1048576,67.04,nvidia-dgxc-h100\n"
                    "a100,all_reduce,16,8,NCCL_ALGO=RING,ring,17179869184,192,nccl-812\n";
  Expected<std::vector<PublishedBusBw>> rows = parse_published_busbw(csv);
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].profile, "h100");
  EXPECT_FALSE((*rows)[0].algorithm.has_value());
  EXPECT_DOUBLE_EQ((*rows)[0].busbw_bytes_per_s, 67.04e9);
  EXPECT_EQ((*rows)[1].per_node, 8);
  EXPECT_EQ((*rows)[1].algorithm, CollAlgorithm::kRing);
}

TEST(BusBwCheck, BadRowsNameTheLine) {
  struct Case {
    std::string row, message;
  };
  const Case cases[] = {
      {"h100,broadcast,8,8,default,auto,1,1,x", "line 2: 'broadcast' is not a collective"},
      {"h100,all_reduce,8,3,default,auto,1,1,x", "line 2: group_size '8' and per_node '3'"},
      {"h100,all_reduce,8,8,default,mesh,1,1,x", "line 2: compare 'mesh'"},
      {"h100,all_reduce,8,8,default,auto,1,-1,x", "line 2: size '1' and busBw '-1'"},
      {"h100,all_reduce,8,8,default,auto,1,1", "line 2: 8 fields, expected 9"},
  };
  for (const Case& c : cases) {
    Expected<std::vector<PublishedBusBw>> rows = parse_published_busbw(kHeader + c.row + "\n");
    ASSERT_FALSE(rows.ok()) << c.row;
    EXPECT_NE(rows.error().message.find(c.message), std::string::npos) << rows.error().message;
  }
  EXPECT_FALSE(parse_published_busbw("profile,size\n").ok());
}

TEST(BusBwCheck, PredictionOfAPlainRingIsItsBandwidth) {
  HardwareProfile hw;
  hw.name = "round";
  hw.intra_node = {/*bandwidth_bytes_per_s=*/100e9, /*latency_s=*/0};
  hw.inter_node = {10e9, 0};
  PublishedBusBw figure{"round", Collective::kAllReduce, 8, 8, "default", std::nullopt, 1e9, 80e9, "x"};
  Expected<BusBwPrediction> p = predict_busbw(figure, hw);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_DOUBLE_EQ(p->busbw_bytes_per_s, 100e9);  // no latency: busBw is the ring's bandwidth
  EXPECT_NEAR(p->relative_error, 0.25, 1e-12);  // 100 / 80 - 1
  figure.algorithm = CollAlgorithm::kNvls;
  EXPECT_FALSE(predict_busbw(figure, hw).ok());
}

// The check of docs/collective-model.md: every published figure in
// bench/collectives/published_busbw.csv within 10% of the built-in profile's model.
TEST(CollectiveModel, EveryPublishedNcclTestsFigureIsWithinTenPercent) {
  std::ifstream in(AUTOPAR_SOURCE_DIR "/bench/collectives/published_busbw.csv");
  ASSERT_TRUE(in) << "cannot open bench/collectives/published_busbw.csv";
  std::ostringstream text;
  text << in.rdbuf();
  Expected<std::vector<PublishedBusBw>> figures = parse_published_busbw(text.str());
  ASSERT_TRUE(figures.ok()) << figures.error().message;
  for (const PublishedBusBw& f : *figures) {
    Expected<HardwareProfile> hw = load_hardware(f.profile);
    ASSERT_TRUE(hw.ok()) << hw.error().message;
    Expected<BusBwPrediction> p = predict_busbw(f, *hw);
    ASSERT_TRUE(p.ok()) << p.error().message;
    EXPECT_LE(std::abs(p->relative_error), 0.10)
        << f.profile << " " << collective_name(f.collective) << " on " << f.group_size << " ("
        << f.per_node << " per node), " << f.size_bytes << " B: predicted "
        << p->busbw_bytes_per_s / 1e9 << " GB/s, published " << f.busbw_bytes_per_s / 1e9
        << " GB/s (" << f.source << ")";
  }
}

}  // namespace
}  // namespace autopar
