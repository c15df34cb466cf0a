#include "runtime/trace.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace autopar {

double Tracer::now_us() const {
  return std::chrono::duration<double, std::micro>(Clock::now() - origin_).count();
}

void Tracer::compute(const std::string& node, std::string_view op, double start_us,
                     double end_us) {
  compute_by_op_[std::string(op)] += (end_us - start_us) * 1e-6;
  events_.push_back({node, "compute", fmt::format("{{\"op\":{}}}", nlohmann::json(op).dump()),
                     start_us, end_us - start_us});
}

void Tracer::collective(Collective c, MeshDim dim, double bytes, const std::string& tensor,
                        double start_us, double end_us) {
  if (!counting_) return;
  CollectiveTally& t = tallies_[{c, dim}];
  ++t.count;
  t.bytes += bytes;
  t.time_s += (end_us - start_us) * 1e-6;
  events_.push_back({fmt::format("{} d{}", collective_name(c), dim), "comm",
                     fmt::format("{{\"bytes\":{},\"tensor\":{}}}", bytes,
                                 nlohmann::json(tensor).dump()),
                     start_us, end_us - start_us});
}

void Tracer::step(int64_t index, double start_us, double end_us) {
  steps_.push_back((end_us - start_us) * 1e-6);
  ++tallied_steps_;
  events_.push_back({fmt::format("step {}", index), "step", "{}", start_us, end_us - start_us});
}

void Tracer::hold(double bytes) {
  live_ += bytes;
  peak_ = std::max(peak_, live_);
}

void Tracer::release(double bytes) { live_ -= bytes; }

void Tracer::reset_tallies() {
  tallies_.clear();
  compute_by_op_.clear();
  tallied_steps_ = 0;
}

std::string Tracer::events_json(int rank) const {
  std::string out;
  for (const Event& e : events_) {
    if (!out.empty()) out += ",\n";
    // Steps on their own row (tid 0) above compute and comm (tid 1).
    out += fmt::format(
        "{{\"name\":{},\"cat\":\"{}\",\"ph\":\"X\",\"ts\":{:.3f},\"dur\":{:.3f},\"pid\":{},"
        "\"tid\":{},\"args\":{}}}",
        nlohmann::json(e.name).dump(), e.category, e.start_us, e.dur_us, rank,
        e.category == "step" ? 0 : 1, e.args);
  }
  return out;
}

std::string chrome_trace(const std::vector<std::string>& rank_events) {
  std::string out = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  bool first = true;
  for (size_t r = 0; r < rank_events.size(); ++r) {
    out += fmt::format("{}{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{},\"args\":{{\"name\":\"rank {}\"}}}}",
                       first ? "" : ",\n", r, r);
    first = false;
    if (!rank_events[r].empty()) out += ",\n" + rank_events[r];
  }
  return out + "\n]}\n";
}

}  // namespace autopar
