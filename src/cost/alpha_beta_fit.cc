// Weighted linear least squares for (alpha, 1/bandwidth); see alpha_beta_fit.h.
#include "cost/alpha_beta_fit.h"

#include <map>
#include <vector>

#include <fmt/format.h>

namespace autopar {
namespace {

// One equation t ≈ a * alpha + b * inv_bw, divided by t so each sample's
// relative error counts the same: 1 ≈ (a/t) * alpha + (b/t) * inv_bw.
struct Row {
  double a;
  double b;
};

Expected<std::vector<Row>> weighted_rows(std::span<const CollectiveSample> samples) {
  std::vector<Row> rows;
  for (const CollectiveSample& s : samples) {
    if (!(s.seconds > 0)) {
      return make_error("collective sample {} over {} devices of {} bytes has time {} s; times must be positive",
                        collective_name(s.collective), s.group_size, s.buffer_bytes, s.seconds);
    }
    double steps = static_cast<double>(collective_latency_steps(s.collective, s.group_size));
    double sent = collective_sent_bytes(s.collective, s.group_size, s.buffer_bytes);
    if (steps == 0 && sent == 0) continue;  // no communication: says nothing about the link
    rows.push_back({steps / s.seconds, sent / s.seconds});
  }
  if (rows.size() < 2) {
    return make_error("fitting a link needs at least 2 communicating samples, got {}", rows.size());
  }
  return rows;
}

Expected<LinkSpec> rough_link(std::span<const CollectiveSample> samples) {
  double fastest = 0, largest_bytes = 0, largest_time = 0;
  for (const CollectiveSample& s : samples) {
    if (!(s.seconds > 0)) continue;
    if (fastest == 0 || s.seconds < fastest) fastest = s.seconds;
    double sent = collective_sent_bytes(s.collective, s.group_size, s.buffer_bytes);
    if (sent > largest_bytes) {
      largest_bytes = sent;
      largest_time = s.seconds;
    }
  }
  if (largest_bytes <= 0) return make_error("no collective sample moved any bytes");
  return LinkSpec{largest_bytes / largest_time, fastest};
}

// fit_link, or the rough estimate with a warning naming `what`.
Expected<LinkSpec> fit_or_estimate(std::span<const CollectiveSample> samples, const std::string& what,
                                   std::vector<std::string>& warnings) {
  Expected<LinkSpec> fit = fit_link(samples);
  if (fit) return fit;
  Expected<LinkSpec> rough = rough_link(samples);
  if (!rough) return make_error_like(fit.error(), "{}: {}", what, fit.error().message);
  warnings.push_back(fmt::format("{}: {}; using a rough estimate instead", what, fit.error().message));
  return rough;
}

}  // namespace

Expected<LinkSpec> fit_link(std::span<const CollectiveSample> samples) {
  Expected<std::vector<Row>> rows = weighted_rows(samples);
  if (!rows) return rows.error();
  // Normal equations of min sum (1 - a*alpha - b*inv_bw)^2.
  double aa = 0, ab = 0, bb = 0, a1 = 0, b1 = 0;
  for (const Row& r : *rows) {
    aa += r.a * r.a;
    ab += r.a * r.b;
    bb += r.b * r.b;
    a1 += r.a;
    b1 += r.b;
  }
  double det = aa * bb - ab * ab;
  double alpha = 0;
  double inv_bw = 0;
  if (det > 1e-12 * aa * bb) {
    alpha = (a1 * bb - b1 * ab) / det;
    inv_bw = (aa * b1 - ab * a1) / det;
  }
  if (alpha < 0 || det <= 1e-12 * aa * bb) {
    // Latency below measurement noise (or sizes that cannot separate the two):
    // attribute the whole time to bandwidth.
    alpha = 0;
    inv_bw = bb > 0 ? b1 / bb : 0;
  }
  if (!(inv_bw > 0)) {
    return make_error("cannot fit a bandwidth: collective times do not grow with the bytes sent "
                      "over {} samples (try larger sizes)", rows->size());
  }
  return LinkSpec{1.0 / inv_bw, alpha};
}

Expected<LinkFit> fit_rank_count(int ranks, std::span<const CollectiveSample> samples) {
  LinkFit fit;
  fit.ranks = ranks;
  Expected<LinkSpec> all = fit_or_estimate(samples, fmt::format("{} ranks", ranks), fit.warnings);
  if (!all) return all.error();
  fit.all = *all;
  std::map<std::string, std::vector<CollectiveSample>> by_name;
  for (const CollectiveSample& s : samples) by_name[std::string(collective_name(s.collective))].push_back(s);
  for (const auto& [name, group] : by_name) {
    Expected<LinkSpec> one = fit_or_estimate(group, fmt::format("{} ranks, {}", ranks, name), fit.warnings);
    if (!one) return one.error();
    fit.per_collective.emplace_back(name, *one);
  }
  return fit;
}

}  // namespace autopar
