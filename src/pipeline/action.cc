#include "pipeline/action.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>

namespace autopar::pipeline {
namespace {

// Longest names first so "SEND_F" is not read as something shorter.
constexpr std::array<std::pair<std::string_view, ActionKind>, 8> kKinds = {{
    {"SEND_F", ActionKind::kSendF},
    {"RECV_F", ActionKind::kRecvF},
    {"SEND_B", ActionKind::kSendB},
    {"RECV_B", ActionKind::kRecvB},
    {"F", ActionKind::kF},
    {"B", ActionKind::kB},
    {"I", ActionKind::kI},
    {"W", ActionKind::kW},
}};

// Reads a non-negative decimal number from the front of text.
bool read_number(std::string_view& text, int32_t& out) {
  size_t n = 0;
  while (n < text.size() && std::isdigit(static_cast<unsigned char>(text[n]))) ++n;
  if (n == 0 || n > 9) return false;
  std::from_chars(text.data(), text.data() + n, out);
  text.remove_prefix(n);
  return true;
}

}  // namespace

std::string_view action_kind_name(ActionKind kind) {
  for (const auto& [name, k] : kKinds) {
    if (k == kind) return name;
  }
  return "?";
}

bool is_compute(ActionKind kind) {
  return kind == ActionKind::kF || kind == ActionKind::kB || kind == ActionKind::kI ||
         kind == ActionKind::kW;
}

std::string to_string(const Action& action) {
  return fmt::format("{}{}{}", action.stage, action_kind_name(action.kind), action.microbatch);
}

Expected<Action> parse_action(std::string_view text) {
  std::string_view rest = text;
  Action action;
  auto bad = [&] {
    return make_error(
        "bad pipeline action \"{}\": expected <stage><KIND><microbatch> with KIND "
        "one of F, B, I, W, SEND_F, RECV_F, SEND_B, RECV_B, e.g. 2F0",
        text);
  };
  if (!read_number(rest, action.stage)) return bad();
  bool found = false;
  for (const auto& [name, kind] : kKinds) {
    if (rest.starts_with(name)) {
      action.kind = kind;
      rest.remove_prefix(name.size());
      found = true;
      break;
    }
  }
  if (!found || !read_number(rest, action.microbatch) || !rest.empty()) return bad();
  return action;
}

}  // namespace autopar::pipeline
