// Trace: what one rank measured while running a plan — per-op compute time,
// per-collective bytes and time, and the peak of the tensor bytes it held —
// for the run summary and a Chrome trace (chrome://tracing, Perfetto).
//
// Collective bytes are counted the way the cost model counts them
// (redistribute.h's B, per device): the gathered tensor of an all_gather, the
// unreduced input of a reduce_scatter, the local tensor of an all_reduce or
// all_to_all. A test compares the tallies with the plan's predicted bytes.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cost/comm_cost.h"
#include "sharding/mesh.h"

namespace autopar {

struct CollectiveTally {
  int64_t count = 0;
  double bytes = 0;
  double time_s = 0;
};

// The op name under which the optimizer's step is traced and tabled.
inline constexpr std::string_view kOptimizerStepOp = "optimizer step";

class Tracer {
 public:
  using Clock = std::chrono::steady_clock;
  Tracer() : origin_(Clock::now()) {}

  double now_us() const;
  void compute(const std::string& node, std::string_view op, double start_us, double end_us);
  void collective(Collective c, MeshDim dim, double bytes, const std::string& tensor,
                  double start_us, double end_us);
  void step(int64_t index, double start_us, double end_us);

  // Memory: bytes of the tensors this rank holds (params, optimizer state,
  // live activations); the peak is kept.
  void hold(double bytes);
  void release(double bytes);
  double live_bytes() const { return live_; }
  double peak_bytes() const { return peak_; }

  // Counting off: collectives the plan does not contain (gathering results
  // for --check, the loss report) are not tallied or traced.
  void set_counting(bool on) { counting_ = on; }
  bool counting() const { return counting_; }

  const std::map<std::pair<Collective, MeshDim>, CollectiveTally>& tallies() const { return tallies_; }
  const std::map<std::string, double>& compute_by_op() const { return compute_by_op_; }
  const std::vector<double>& step_times_s() const { return steps_; }
  // The steps whose collectives and kernels the tallies hold: every step()
  // since the last reset_tallies() (at least 1, to divide by).
  int64_t tallied_steps() const { return std::max<int64_t>(tallied_steps_, 1); }
  void reset_tallies();

  // This rank's events as Chrome trace JSON objects, comma separated.
  std::string events_json(int rank) const;

 private:
  struct Event {
    std::string name, category, args;
    double start_us, dur_us;
  };
  Clock::time_point origin_;
  std::vector<Event> events_;
  std::map<std::pair<Collective, MeshDim>, CollectiveTally> tallies_;
  std::map<std::string, double> compute_by_op_;
  std::vector<double> steps_;
  int64_t tallied_steps_ = 0;
  double live_ = 0, peak_ = 0;
  bool counting_ = true;
};

// Wraps ranks' event lists into one Chrome trace document.
std::string chrome_trace(const std::vector<std::string>& rank_events);

}  // namespace autopar
