// Send release points by vector clocks over a lowered schedule (see send_release.h).
#include "pipeline_runtime/send_release.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace autopar::pipeline {
namespace {

using VectorClock = std::vector<int32_t>;  // per rank: how many of its actions are known done

// A message: (backward, receiving stage, microbatch).
using MessageKey = std::tuple<bool, StageIdx, MicrobatchIdx>;

bool is_send(ActionKind k) { return k == ActionKind::kSendF || k == ActionKind::kSendB; }
bool is_recv(ActionKind k) { return k == ActionKind::kRecvF || k == ActionKind::kRecvB; }

MessageKey message_of(const Action& a) {
  switch (a.kind) {
    case ActionKind::kSendF: return {false, a.stage + 1, a.microbatch};
    case ActionKind::kSendB: return {true, a.stage - 1, a.microbatch};
    case ActionKind::kRecvB: return {true, a.stage, a.microbatch};
    default: return {false, a.stage, a.microbatch};
  }
}

// Every action's vector clock after it ran, by running the ranks in any order
// a receive allows (the schedule's causal order).
Expected<std::vector<std::vector<VectorClock>>> clocks_after(const Schedule& s) {
  const auto p = static_cast<size_t>(s.num_ranks);
  std::vector<std::vector<VectorClock>> after(p);
  std::vector<VectorClock> clock(p, VectorClock(p, 0));
  std::vector<size_t> next(p, 0);
  std::map<MessageKey, VectorClock> sent;
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t r = 0; r < p; ++r) {
      const std::vector<Action>& actions = s.ranks[r];
      for (; next[r] < actions.size(); ++next[r], progress = true) {
        const Action& a = actions[next[r]];
        if (is_recv(a.kind)) {
          auto it = sent.find(message_of(a));
          if (it == sent.end()) break;  // not sent yet: wait
          for (size_t q = 0; q < p; ++q) clock[r][q] = std::max(clock[r][q], it->second[q]);
        }
        clock[r][r] = static_cast<int32_t>(next[r]) + 1;
        if (is_send(a.kind)) sent[message_of(a)] = clock[r];
        after[r].push_back(clock[r]);
      }
    }
  }
  for (size_t r = 0; r < p; ++r) {
    if (next[r] < s.ranks[r].size()) {
      return make_error("send release: rank {} is stuck at position {} ({})", r, next[r],
                        to_string(s.ranks[r][next[r]]));
    }
  }
  return after;
}

}  // namespace

Expected<std::vector<std::vector<int32_t>>> send_release_points(const Schedule& s) {
  Expected<std::vector<std::vector<VectorClock>>> after = clocks_after(s);
  if (!after) return after.error();
  std::map<MessageKey, std::pair<size_t, int32_t>> received;  // message -> (rank, index)
  for (size_t r = 0; r < s.ranks.size(); ++r) {
    for (size_t i = 0; i < s.ranks[r].size(); ++i) {
      const Action& a = s.ranks[r][i];
      if (is_recv(a.kind)) received[message_of(a)] = {r, static_cast<int32_t>(i)};
    }
  }
  std::vector<std::vector<int32_t>> release(s.ranks.size());
  for (size_t r = 0; r < s.ranks.size(); ++r) {
    const std::vector<Action>& actions = s.ranks[r];
    release[r].assign(actions.size(), -1);
    for (size_t i = 0; i < actions.size(); ++i) {
      if (!is_send(actions[i].kind)) continue;
      auto it = received.find(message_of(actions[i]));
      if (it == received.end()) {
        return make_error("send release: rank {} position {} ({}) has no matching receive", r, i,
                          to_string(actions[i]));
      }
      const auto [to, recv_index] = it->second;
      int32_t k = static_cast<int32_t>(i) + 1;
      const int32_t n = static_cast<int32_t>(actions.size());
      while (k < n && (*after)[r][static_cast<size_t>(k)][to] <= recv_index) ++k;
      release[r][i] = k;  // == n: at the end of the step
    }
  }
  return release;
}

}  // namespace autopar::pipeline
