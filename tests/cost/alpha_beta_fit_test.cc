#include <gtest/gtest.h>

#include <vector>

#include "cost/alpha_beta_fit.h"

namespace autopar {
namespace {

// Samples generated from a known link by the planner's own formulas.
std::vector<CollectiveSample> samples_from(const LinkSpec& link, std::vector<Collective> kinds,
                                           int64_t n) {
  std::vector<CollectiveSample> samples;
  for (Collective c : kinds) {
    for (double bytes : {1e3, 1e5, 1e7}) {
      samples.push_back({c, n, bytes, collective_time(c, n, bytes, link)});
    }
  }
  return samples;
}

TEST(AlphaBetaFit, RecoversTheLinkThatGeneratedExactSamples) {
  LinkSpec truth{/*bandwidth_bytes_per_s=*/2e9, /*latency_s=*/5e-6};
  std::vector<CollectiveSample> samples =
      samples_from(truth, {Collective::kAllReduce, Collective::kAllGather, Collective::kAllToAll}, 4);
  Expected<LinkSpec> fit = fit_link(samples);
  ASSERT_TRUE(fit.ok()) << fit.error().message;
  EXPECT_NEAR(fit->bandwidth_bytes_per_s, 2e9, 2e9 * 1e-9);
  EXPECT_NEAR(fit->latency_s, 5e-6, 5e-6 * 1e-9);
}

TEST(AlphaBetaFit, TwoHandSamplesGiveAlphaAndBandwidth) {
  // all_reduce over 2 devices: t = 2*alpha + B/bw.
  // B = 0 B:   t = 2 us        -> alpha = 1 us
  // B = 1e9 B: t = 2 us + 1 s  -> bw = 1e9 B/s
  std::vector<CollectiveSample> samples = {{Collective::kAllReduce, 2, 1.0, 2e-6 + 1e-9},
                                           {Collective::kAllReduce, 2, 1e9, 2e-6 + 1.0}};
  Expected<LinkSpec> fit = fit_link(samples);
  ASSERT_TRUE(fit.ok()) << fit.error().message;
  EXPECT_NEAR(fit->latency_s, 1e-6, 1e-12);
  EXPECT_NEAR(fit->bandwidth_bytes_per_s, 1e9, 1.0);
}

TEST(AlphaBetaFit, NegativeLatencyIsClampedToZeroAndBandwidthRefit) {
  // Times exactly proportional to bytes minus a little: alpha would come out
  // negative. all_gather over 2: sent = B/2; t = 0.5e6/1e9 - tiny, 0.5e8/1e9.
  std::vector<CollectiveSample> samples = {{Collective::kAllGather, 2, 1e6, 0.5e-3 * 0.9},
                                           {Collective::kAllGather, 2, 1e8, 0.05}};
  Expected<LinkSpec> fit = fit_link(samples);
  ASSERT_TRUE(fit.ok()) << fit.error().message;
  EXPECT_EQ(fit->latency_s, 0);
  EXPECT_GT(fit->bandwidth_bytes_per_s, 0.9e9);
  EXPECT_LT(fit->bandwidth_bytes_per_s, 1.2e9);
}

TEST(AlphaBetaFit, RejectsNonPositiveTimesAndTooFewSamples) {
  std::vector<CollectiveSample> bad_time = {{Collective::kAllReduce, 2, 1e6, 0.0},
                                            {Collective::kAllReduce, 2, 1e7, 1e-2}};
  Expected<LinkSpec> fit = fit_link(bad_time);
  ASSERT_FALSE(fit.ok());
  EXPECT_NE(fit.error().message.find("must be positive"), std::string::npos) << fit.error().message;

  std::vector<CollectiveSample> one = {{Collective::kAllReduce, 2, 1e6, 1e-3}};
  EXPECT_FALSE(fit_link(one).ok());
}

TEST(AlphaBetaFit, TimesThatDoNotGrowWithSizeHaveNoBandwidth) {
  // Shrinking times with growing sizes: the bandwidth slope is negative.
  std::vector<CollectiveSample> samples = {{Collective::kAllReduce, 2, 1e3, 1e-2},
                                           {Collective::kAllReduce, 2, 1e8, 1e-3}};
  Expected<LinkSpec> fit = fit_link(samples);
  ASSERT_FALSE(fit.ok());
  EXPECT_NE(fit.error().message.find("bandwidth"), std::string::npos) << fit.error().message;
}

TEST(AlphaBetaFit, ACollectiveWhoseTimesFellWithSizeGetsARoughFigureAndAWarning) {
  // All-gather grows with size; reduce-scatter's larger call was faster (a
  // loaded machine), so its own fit fails and it falls back, saying so.
  LinkSpec truth{/*bandwidth_bytes_per_s=*/2e9, /*latency_s=*/5e-6};
  std::vector<CollectiveSample> samples = samples_from(truth, {Collective::kAllGather}, 2);
  samples.push_back({Collective::kReduceScatter, 2, 1e3, 1e-2});
  samples.push_back({Collective::kReduceScatter, 2, 1e7, 1e-3});
  Expected<LinkFit> fit = fit_rank_count(2, samples);
  ASSERT_TRUE(fit.ok()) << fit.error().message;
  ASSERT_EQ(fit->per_collective.size(), 2u);
  for (const auto& [name, link] : fit->per_collective) {
    EXPECT_GT(link.bandwidth_bytes_per_s, 0) << name;
  }
  const LinkSpec& gather = fit->per_collective[0].second;
  EXPECT_EQ(fit->per_collective[0].first, "all_gather");
  EXPECT_NEAR(gather.bandwidth_bytes_per_s, 2e9, 2e9 * 1e-9);
  // The rough figure: the largest call's rate and the fastest call's time.
  const LinkSpec& scatter = fit->per_collective[1].second;
  EXPECT_EQ(fit->per_collective[1].first, "reduce_scatter");
  EXPECT_DOUBLE_EQ(scatter.latency_s, 1e-3);
  EXPECT_DOUBLE_EQ(scatter.bandwidth_bytes_per_s,
                   collective_sent_bytes(Collective::kReduceScatter, 2, 1e7) / 1e-3);
  bool warned = false;
  for (const std::string& w : fit->warnings) warned = warned || w.find("2 ranks, reduce_scatter") == 0;
  EXPECT_TRUE(warned);
}

TEST(AlphaBetaFit, NoSampleMovingBytesIsAnErrorNamingTheRankCount) {
  std::vector<CollectiveSample> samples = {{Collective::kAllReduce, 1, 1e6, 1e-3},
                                           {Collective::kAllReduce, 1, 1e7, 1e-2}};
  Expected<LinkFit> fit = fit_rank_count(1, samples);
  ASSERT_FALSE(fit.ok());
  EXPECT_NE(fit.error().message.find("1 ranks"), std::string::npos) << fit.error().message;
}

}  // namespace
}  // namespace autopar
