// Schedule printing, parsing and stage mapping. Generators are in schedule_gen.cc.
#include "pipeline/schedule.h"

#include <fmt/format.h>

#include <algorithm>

namespace autopar::pipeline {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(sep, start);
    if (end == std::string_view::npos) end = s.size();
    parts.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

// Stages 0..S-1 each need an action, and so does every microbatch, so no
// index reaches the action count: checked before S and M size any table.
Status check_indices(const std::vector<std::vector<Action>>& ranks) {
  int64_t count = 0;
  for (const auto& actions : ranks) count += static_cast<int64_t>(actions.size());
  for (size_t r = 0; r < ranks.size(); ++r) {
    for (size_t i = 0; i < ranks[r].size(); ++i) {
      const Action& a = ranks[r][i];
      if (a.stage >= count || a.microbatch >= count) {
        return make_error("rank {} position {} ({}): stage or microbatch out of range: {} actions "
                          "hold at most {} stages and {} microbatches, numbered from 0 without gaps",
                          r, i, to_string(a), count, count, count);
      }
    }
  }
  return ok_status();
}

// Fills counts and the stage-to-rank mapping from the actions.
Expected<Schedule> finish(std::vector<std::vector<Action>> ranks) {
  if (Status s = check_indices(ranks); !s) return s.error();
  Schedule schedule;
  schedule.num_ranks = static_cast<int32_t>(ranks.size());
  for (const auto& actions : ranks) {
    for (const Action& a : actions) {
      schedule.num_stages = std::max(schedule.num_stages, a.stage + 1);
      schedule.num_microbatches = std::max(schedule.num_microbatches, a.microbatch + 1);
    }
  }
  schedule.stage_to_rank.assign(static_cast<size_t>(schedule.num_stages), -1);
  std::vector<std::string> first_seen(static_cast<size_t>(schedule.num_stages));
  for (RankIdx r = 0; r < schedule.num_ranks; ++r) {
    const auto& actions = ranks[static_cast<size_t>(r)];
    for (size_t i = 0; i < actions.size(); ++i) {
      const Action& a = actions[i];
      RankIdx& owner = schedule.stage_to_rank[static_cast<size_t>(a.stage)];
      std::string where = fmt::format("rank {} position {} ({})", r, i, to_string(a));
      if (owner == -1) {
        owner = r;
        first_seen[static_cast<size_t>(a.stage)] = where;
      } else if (owner != r) {
        return make_error("stage {} appears on two ranks: {} and {}; a stage runs on one rank",
                          a.stage, first_seen[static_cast<size_t>(a.stage)], where);
      }
    }
  }
  for (StageIdx s = 0; s < schedule.num_stages; ++s) {
    if (schedule.stage_to_rank[static_cast<size_t>(s)] == -1) {
      return make_error("stage {} has no actions on any rank (stages 0..{} are used)", s,
                        schedule.num_stages - 1);
    }
  }
  schedule.ranks = std::move(ranks);
  return schedule;
}

Expected<std::vector<Action>> parse_cells(const std::vector<std::string_view>& cells, int rank) {
  std::vector<Action> actions;
  for (std::string_view cell : cells) {
    cell = trim(cell);
    if (cell.empty()) continue;
    Expected<Action> a = parse_action(cell);
    if (!a) {
      return make_error_like(a.error(), "rank {} position {}: {}", rank, actions.size(), a.error().message);
    }
    actions.push_back(*a);
  }
  // An idle rank has no printed form in CSV (an empty row is skipped), and
  // holds no stage: refused in both formats.
  if (actions.empty()) return make_error("rank {} has no actions; every rank runs at least one", rank);
  return actions;
}

}  // namespace

std::vector<StageIdx> Schedule::stages_of(RankIdx rank) const {
  std::vector<StageIdx> stages;
  for (StageIdx s = 0; s < num_stages; ++s) {
    if (stage_to_rank[static_cast<size_t>(s)] == rank) stages.push_back(s);
  }
  return stages;
}

std::vector<RankIdx> map_stages(int32_t num_ranks, int32_t stages_per_rank, StageMapping mapping) {
  std::vector<RankIdx> ranks;
  for (int32_t s = 0; s < num_ranks * stages_per_rank; ++s) {
    int32_t round = s / num_ranks, pos = s % num_ranks;
    bool backwards = mapping == StageMapping::kV && round % 2 == 1;
    ranks.push_back(backwards ? num_ranks - 1 - pos : pos);
  }
  return ranks;
}

std::string to_text(const Schedule& schedule) {
  std::string out = fmt::format("# ranks={} stages={} microbatches={}\n", schedule.num_ranks,
                                schedule.num_stages, schedule.num_microbatches);
  for (size_t r = 0; r < schedule.ranks.size(); ++r) {
    out += fmt::format("rank {}:", r);
    for (const Action& a : schedule.ranks[r]) out += " " + to_string(a);
    out += "\n";
  }
  return out;
}

std::string to_csv(const Schedule& schedule) {
  std::string out;
  for (const auto& actions : schedule.ranks) {
    for (size_t i = 0; i < actions.size(); ++i) out += (i ? "," : "") + to_string(actions[i]);
    out += "\n";
  }
  return out;
}

Expected<Schedule> parse_schedule_text(std::string_view text) {
  std::vector<std::vector<Action>> ranks;
  int line_no = 0;
  for (std::string_view line : split(text, '\n')) {
    ++line_no;
    line = trim(line);
    if (line.empty() || line.front() == '#') continue;
    std::string expected = fmt::format("rank {}:", ranks.size());
    if (!line.starts_with(expected)) {
      return make_error("schedule text line {}: expected \"{} ...\", got \"{}\"", line_no, expected,
                        line.substr(0, 40));
    }
    Expected<std::vector<Action>> actions =
        parse_cells(split(line.substr(expected.size()), ' '), static_cast<int>(ranks.size()));
    if (!actions) return make_error_like(actions.error(),
        "schedule text line {}: {}", line_no, actions.error().message);
    ranks.push_back(std::move(*actions));
  }
  if (ranks.empty()) return make_error("schedule text has no \"rank 0: ...\" line");
  return finish(std::move(ranks));
}

Expected<Schedule> parse_schedule_csv(std::string_view text) {
  std::vector<std::vector<Action>> ranks;
  int line_no = 0;
  for (std::string_view line : split(text, '\n')) {
    ++line_no;
    line = trim(line);
    if (line.empty() || line.front() == '#') continue;
    Expected<std::vector<Action>> actions =
        parse_cells(split(line, ','), static_cast<int>(ranks.size()));
    if (!actions) return make_error_like(actions.error(), "schedule CSV line {}: {}", line_no, actions.error().message);
    ranks.push_back(std::move(*actions));
  }
  if (ranks.empty()) return make_error("schedule CSV has no rows (one row per rank expected)");
  return finish(std::move(ranks));
}

}  // namespace autopar::pipeline
