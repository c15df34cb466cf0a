// Pipeline actions: one step a rank performs in a pipeline schedule.
//
// A compute action is a stage's forward (F), full backward (B), or the two
// halves of a split backward used by zero-bubble schedules: I (gradient with
// respect to the stage's input, which the previous stage waits for) and W
// (gradient with respect to the stage's weights, which nobody waits for).
// Lowering adds communication actions. Every action prints compactly as
// <stage><KIND><microbatch>, as torch.distributed.pipelining does:
//   2F0 (stage 2, forward, microbatch 0), 1B3, 0I2, 0W2,
//   2SEND_F0 (stage 2 sends its output of microbatch 0 to stage 3),
//   3RECV_F0 (stage 3 receives it), 3SEND_B0 (stage 3 sends the input
//   gradient to stage 2), 2RECV_B0 (stage 2 receives it).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ir/expected.h"

namespace autopar::pipeline {

using StageIdx = int32_t;
using RankIdx = int32_t;
using MicrobatchIdx = int32_t;

enum class ActionKind : uint8_t { kF, kB, kI, kW, kSendF, kRecvF, kSendB, kRecvB };

struct Action {
  StageIdx stage = 0;
  ActionKind kind = ActionKind::kF;
  MicrobatchIdx microbatch = 0;

  bool operator==(const Action&) const = default;
};

// "F", "B", "I", "W", "SEND_F", "RECV_F", "SEND_B", "RECV_B".
std::string_view action_kind_name(ActionKind kind);
bool is_compute(ActionKind kind);
// B and I produce the gradient the previous stage needs.
inline bool makes_input_grad(ActionKind kind) {
  return kind == ActionKind::kB || kind == ActionKind::kI;
}

std::string to_string(const Action& action);
// Parses "2F0", "3RECV_F0", ...; errors quote the text.
Expected<Action> parse_action(std::string_view text);

}  // namespace autopar::pipeline
