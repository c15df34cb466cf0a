#include "pipeline/schedule.h"

#include <gtest/gtest.h>

#include "pipeline/lower.h"
#include "pipeline/validate.h"

namespace autopar::pipeline {
namespace {

Schedule make(ScheduleKind kind, int32_t p, int32_t m, int32_t v = 1) {
  Expected<Schedule> s = make_schedule({kind, p, m, v});
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return *s;
}

TEST(Action, EveryKindPrintsAndParsesBack) {
  for (const char* text :
       {"2F0", "13B7", "0I2", "0W2", "2SEND_F0", "3RECV_F0", "3SEND_B1", "2RECV_B11"}) {
    Expected<Action> a = parse_action(text);
    ASSERT_TRUE(a.ok()) << text;
    EXPECT_EQ(to_string(*a), text);
  }
  Expected<Action> a = parse_action("2F0");
  EXPECT_EQ(a->stage, 2);
  EXPECT_EQ(a->kind, ActionKind::kF);
  EXPECT_EQ(a->microbatch, 0);
}

TEST(Action, MalformedTextIsAnErrorQuotingIt) {
  for (const char* text : {"F0", "2X0", "2F", "2F0x", "-1F0", ""}) {
    Expected<Action> a = parse_action(text);
    ASSERT_FALSE(a.ok()) << text;
    EXPECT_NE(a.error().message.find(std::string("\"") + text + "\""), std::string::npos);
  }
}

TEST(Schedule, TextAndCsvRoundTripForEveryBuiltIn) {
  for (Schedule s :
       {make(ScheduleKind::kGPipe, 4, 8), make(ScheduleKind::k1F1B, 4, 8),
        make(ScheduleKind::kInterleaved1F1B, 4, 8, 2), make(ScheduleKind::kZBH1, 4, 8)}) {
    Expected<Schedule> from_text = parse_schedule_text(to_text(s));
    ASSERT_TRUE(from_text.ok()) << from_text.error().message;
    EXPECT_EQ(*from_text, s);
    Expected<Schedule> from_csv = parse_schedule_csv(to_csv(s));
    ASSERT_TRUE(from_csv.ok()) << from_csv.error().message;
    EXPECT_EQ(*from_csv, s);
    Schedule lowered = lower_communication(s);
    Expected<Schedule> lowered_back = parse_schedule_csv(to_csv(lowered));
    ASSERT_TRUE(lowered_back.ok());
    EXPECT_EQ(*lowered_back, lowered);
  }
}

TEST(Schedule, OneFOneBOnTwoRanksPrintsWarmupSteadyAndCooldown) {
  // Rank 0 warms up with p-1-r = 1 forward; rank 1 (last) alternates at once.
  EXPECT_EQ(to_text(make(ScheduleKind::k1F1B, 2, 3)),
            "# ranks=2 stages=2 microbatches=3\n"
            "rank 0: 0F0 0F1 0B0 0F2 0B1 0B2\n"
            "rank 1: 1F0 1B0 1F1 1B1 1F2 1B2\n");
}

TEST(Schedule, VMappingTurnsBackOnTheLastRank) {
  EXPECT_EQ(map_stages(4, 2, StageMapping::kV), (std::vector<RankIdx>{0, 1, 2, 3, 3, 2, 1, 0}));
  EXPECT_EQ(map_stages(4, 2, StageMapping::kLoop), (std::vector<RankIdx>{0, 1, 2, 3, 0, 1, 2, 3}));
}

TEST(Schedule, CsvStageOnTwoRanksIsAnErrorNamingBothPlaces) {
  Expected<Schedule> s = parse_schedule_csv("0F0,0B0\n1F0,0F1\n");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "stage 0 appears on two ranks: rank 0 position 0 (0F0) and rank 1 position 1 (0F1); "
            "a stage runs on one rank");
}

TEST(Schedule, CsvBadCellNamesLineRankAndPosition) {
  Expected<Schedule> s = parse_schedule_csv("0F0,0B0\n1F0,1Q0\n");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message.rfind("schedule CSV line 2: rank 1 position 1: bad pipeline action "
                                    "\"1Q0\"",
                                    0),
            0u)
      << s.error().message;
}

