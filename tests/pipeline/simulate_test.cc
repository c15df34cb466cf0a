#include "pipeline/simulate.h"

#include <gtest/gtest.h>

#include "pipeline/lower.h"
#include "pipeline/schedule.h"
#include "pipeline/validate.h"

namespace autopar::pipeline {
namespace {

constexpr int32_t kP = 4, kM = 8;

SimulationResult run(ScheduleKind kind, int32_t p, int32_t m, int32_t v, Durations d) {
  Expected<Schedule> s = make_schedule({kind, p, m, v});
  EXPECT_TRUE(s.ok());
  EXPECT_TRUE(validate_schedule(*s).ok());
  SimulationResult r = simulate(lower_communication(*s), d);
  EXPECT_FALSE(r.deadlocked) << r.deadlock;
  return r;
}

TEST(Simulate, GPipeBubbleIsPMinusOneOverMPlusPMinusOne) {
  SimulationResult r = run(ScheduleKind::kGPipe, kP, kM, 1, {});
  // (m+p-1)(F+B) = 11·3 = 33; bubble (p-1)/(m+p-1) = 3/11
  EXPECT_DOUBLE_EQ(r.makespan, 33);
  EXPECT_NEAR(r.bubble_fraction(), 3.0 / 11, 1e-12);
  EXPECT_EQ(r.peak_in_flight, (std::vector<int32_t>{8, 8, 8, 8}));  // GPipe holds all m
}

TEST(Simulate, OneFOneBHasGPipesBubbleWithAtMostPInFlight) {
  SimulationResult r = run(ScheduleKind::k1F1B, kP, kM, 1, {});
  EXPECT_DOUBLE_EQ(r.makespan, 33);
  EXPECT_NEAR(r.bubble_fraction(), 3.0 / 11, 1e-12);
  // rank r holds p-r: warmup p-1-r forwards plus one
  EXPECT_EQ(r.peak_in_flight, (std::vector<int32_t>{4, 3, 2, 1}));
}

TEST(Simulate, InterleavedBubbleIsPMinusOneOverVMOfIdealTime) {
  SimulationResult r = run(ScheduleKind::kInterleaved1F1B, kP, kM, 2, {});
  // work per rank v·m·(F+B) = 2·8·3 = 48; idle per rank (p-1)(F+B) = 9
  // idle/ideal = (p-1)/(v·m) = 3/16; fraction 9/57
  double ideal = 2 * kM * 3;
  EXPECT_DOUBLE_EQ(r.makespan, ideal + 9);
  EXPECT_NEAR((r.makespan - ideal) / ideal, 3.0 / 16, 1e-12);
}

TEST(Simulate, ZeroBubbleH1WithEqualFIWIsAboutPMinusOneOverThreeM) {
  SimulationResult r = run(ScheduleKind::kZBH1, kP, kM, 1, {1, 2, 1, 1, 0});
  // work 3m = 24 per rank; idle (p-1)(F+I-W) = 3 per rank; 3/27 ~ (p-1)/(3m) = 3/24
  EXPECT_DOUBLE_EQ(r.makespan, 27);
  EXPECT_NEAR(r.bubble_fraction(), 3.0 / 27, 1e-12);
  for (int32_t peak : r.peak_in_flight) EXPECT_LE(peak, kP);
}

TEST(Simulate, CommunicationLatencyDelaysTheCrossRankChain) {
  SimulationResult r = run(ScheduleKind::kGPipe, 2, 1, 1, {1, 2, 1, 1, 0.5});
  // F0 [0,1], message 0.5, F1 [1.5,2.5], B1 [2.5,4.5], message 0.5, B0 [5,7]
  EXPECT_DOUBLE_EQ(r.makespan, 7);
}

TEST(Simulate, DeadlockingCustomScheduleReportsEachWaitingRank) {
  // Rank 0 waits for stage 1's gradient of microbatch 0 before its 0F1; rank
  // 1 runs 1F0 and then waits for 1F1's input, which rank 0 never gets to send.
  Expected<Schedule> s = parse_schedule_csv("0F0,0B0,0F1,0B1\n1F0,1F1,1B0,1B1\n");
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(validate_schedule(*s).ok()) << "each F precedes its B on its rank";
  SimulationResult r = simulate(lower_communication(*s), {});
  ASSERT_TRUE(r.deadlocked);
  EXPECT_EQ(r.deadlock,
            "rank 0 position 2 (0RECV_B0) waits for 1SEND_B0 on rank 1\n"
            "rank 1 position 2 (1RECV_F1) waits for 0SEND_F1 on rank 0\n");
}

TEST(Simulate, ForgottenHandOffOnOneRankIsADeadlockNotACrash) {
  // Stages 0 and 1 both on rank 0, but 1F0 is ordered before 0F0.
  Expected<Schedule> s = parse_schedule_text("rank 0: 1F0 0F0 1B0 0B0\n");
  ASSERT_TRUE(s.ok());
  SimulationResult r = simulate(lower_communication(*s), {});
  ASSERT_TRUE(r.deadlocked);
  EXPECT_EQ(r.deadlock, "rank 0 position 0 (1F0) waits for 0F0 on rank 0\n");
}

TEST(Simulate, ChromeTraceHasOneTrackPerRank) {
  SimulationResult r = run(ScheduleKind::k1F1B, 2, 2, 1, {});
  std::string trace = to_chrome_trace(r);
  EXPECT_NE(trace.find("\"rank 0\""), std::string::npos);
  EXPECT_NE(trace.find("\"rank 1\""), std::string::npos);
  EXPECT_NE(trace.find("\"1B1\""), std::string::npos);
}

TEST(Durations, ParsesAnySubsetAndRejectsUnknownKeys) {
  Expected<Durations> d = parse_durations("B=3,comm=0.25");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->f, 1);
  EXPECT_EQ(d->b, 3);
  EXPECT_EQ(d->comm, 0.25);
  EXPECT_EQ(parse_durations("X=1").error().message.substr(0, 18), "bad duration \"X=1\"");
}

}  // namespace
}  // namespace autopar::pipeline
