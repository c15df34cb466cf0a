// Built-in schedule generators. Each rank's list holds compute actions only.
//
// With p ranks, m microbatches and v stages per rank (F, B the per-stage
// forward and backward times), the ideal bubbles these reproduce are:
//   GPipe, 1F1B:       (p-1)(F+B) idle per rank, fraction (p-1)/(m+p-1)
//   Interleaved 1F1B:  (p-1)(F+B) idle per rank against v·m·(F+B) of work,
//                      i.e. (p-1)/(v·m) of the ideal time
//   ZB-H1 (F=I=W):     (p-1)(F+I-W) idle per rank, about (p-1)/(3m)
#include <fmt/format.h>

#include <algorithm>

#include "pipeline/schedule.h"

namespace autopar::pipeline {
namespace {

struct KindName {
  std::string_view name;
  ScheduleKind kind;
};
constexpr KindName kKindNames[] = {
    // sorted by name
    {"1f1b", ScheduleKind::k1F1B},
    {"gpipe", ScheduleKind::kGPipe},
    {"interleaved-1f1b", ScheduleKind::kInterleaved1F1B},
    {"zb-h1", ScheduleKind::kZBH1},
};

Action act(StageIdx s, ActionKind k, MicrobatchIdx mb) { return Action{s, k, mb}; }

std::vector<Action> gpipe_rank(RankIdx r, int32_t m) {
  std::vector<Action> out;
  for (int32_t i = 0; i < m; ++i) out.push_back(act(r, ActionKind::kF, i));
  for (int32_t i = 0; i < m; ++i) out.push_back(act(r, ActionKind::kB, i));
  return out;
}

// Warm up with p-1-r forwards so the last rank can start its first backward
// as soon as possible, then alternate one forward and one backward: at most
// p-r microbatches are ever in flight on rank r.
std::vector<Action> one_f_one_b_rank(RankIdx r, int32_t p, int32_t m) {
  std::vector<Action> out;
  int32_t warmup = std::min(p - 1 - r, m);
  for (int32_t i = 0; i < warmup; ++i) out.push_back(act(r, ActionKind::kF, i));
  for (int32_t i = 0; i < m - warmup; ++i) {
    out.push_back(act(r, ActionKind::kF, warmup + i));
    out.push_back(act(r, ActionKind::kB, i));
  }
  for (int32_t i = m - warmup; i < m; ++i) out.push_back(act(r, ActionKind::kB, i));
  return out;
}

// Megatron-LM's interleaved order: microbatches go through the rank's v
// stages in groups of p; backward visits the stages in reverse. The warmup is
// long enough that every forward's input has arrived when it is needed.
std::vector<Action> interleaved_rank(RankIdx r, int32_t p, int32_t m, int32_t v) {
  int32_t total = m * v;
  auto microbatch = [&](int32_t k) { return (k / (p * v)) * p + k % p; };
  auto forward = [&](int32_t k) {
    return act(((k / p) % v) * p + r, ActionKind::kF, microbatch(k));
  };
  auto backward = [&](int32_t k) {
    return act((v - 1 - (k / p) % v) * p + r, ActionKind::kB, microbatch(k));
  };
  int32_t warmup = std::min((p - r - 1) * 2 + (v - 1) * p, total);
  std::vector<Action> out;
  for (int32_t k = 0; k < warmup; ++k) out.push_back(forward(k));
  for (int32_t k = 0; k < total - warmup; ++k) {
    out.push_back(forward(warmup + k));
    out.push_back(backward(k));
  }
  for (int32_t k = total - warmup; k < total; ++k) out.push_back(backward(k));
  return out;
}

// ZB-H1: 1F1B with the backward split into I and W. Rank r keeps up to r W
// passes pending during the steady phase, so the later ranks (which start
// late) push their input gradients upstream sooner, and everyone runs the
// deferred W passes in the cool-down, where 1F1B would wait for gradients.
// Rank 0 never defers; in-flight activations stay those of 1F1B.
std::vector<Action> zb_h1_rank(RankIdx r, int32_t p, int32_t m) {
  std::vector<Action> out;
  int32_t warmup = std::min(p - 1 - r, m);
  int32_t deferred = r;
  int32_t next_w = 0;
  for (int32_t i = 0; i < warmup; ++i) out.push_back(act(r, ActionKind::kF, i));
  for (int32_t i = 0; i < m - warmup; ++i) {
    out.push_back(act(r, ActionKind::kF, warmup + i));
    out.push_back(act(r, ActionKind::kI, i));
    if (i + 1 - next_w > deferred) out.push_back(act(r, ActionKind::kW, next_w++));
  }
  for (int32_t i = m - warmup; i < m; ++i) {
    out.push_back(act(r, ActionKind::kI, i));
    out.push_back(act(r, ActionKind::kW, next_w++));
  }
  while (next_w < m) out.push_back(act(r, ActionKind::kW, next_w++));
  return out;
}

Status check_options(const ScheduleOptions& o) {
  if (o.num_ranks < 1) return make_error("--ranks must be at least 1, got {}", o.num_ranks);
  if (o.num_microbatches < 1) {
    return make_error("--microbatches must be at least 1, got {}", o.num_microbatches);
  }
  if (o.stages_per_rank < 1) {
    return make_error("--stages-per-rank must be at least 1, got {}", o.stages_per_rank);
  }
  bool interleaved = o.kind == ScheduleKind::kInterleaved1F1B;
  if (!interleaved && o.stages_per_rank != 1) {
    return make_error(
        "schedule {} runs one stage per rank; --stages-per-rank {} needs "
        "interleaved-1f1b",
        schedule_kind_name(o.kind), o.stages_per_rank);
  }
  // A 1F1B-style rank warms up with one forward per later rank before its
  // first backward; with fewer microbatches than ranks there is no steady
  // state, and PyTorch's schedules refuse the same.
  if (o.kind != ScheduleKind::kGPipe && o.num_microbatches < o.num_ranks) {
    return make_error("schedule {} needs at least as many microbatches as pipeline ranks: {} microbatches, {} ranks; "
                      "give --microbatches {} or more, or use gpipe",
                      schedule_kind_name(o.kind), o.num_microbatches, o.num_ranks, o.num_ranks);
  }
  if (interleaved && o.num_microbatches % o.num_ranks != 0) {
    return make_error(
        "interleaved-1f1b needs microbatches a multiple of ranks: {} microbatches, "
        "{} ranks",
        o.num_microbatches, o.num_ranks);
  }
  return ok_status();
}

}  // namespace

std::vector<std::string> schedule_kind_names() {
  std::vector<std::string> names;
  for (const KindName& k : kKindNames) names.emplace_back(k.name);
  return names;
}

Expected<ScheduleKind> parse_schedule_kind(std::string_view name) {
  for (const KindName& k : kKindNames) {
    if (k.name == name) return k.kind;
  }
  return make_error("unknown schedule \"{}\"; known: {}", name,
                    fmt::join(schedule_kind_names(), ", "));
}

std::string_view schedule_kind_name(ScheduleKind kind) {
  for (const KindName& k : kKindNames) {
    if (k.kind == kind) return k.name;
  }
  return "?";
}

Expected<Schedule> make_schedule(const ScheduleOptions& o) {
  if (Status s = check_options(o); !s) return s.error();
  Schedule schedule;
  schedule.num_ranks = o.num_ranks;
  schedule.num_stages = o.num_ranks * o.stages_per_rank;
  schedule.num_microbatches = o.num_microbatches;
  schedule.stage_to_rank = map_stages(o.num_ranks, o.stages_per_rank, StageMapping::kLoop);
  int32_t p = o.num_ranks, m = o.num_microbatches;
  for (RankIdx r = 0; r < p; ++r) {
    switch (o.kind) {
      case ScheduleKind::kGPipe:
        schedule.ranks.push_back(gpipe_rank(r, m));
        break;
      case ScheduleKind::k1F1B:
        schedule.ranks.push_back(one_f_one_b_rank(r, p, m));
        break;
      case ScheduleKind::kInterleaved1F1B:
        schedule.ranks.push_back(o.stages_per_rank == 1
                                     ? one_f_one_b_rank(r, p, m)
                                     : interleaved_rank(r, p, m, o.stages_per_rank));
        break;
      case ScheduleKind::kZBH1:
        schedule.ranks.push_back(zb_h1_rank(r, p, m));
        break;
    }
  }
  return schedule;
}

}  // namespace autopar::pipeline
