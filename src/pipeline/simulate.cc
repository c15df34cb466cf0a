#include "pipeline/simulate.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <optional>

namespace autopar::pipeline {
namespace {

constexpr int kKinds = 8;
constexpr double kNotDone = -1;

// Completion times by (stage, kind, microbatch); for SEND the arrival time.
class Done {
 public:
  Done(int32_t stages, int32_t microbatches)
      : microbatches_(microbatches),
        times_(static_cast<size_t>(stages) * kKinds * static_cast<size_t>(microbatches), kNotDone) {
  }
  double& at(const Action& a) {
    return times_[(static_cast<size_t>(a.stage) * kKinds + static_cast<size_t>(a.kind)) *
                      static_cast<size_t>(microbatches_) +
                  static_cast<size_t>(a.microbatch)];
  }

 private:
  int32_t microbatches_;
  std::vector<double> times_;
};

// What an action waits for: a list of alternatives where any one suffices
// (the input gradient comes from B or from I), all lists must be satisfied.
using Alternatives = std::vector<Action>;

std::vector<Alternatives> dependencies(const Schedule& s, RankIdx r, const Action& a) {
  StageIdx st = a.stage;
  MicrobatchIdx mb = a.microbatch;
  auto rank_of = [&](StageIdx x) { return s.stage_to_rank[static_cast<size_t>(x)]; };
  auto grad_of = [&](StageIdx x) -> Alternatives {
    return {{x, ActionKind::kB, mb}, {x, ActionKind::kI, mb}};
  };
  std::vector<Alternatives> deps;
  switch (a.kind) {
    case ActionKind::kF:
      if (st > 0) {
        deps.push_back({rank_of(st - 1) == r ? Action{st - 1, ActionKind::kF, mb}
                                             : Action{st, ActionKind::kRecvF, mb}});
      }
      break;
    case ActionKind::kB:
    case ActionKind::kI:
      deps.push_back({{st, ActionKind::kF, mb}});
      if (st + 1 < s.num_stages) {
        deps.push_back(rank_of(st + 1) == r ? grad_of(st + 1)
                                            : Alternatives{{st, ActionKind::kRecvB, mb}});
      }
      break;
    case ActionKind::kW:
      deps.push_back({{st, ActionKind::kI, mb}});
      break;
    case ActionKind::kSendF:
      deps.push_back({{st, ActionKind::kF, mb}});
      break;
    case ActionKind::kSendB:
      deps.push_back(grad_of(st));
      break;
    case ActionKind::kRecvF:
      deps.push_back({{st - 1, ActionKind::kSendF, mb}});
      break;
    case ActionKind::kRecvB:
      deps.push_back({{st + 1, ActionKind::kSendB, mb}});
      break;
  }
  return deps;
}

// The time all dependencies are met, or nullopt while one is not done; `missing`
// gets the first unmet one.
std::optional<double> ready_time(const std::vector<Alternatives>& deps, Done& done,
                                 Action* missing) {
  double t = 0;
  for (const Alternatives& alt : deps) {
    double best = kNotDone;
    for (const Action& d : alt) best = std::max(best, done.at(d));
    if (best == kNotDone) {
      if (missing) *missing = alt.front();
      return std::nullopt;
    }
    t = std::max(t, best);
  }
  return t;
}

std::string describe_wait(const Schedule& s, RankIdx r, int32_t pos, const Action& a,
                          const Action& missing) {
  RankIdx owner = missing.stage >= 0 && missing.stage < s.num_stages
                      ? s.stage_to_rank[static_cast<size_t>(missing.stage)]
                      : -1;
  return fmt::format("rank {} position {} ({}) waits for {} on rank {}", r, pos, to_string(a),
                     to_string(missing), owner);
}

}  // namespace

double Durations::of(ActionKind kind) const {
  switch (kind) {
    case ActionKind::kF:
      return f;
    case ActionKind::kB:
      return b;
    case ActionKind::kI:
      return i;
    case ActionKind::kW:
      return w;
    default:
      return 0;
  }
}

Expected<Durations> parse_durations(std::string_view text) {
  Durations d;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? "" : text.substr(comma + 1);
    size_t eq = item.find('=');
    double value = -1;
    std::string_view key = item.substr(0, eq);
    if (eq != std::string_view::npos) {
      std::string_view num = item.substr(eq + 1);
      auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), value);
      if (ec != std::errc() || ptr != num.data() + num.size()) value = -1;
    }
    double* slot = key == "F"      ? &d.f
                   : key == "B"    ? &d.b
                   : key == "I"    ? &d.i
                   : key == "W"    ? &d.w
                   : key == "comm" ? &d.comm
                                   : nullptr;
    if (!slot || value < 0) {
      return make_error(
          "bad duration \"{}\": expected KEY=SECONDS with KEY one of F, B, I, W, "
          "comm and a non-negative number, e.g. F=1,B=2,comm=0.1",
          item);
    }
    *slot = value;
  }
  return d;
}