// Found by fuzz/schedule_fuzz.cc: an empty CSV row is skipped, so an idle rank
// printed by to_csv did not read back.
TEST(Schedule, ARankWithoutActionsIsRefusedInBothFormats) {
  Expected<Schedule> csv = parse_schedule_csv("0F0,0B0\n,\n");
  ASSERT_FALSE(csv.ok());
  EXPECT_EQ(csv.error().message,
            "schedule CSV line 2: rank 1 has no actions; every rank runs at least one");
  Expected<Schedule> text = parse_schedule_text("rank 0: 0F0 0B0\nrank 1:\n");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().message,
            "schedule text line 2: rank 1 has no actions; every rank runs at least one");
}

// Found by fuzz/schedule_fuzz.cc: stage 88888880 sized tables of 88888881
// entries (out of memory). Two actions allow at most 2 stages and microbatches.
TEST(Schedule, AnIndexBeyondTheActionCountIsRefusedBeforeSizingTables) {
  Expected<Schedule> s = parse_schedule_csv("0F0,88888880B0\n");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "rank 0 position 1 (88888880B0): stage or microbatch out of range: 2 actions hold at "
            "most 2 stages and 2 microbatches, numbered from 0 without gaps");
  EXPECT_FALSE(parse_schedule_text("rank 0: 0F0 0B7\n").ok());
}

TEST(Validate, BackwardBeforeForwardPointsAtTheBackward) {
  Expected<Schedule> s = parse_schedule_text("rank 0: 0B0 0F0\n");
  ASSERT_TRUE(s.ok());
  Status v = validate_schedule(*s);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().message,
            "rank 0 position 0 (0B0): comes before its forward 0F0 at position 1");
}

TEST(Validate, WeightGradBeforeInputGradPointsAtTheW) {
  Expected<Schedule> s = parse_schedule_text("rank 0: 0F0 0W0 0I0\n");
  Status v = validate_schedule(*s);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().message, "rank 0 position 1 (0W0): comes before 0I0 at position 2");
}

TEST(Validate, MissingAndRepeatedActionsAreNamed) {
  Expected<Schedule> missing = parse_schedule_text("rank 0: 0F0 0F1 0B0\n");
  EXPECT_EQ(validate_schedule(*missing).error().message,
            "stage 0 microbatch 1 has no backward (expected 0B1 or 0I1 and 0W1)");
  Expected<Schedule> repeated = parse_schedule_text("rank 0: 0F0 0F0 0B0\n");
  EXPECT_EQ(validate_schedule(*repeated).error().message,
            "rank 0 position 1 (0F0): repeats 0F0 at position 0");
  Expected<Schedule> half = parse_schedule_text("rank 0: 0F0 0I0\n");
  EXPECT_EQ(validate_schedule(*half).error().message, "stage 0 microbatch 0 has 0I0 but not 0W0");
}

TEST(Validate, StageOnTheWrongRankIsNamed) {
  Schedule s = make(ScheduleKind::k1F1B, 2, 2);
  s.stage_to_rank = {1, 0};  // as if the mapping said otherwise
  EXPECT_EQ(validate_schedule(s).error().message,
            "rank 0 position 0 (0F0): stage 0 runs on rank 1");
}

TEST(Validate, LoweredScheduleWithoutAReceiveIsRejected) {
  Schedule lowered = lower_communication(make(ScheduleKind::kGPipe, 2, 1));
  // rank 1: 1RECV_F0 1F0 1B0 1SEND_B0 -> drop the receive
  lowered.ranks[1].erase(lowered.ranks[1].begin());
  Status v = validate_schedule(lowered, /*allow_communication=*/true);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().message, "stages 0 and 1 are on different ranks but 1RECV_F0 is missing");
}

}  // namespace
}  // namespace autopar::pipeline
