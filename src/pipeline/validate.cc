#include "pipeline/validate.h"

#include <fmt/format.h>

#include <map>
#include <tuple>

namespace autopar::pipeline {
namespace {

struct Where {
  RankIdx rank = -1;
  int32_t position = -1;
};

std::string where(const Where& w, const Action& a) {
  return fmt::format("rank {} position {} ({})", w.rank, w.position, to_string(a));
}

using Key = std::tuple<StageIdx, ActionKind, MicrobatchIdx>;

// Finds each action's place, rejecting duplicates and misplaced actions.
Expected<std::map<Key, Where>> index_actions(const Schedule& s, bool allow_comm) {
  std::map<Key, Where> seen;
  for (RankIdx r = 0; r < s.num_ranks; ++r) {
    const auto& actions = s.ranks[static_cast<size_t>(r)];
    for (int32_t i = 0; i < static_cast<int32_t>(actions.size()); ++i) {
      const Action& a = actions[static_cast<size_t>(i)];
      Where w{r, i};
      if (a.stage < 0 || a.stage >= s.num_stages || a.microbatch < 0 ||
          a.microbatch >= s.num_microbatches) {
        return make_error("{}: stage or microbatch out of range ({} stages, {} microbatches)",
                          where(w, a), s.num_stages, s.num_microbatches);
      }
      if (!allow_comm && !is_compute(a.kind)) {
        return make_error("{}: a compute-only schedule holds F, B, I and W actions only",
                          where(w, a));
      }
      RankIdx owner = s.stage_to_rank[static_cast<size_t>(a.stage)];
      if (owner != r) {
        return make_error("{}: stage {} runs on rank {}", where(w, a), a.stage, owner);
      }
      auto [it, inserted] = seen.emplace(Key{a.stage, a.kind, a.microbatch}, w);
      if (!inserted) {
        return make_error("{}: repeats {} at position {}", where(w, a), to_string(a),
                          it->second.position);
      }
    }
  }
  return seen;
}

const Where* find(const std::map<Key, Where>& seen, StageIdx s, ActionKind k, MicrobatchIdx mb) {
  auto it = seen.find(Key{s, k, mb});
  return it == seen.end() ? nullptr : &it->second;
}

// Exactly one F, and either B or (I and W); F before B/I before W.
Status check_compute(const std::map<Key, Where>& seen, StageIdx s, MicrobatchIdx mb) {
  const Where* f = find(seen, s, ActionKind::kF, mb);
  const Where* b = find(seen, s, ActionKind::kB, mb);
  const Where* i = find(seen, s, ActionKind::kI, mb);
  const Where* w = find(seen, s, ActionKind::kW, mb);
  Action fa{s, ActionKind::kF, mb};
  if (!f) return make_error("stage {} microbatch {} has no forward ({})", s, mb, to_string(fa));
  if (b && (i || w)) {
    const Where* split = i ? i : w;
    return make_error(
        "{}: stage {} microbatch {} has both a full backward and a split one "
        "({}); use B, or I and W",
        where(*b, {s, ActionKind::kB, mb}), s, mb,
        where(*split, {s, i ? ActionKind::kI : ActionKind::kW, mb}));
  }
  if (!b && !i && !w) {
    return make_error("stage {} microbatch {} has no backward (expected {}B{} or {}I{} and {}W{})",
                      s, mb, s, mb, s, mb, s, mb);
  }
  if (!b && (!i || !w)) {
    return make_error("stage {} microbatch {} has {} but not {}", s, mb,
                      to_string({s, i ? ActionKind::kI : ActionKind::kW, mb}),
                      to_string({s, i ? ActionKind::kW : ActionKind::kI, mb}));
  }
  const Where* back = b ? b : i;
  Action back_a{s, b ? ActionKind::kB : ActionKind::kI, mb};
  if (back->position < f->position) {
    return make_error("{}: comes before its forward {} at position {}", where(*back, back_a),
                      to_string(fa), f->position);
  }
  if (w && w->position < i->position) {
    return make_error("{}: comes before {} at position {}", where(*w, {s, ActionKind::kW, mb}),
                      to_string(back_a), i->position);
  }
  return ok_status();
}

// Where the producer and consumer stages sit on different ranks, the message
// must be sent after it is computed and received before it is used.
Status check_messages(const Schedule& sch, const std::map<Key, Where>& seen, StageIdx s,
                      MicrobatchIdx mb) {
  if (s + 1 >= sch.num_stages) return ok_status();
  bool crosses =
      sch.stage_to_rank[static_cast<size_t>(s)] != sch.stage_to_rank[static_cast<size_t>(s + 1)];
  struct Pair {
    StageIdx stage;
    ActionKind kind;
  };
  const Pair pairs[] = {{s, ActionKind::kSendF},
                        {s + 1, ActionKind::kRecvF},
                        {s + 1, ActionKind::kSendB},
                        {s, ActionKind::kRecvB}};
  for (const Pair& p : pairs) {
    const Where* w = find(seen, p.stage, p.kind, mb);
    Action a{p.stage, p.kind, mb};
    if (crosses && !w) {
      return make_error("stages {} and {} are on different ranks but {} is missing", s, s + 1,
                        to_string(a));
    }
    if (!crosses && w) {
      return make_error("{}: stages {} and {} share a rank and hand off directly; no message",
                        where(*w, a), s, s + 1);
    }
  }
  return ok_status();
}

}  // namespace

Status validate_schedule(const Schedule& s, bool allow_communication) {
  if (static_cast<int32_t>(s.ranks.size()) != s.num_ranks ||
      static_cast<int32_t>(s.stage_to_rank.size()) != s.num_stages) {
    return make_error(
        "schedule sizes disagree: {} ranks declared, {} action lists; {} stages "
        "declared, {} mapped",
        s.num_ranks, s.ranks.size(), s.num_stages, s.stage_to_rank.size());
  }
  Expected<std::map<Key, Where>> seen = index_actions(s, allow_communication);
  if (!seen) return seen.error();
  bool has_comm = false;
  for (const auto& [key, w] : *seen) has_comm |= !is_compute(std::get<1>(key));
  for (StageIdx st = 0; st < s.num_stages; ++st) {
    for (MicrobatchIdx mb = 0; mb < s.num_microbatches; ++mb) {
      if (Status ok = check_compute(*seen, st, mb); !ok) return ok;
      if (has_comm) {
        if (Status ok = check_messages(s, *seen, st, mb); !ok) return ok;
      }
    }
  }
  return ok_status();
}

}  // namespace autopar::pipeline