double SimulationResult::bubble_fraction() const {
  if (makespan <= 0 || busy.empty()) return 0;
  double total_busy = 0;
  for (double b : busy) total_busy += b;
  double capacity = makespan * static_cast<double>(busy.size());
  return (capacity - total_busy) / capacity;
}

SimulationResult simulate(const Schedule& s, const Durations& durations) {
  return simulate_stages(s, std::vector<Durations>(static_cast<size_t>(std::max(s.num_stages, 1)), durations));
}

SimulationResult simulate_stages(const Schedule& s, const std::vector<Durations>& per_stage) {
  SimulationResult result;
  if (per_stage.size() < static_cast<size_t>(s.num_stages)) {  // nothing to time some stages by
    result.deadlocked = true;
    result.deadlock = fmt::format("durations for {} stages given, the schedule has {}\n", per_stage.size(),
                                  s.num_stages);
    return result;
  }
  size_t p = static_cast<size_t>(s.num_ranks);
  result.busy.assign(p, 0);
  result.peak_in_flight.assign(p, 0);
  result.timeline.resize(p);
  Done done(s.num_stages, s.num_microbatches);
  std::vector<size_t> pc(p, 0);
  std::vector<double> free_at(p, 0);
  std::vector<int32_t> in_flight(p, 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t r = 0; r < p; ++r) {
      const auto& actions = s.ranks[r];
      while (pc[r] < actions.size()) {
        const Action& a = actions[pc[r]];
        std::optional<double> ready =
            ready_time(dependencies(s, static_cast<RankIdx>(r), a), done, nullptr);
        if (!ready) break;
        const Durations& durations = per_stage[static_cast<size_t>(a.stage)];
        double start = std::max(free_at[r], *ready), end = start + durations.of(a.kind);
        free_at[r] = end;
        result.busy[r] += end - start;
        done.at(a) = a.kind == ActionKind::kSendF || a.kind == ActionKind::kSendB
                         ? end + durations.comm
                         : end;
        if (a.kind == ActionKind::kF) ++in_flight[r];
        if (makes_input_grad(a.kind)) --in_flight[r];
        result.peak_in_flight[r] = std::max(result.peak_in_flight[r], in_flight[r]);
        result.timeline[r].push_back({a, start, end});
        result.makespan = std::max(result.makespan, end);
        ++pc[r];
        progress = true;
      }
    }
  }
  for (size_t r = 0; r < p; ++r) {
    if (pc[r] == s.ranks[r].size()) continue;
    const Action& a = s.ranks[r][pc[r]];
    Action missing;
    (void)ready_time(dependencies(s, static_cast<RankIdx>(r), a), done, &missing);
    result.deadlocked = true;
    result.deadlock +=
        describe_wait(s, static_cast<RankIdx>(r), static_cast<int32_t>(pc[r]), a, missing) + "\n";
  }
  return result;
}

std::string to_chrome_trace(const SimulationResult& result) {
  constexpr double kUnitToMicros = 1000;  // one duration unit shows as 1 ms
  nlohmann::json events = nlohmann::json::array();
  for (size_t r = 0; r < result.timeline.size(); ++r) {
    events.push_back({{"ph", "M"},
                      {"name", "thread_name"},
                      {"pid", 0},
                      {"tid", r},
                      {"args", {{"name", fmt::format("rank {}", r)}}}});
    for (const TimedAction& t : result.timeline[r]) {
      if (!is_compute(t.action.kind) && t.end == t.start) {
        events.push_back({{"ph", "i"},
                          {"s", "t"},
                          {"name", to_string(t.action)},
                          {"pid", 0},
                          {"tid", r},
                          {"ts", t.start * kUnitToMicros}});
        continue;
      }
      events.push_back({{"ph", "X"},
                        {"name", to_string(t.action)},
                        {"cat", std::string(action_kind_name(t.action.kind))},
                        {"pid", 0},
                        {"tid", r},
                        {"ts", t.start * kUnitToMicros},
                        {"dur", (t.end - t.start) * kUnitToMicros}});
    }
  }
  return nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump(1) + "\n";
}

std::string summary(const SimulationResult& result) {
  if (result.deadlocked) return "deadlock:\n" + result.deadlock;
  double total_busy = 0;
  for (double b : result.busy) total_busy += b;
  double capacity = result.makespan * static_cast<double>(result.busy.size());
  return fmt::format(
      "makespan {:g}, bubble {:.1f}% (idle {:g} of {:g}), peak in flight per "
      "rank {}\n",
      result.makespan, 100 * result.bubble_fraction(), capacity - total_busy, capacity,
      fmt::join(result.peak_in_flight, " "));
}

}  // namespace autopar::pipeline
