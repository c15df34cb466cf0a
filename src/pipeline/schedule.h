// Pipeline schedules: for each rank, the ordered list of actions it runs in one
// training step, plus which rank holds each stage.
//
// Built-in generators cover GPipe, 1F1B, Interleaved 1F1B (Megatron-LM's
// virtual pipeline) and the zero-bubble ZB-H1 schedule (backward split into I
// and W). A schedule prints as text (one "rank r: 0F0 0F1 ..." line per rank)
// and as CSV (one row per rank, actions comma-separated); both parse back, so a
// user can write a custom schedule by hand. Generated schedules hold compute
// actions only; lower_communication() (lower.h) adds the sends and receives.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ir/expected.h"
#include "pipeline/action.h"

namespace autopar::pipeline {

enum class ScheduleKind : uint8_t { kGPipe, k1F1B, kInterleaved1F1B, kZBH1 };
// How stages map to ranks when a rank holds several: loop puts stage s on rank
// s mod p (0,1,2,3,0,1,2,3); V goes down then back up (0,1,2,3,3,2,1,0), so the
// turning stages p-1 and p share a rank and hand off without a message.
enum class StageMapping : uint8_t { kLoop, kV };

struct Schedule {
  int32_t num_ranks = 0;
  int32_t num_stages = 0;
  int32_t num_microbatches = 0;
  std::vector<RankIdx> stage_to_rank;      // size num_stages
  std::vector<std::vector<Action>> ranks;  // size num_ranks

  // The stages a rank holds, sorted (not necessarily consecutive: 0, 4, 8).
  std::vector<StageIdx> stages_of(RankIdx rank) const;
  bool operator==(const Schedule&) const = default;
};

struct ScheduleOptions {
  ScheduleKind kind = ScheduleKind::k1F1B;
  int32_t num_ranks = 1;
  int32_t num_microbatches = 1;
  int32_t stages_per_rank = 1;  // > 1 only for interleaved 1F1B
};

// Sorted names: "1f1b", "gpipe", "interleaved-1f1b", "zb-h1".
std::vector<std::string> schedule_kind_names();
Expected<ScheduleKind> parse_schedule_kind(std::string_view name);
std::string_view schedule_kind_name(ScheduleKind kind);

// stage -> rank for num_ranks * stages_per_rank stages.
std::vector<RankIdx> map_stages(int32_t num_ranks, int32_t stages_per_rank, StageMapping mapping);

// Errors name the option and the value that cannot work (e.g. 1F1B-family
// schedules need microbatches >= ranks; interleaved needs microbatches a
// multiple of ranks).
Expected<Schedule> make_schedule(const ScheduleOptions& options);

// "rank 0: 0F0 0F1 0B0 0B1" per line, with a leading "# stages=S microbatches=M" line.
std::string to_text(const Schedule& schedule);
// One row per rank, actions comma-separated ("0F0,0F1,0B0,0B1"), no header.
std::string to_csv(const Schedule& schedule);

// Both readers take any of the action kinds. The stage and microbatch counts
// are one more than the largest indices seen; the stage-to-rank mapping is
// where each stage's actions appear. A stage on two ranks, a bad action or a
// bad line is an error naming the line (rank) and the position.
// Text lines are "rank R: actions..." (R must count up from 0); lines starting
// with '#' and blank lines are skipped. CSV: row r is rank r; empty cells are
// skipped (rows may be ragged); '#' lines are skipped.
Expected<Schedule> parse_schedule_text(std::string_view text);
Expected<Schedule> parse_schedule_csv(std::string_view text);

}  // namespace autopar::pipeline
