#include "memory/peak_check.h"

#include <gtest/gtest.h>

#include <vector>

namespace autopar {
namespace {

TEST(PeakCheck, ARankSixPercentOverItsPredictionFailsAndIsNamed) {
  // Rank 0 exact, rank 1 106 against 100: |106 - 100| / 100 = 6% > 5%.
  std::vector<double> measured{200, 106}, predicted{200, 100};
  PeakCheck c = check_peaks(measured, predicted);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.worst_rank, 1);
  EXPECT_DOUBLE_EQ(c.error, 0.06);
  EXPECT_EQ(describe_worst(c).substr(0, 6), "rank 1");
  EXPECT_NE(describe_worst(c).find("measured 0.000 MiB (106 B), predicted 0.000 MiB (100 B): +6.00%, tolerance 5%"), std::string::npos) << describe_worst(c);
}

TEST(PeakCheck, SixPercentUnderFailsToo) {
  std::vector<double> measured{94}, predicted{100};
  EXPECT_FALSE(check_peaks(measured, predicted).ok);
}

TEST(PeakCheck, FourPercentOffOnEveryRankPasses) {
  // 4% and 3% off: the worst is rank 0 at 4%.
  std::vector<double> measured{104, 97}, predicted{100, 100};
  PeakCheck c = check_peaks(measured, predicted);
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(c.worst_rank, 0);
  EXPECT_NEAR(c.error, 0.04, 1e-12);
}

TEST(PeakCheck, EachRankIsHeldToItsOwnPrediction) {
  // Rank 1 matches rank 0's prediction but is 50% over its own.
  std::vector<double> measured{300, 300}, predicted{300, 200};
  PeakCheck c = check_peaks(measured, predicted);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.worst_rank, 1);
  EXPECT_DOUBLE_EQ(c.error, 0.5);
}

TEST(PeakCheck, NothingPredictedAndSomethingHeldFails) {
  std::vector<double> measured{1}, predicted{0};
  EXPECT_FALSE(check_peaks(measured, predicted).ok);
  EXPECT_EQ(peak_error(0, 0), 0);
}

}  // namespace
}  // namespace autopar
