#include "runtime/spmd_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>

#include <fmt/format.h>

namespace autopar {
namespace {

double mib(double bytes) { return bytes / (1024.0 * 1024.0); }

// Per (collective, mesh dim): calls and B bytes per step, plan vs measured.
struct CommRow {
  double plan_count = 0, plan_bytes = 0, plan_time = 0;
  double count = 0, bytes = 0, time = 0;
};

std::map<std::pair<Collective, MeshDim>, CommRow> comm_rows(const Plan& plan, const Tracer& tracer,
                                                            int64_t steps) {
  std::map<std::pair<Collective, MeshDim>, CommRow> rows;
  for (const CommVolume& v : plan.summary.comm) {
    if (v.collective == Collective::kLocalSlice) continue;  // no communication to measure
    CommRow& r = rows[{v.collective, v.mesh_dim}];
    r.plan_count = v.count;
    r.plan_bytes = v.buffer_bytes;
    r.plan_time = v.time_s;
  }
  for (const auto& [key, t] : tracer.tallies()) {
    CommRow& r = rows[key];
    r.count = static_cast<double>(t.count) / static_cast<double>(steps);
    r.bytes = t.bytes / static_cast<double>(steps);
    r.time = t.time_s / static_cast<double>(steps);
  }
  return rows;
}

// Rank 0 receives every rank's events (lengths first, then padded text).
Expected<std::vector<std::string>> gather_events(const Tracer& tracer, const SpmdMesh& mesh) {
  const Communicator& world = mesh.world();
  std::string mine = tracer.events_json(world.rank());
  int64_t length = static_cast<int64_t>(mine.size());
  std::vector<int64_t> lengths(static_cast<size_t>(world.size()));
  if (Status s = world.all_gather(&length, lengths.data(), 1, DType::i64); !s) return s.error();
  int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  int64_t words = (longest + 3) / 4;  // sent as i32 words
  std::vector<int32_t> send(static_cast<size_t>(words), 0), recv(send.size() * lengths.size());
  std::memcpy(send.data(), mine.data(), mine.size());
  if (Status s = world.all_gather(send.data(), recv.data(), words, DType::i32); !s) return s.error();
  std::vector<std::string> out;
  for (size_t r = 0; r < lengths.size(); ++r) {
    const char* base = reinterpret_cast<const char*>(recv.data() + r * static_cast<size_t>(words));
    out.emplace_back(base, static_cast<size_t>(lengths[r]));
  }
  return out;
}

void print_comm(const std::map<std::pair<Collective, MeshDim>, CommRow>& rows) {
  fmt::print("comm per step (per rank, B as in the cost model): measured | plan\n");
  for (const auto& [key, r] : rows) {
    fmt::print("  {:<15} d{}: {:g} calls {:.0f} B {:.3f} ms | {:g} calls {:.0f} B {:.3f} ms\n",
               collective_name(key.first), key.second, r.count, r.bytes, r.time * 1e3,
               r.plan_count, r.plan_bytes, r.plan_time * 1e3);
  }
}

// The class of an op for the per-class table: by its traits (attention is a
// matmul), "generic" for ops outside the table, "optimizer" for its step.
std::string_view op_class(std::string_view op) {
  if (op == kOptimizerStepOp) return "optimizer";
  std::optional<OpId> id = find_op(op);
  if (!id) return "generic";
  const OpDef& def = op_def(*id);
  if (def.has(kMatmul)) return "matmul";
  if (def.has(kView)) return "view";
  if (def.has(kReduction)) return "reduction";
  if (def.has(kPointwise)) return "pointwise";
  return "other";
}

using TimeRows = std::vector<std::pair<std::string, std::pair<double, double>>>;

void print_rows(const TimeRows& rows, size_t shown) {
  std::pair<double, double> rest{0, 0};
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& [op, t] = rows[i];
    if (i >= shown) {
      rest.first += t.first, rest.second += t.second;
      continue;
    }
    fmt::print("  {:<64} {:9.3f} ms | {:9.3f} ms\n", op, t.first * 1e3, t.second * 1e3);
  }
  if (rows.size() > shown) {
    fmt::print("  {:<64} {:9.3f} ms | {:9.3f} ms\n", fmt::format("{} other ops", rows.size() - shown),
               rest.first * 1e3, rest.second * 1e3);
  }
}

TimeRows largest_first(const std::map<std::string, std::pair<double, double>>& by_name) {
  TimeRows rows(by_name.begin(), by_name.end());
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  return rows;
}

// Per aten op and per op class: rank 0's measured kernel time per step
// against the plan's compute (its chosen strategies' costs), largest measured
// first. The optimizer's step is one row.
void print_compute(const Graph& graph, const Plan& plan, const Tracer& tracer, int64_t steps) {
  std::map<std::string, std::pair<double, double>> ops;  // op -> (measured, plan) per step
  for (NodeId v = 0; v < graph.size(); ++v) {
    if (graph.node(v).is_placeholder()) continue;
    const NodeStrategies& ns = plan.strategies.nodes[static_cast<size_t>(v)];
    ops[std::string(node_op_name(graph.node(v)))].second +=
        ns.compute_s[static_cast<size_t>(plan.choice[static_cast<size_t>(v)])];
  }
  ops[std::string(kOptimizerStepOp)].second += plan.summary.optimizer_s;
  for (const auto& [op, t] : tracer.compute_by_op()) ops[op].first += t / static_cast<double>(steps);
  std::map<std::string, std::pair<double, double>> classes;
  for (const auto& [op, t] : ops) {
    auto& c = classes[std::string(op_class(op))];
    c.first += t.first, c.second += t.second;
  }
  fmt::print("compute per step by op (rank 0): measured | plan\n");
  print_rows(largest_first(ops), /*shown=*/10);
  fmt::print("compute per step by op class (rank 0): measured | plan\n");
  print_rows(largest_first(classes), classes.size());
}

}  // namespace

