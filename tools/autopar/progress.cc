#include "progress.h"

#include <unistd.h>

#include <chrono>
#include <cstring>
#include <memory>

#include <fmt/format.h>

namespace autopar {

std::string format_progress(const planner::SolveProgress& p) {
  std::string line = fmt::format("solving {:.1f} s ({})", p.elapsed_s, p.stage);
  if (p.objective) line += fmt::format("  best {:.3f} ms", *p.objective * 1e3);
  if (p.best_bound) line += fmt::format("  bound {:.3f} ms", *p.best_bound * 1e3);
  if (p.gap) line += fmt::format("  gap {:.1f}%", *p.gap * 100);
  return line;
}

planner::ProgressCallback terminal_progress(std::FILE* out, bool quiet, double period_s) {
  if (quiet || out == nullptr || isatty(fileno(out)) == 0) return {};
  struct State {
    std::chrono::steady_clock::time_point last{};
    bool drawn = false;
  };
  auto state = std::make_shared<State>();
  return [out, period_s, state](const planner::SolveProgress& p) {
    if (std::strcmp(p.stage, "done") == 0) {
      if (state->drawn) fmt::print(out, "\r\033[K");  // erase the line
      state->drawn = false;
      std::fflush(out);
      return;
    }
    auto now = std::chrono::steady_clock::now();
    if (state->drawn && std::chrono::duration<double>(now - state->last).count() < period_s) return;
    state->last = now;
    state->drawn = true;
    fmt::print(out, "\r\033[K{}", format_progress(p));
    std::fflush(out);
  };
}

}  // namespace autopar
