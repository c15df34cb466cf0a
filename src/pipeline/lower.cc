#include "pipeline/lower.h"

namespace autopar::pipeline {

Schedule lower_communication(const Schedule& compute) {
  Schedule out = compute;
  auto rank_of = [&](StageIdx s) { return compute.stage_to_rank[static_cast<size_t>(s)]; };
  int32_t last = compute.num_stages - 1;
  for (RankIdx r = 0; r < compute.num_ranks; ++r) {
    std::vector<Action> lowered;
    for (const Action& a : compute.ranks[static_cast<size_t>(r)]) {
      StageIdx s = a.stage;
      bool prev_remote = s > 0 && rank_of(s - 1) != r;
      bool next_remote = s < last && rank_of(s + 1) != r;
      if (a.kind == ActionKind::kF && prev_remote) {
        lowered.push_back({s, ActionKind::kRecvF, a.microbatch});
      }
      if (makes_input_grad(a.kind) && next_remote) {
        lowered.push_back({s, ActionKind::kRecvB, a.microbatch});
      }
      lowered.push_back(a);
      if (a.kind == ActionKind::kF && next_remote) {
        lowered.push_back({s, ActionKind::kSendF, a.microbatch});
      }
      if (makes_input_grad(a.kind) && prev_remote) {
        lowered.push_back({s, ActionKind::kSendB, a.microbatch});
      }
    }
    out.ranks[static_cast<size_t>(r)] = std::move(lowered);
  }
  return out;
}

}  // namespace autopar::pipeline