Status finish_report(const Graph& graph, const Plan& plan, const SpmdMesh& mesh,
                     const Tracer& tracer, const SpmdRunOptions& options, SpmdRunResult& result) {
  const Communicator& world = mesh.world();
  std::vector<double> steps;
  for (double t : tracer.step_times_s()) {
    Expected<double> slowest = world.max_over_ranks(t);
    if (!slowest) return slowest.error();
    steps.push_back(*slowest);
  }
  double mine = tracer.peak_bytes();
  std::vector<double> peaks(static_cast<size_t>(world.size()));
  if (Status s = world.all_gather(&mine, peaks.data(), 1, DType::f64); !s) return s.error();
  // Each rank's own prediction: uneven shards leave some ranks smaller pieces.
  const double predicted = plan.summary.memory.peak;
  double my_prediction = predicted;
  if (plan.summary.uneven_nodes > 0) my_prediction = plan_memory(graph, plan, &mesh.coordinate()).peak_bytes;
  std::vector<double> predictions(peaks.size());
  if (Status s = world.all_gather(&my_prediction, predictions.data(), 1, DType::f64); !s) return s.error();
  const PeakCheck memory = check_peaks(peaks, predictions, options.memory_tolerance);
  result.memory_error = memory.error;
  // Every check (--check, --check-against-torch) holds the plan to its memory promise.
  const bool checking = options.check || !options.torch_values_dir.empty();
  if (checking && !memory.ok) result.check_ok = false;
  auto rows = comm_rows(plan, tracer, tracer.tallied_steps());
  result.comm_matches_plan = std::all_of(rows.begin(), rows.end(), [](const auto& kv) {
    return kv.second.count == kv.second.plan_count && kv.second.bytes == kv.second.plan_bytes;
  });
  std::vector<std::string> events;
  if (!options.trace_path.empty()) {
    Expected<std::vector<std::string>> all = gather_events(tracer, mesh);
    if (!all) return all.error();
    events = std::move(*all);
  }
  if (world.rank() != 0) return ok_status();
  // The first step warms caches and allocators; later steps are the steady state.
  std::vector<double> steady(steps.size() > 1 ? steps.begin() + 1 : steps.begin(), steps.end());
  std::sort(steady.begin(), steady.end());
  double median = steady.empty() ? 0 : steady[steady.size() / 2];
  fmt::print("measured step time {:.3f} ms (median over {} step(s), slowest rank), plan predicts "
             "{:.3f} ms (compute {:.3f} + comm {:.3f} + optimizer {:.3f}, {} profile)\n",
             median * 1e3, steady.size(), plan.summary.step_time_s * 1e3,
             plan.summary.compute_s * 1e3, plan.summary.comm_s * 1e3, plan.summary.optimizer_s * 1e3,
             plan.hardware);
  std::string per_rank;
  for (size_t r = 0; r < peaks.size(); ++r) per_rank += fmt::format("{}{:.3f}", r ? " " : "", mib(peaks[r]));
  double largest = *std::max_element(peaks.begin(), peaks.end());
  fmt::print("peak memory per rank {:.3f} MiB (held tensors, largest rank), plan predicts {:.3f} MiB "
             "({:+.2f}%); ranks: {}\n",
             mib(largest), mib(predicted), (largest - predicted) / predicted * 100, per_rank);
  if (std::any_of(predictions.begin(), predictions.end(), [&](double p) { return p != predicted; })) {
    std::string each;
    for (size_t r = 0; r < predictions.size(); ++r) each += fmt::format("{}{:.3f}", r ? " " : "", mib(predictions[r]));
    fmt::print("  predicted per rank (uneven shards: each rank's own pieces): {}\n", each);
  }
  if (checking) {
    fmt::print("memory check: largest |measured - predicted| {:.2f}% of the prediction, tolerance "
               "{:g}%: {}\n",
               result.memory_error * 100, options.memory_tolerance * 100,
               memory.ok ? "OK" : "FAILED");
  }
  print_compute(graph, plan, tracer, tracer.tallied_steps());
  print_comm(rows);
  fmt::print("comm bytes: {}\n", result.comm_matches_plan ? "measured == plan" : "MISMATCH with the plan");
  if (!options.trace_path.empty()) {
    std::FILE* f = std::fopen(options.trace_path.c_str(), "w");
    if (!f) return make_error("cannot write the trace to {}", options.trace_path);
    std::string text = chrome_trace(events);
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
    fmt::print("trace: {}\n", options.trace_path);
  }
  return ok_status();
}

}  // namespace autopar
