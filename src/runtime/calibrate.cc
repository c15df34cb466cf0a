// Calibration driver: launches the MPI worker jobs, fits the links and writes
// the profile (see calibrate.h).
#include "runtime/calibrate.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace autopar {
namespace {

constexpr std::string_view kSamplePrefix = "AUTOPAR_SAMPLE ";
constexpr double kKiB = 1024.0;

// Single quotes for /bin/sh; a quote inside becomes '\''.
std::string shell_quote(std::string_view text) {
  std::string out = "'";
  for (char ch : text) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (!dir.empty() && access((dir + "/" + program).c_str(), X_OK) == 0) return true;
  }
  return false;
}

Expected<CollectiveSample> parse_sample_line(const std::string& line) {
  std::istringstream in(line.substr(kSamplePrefix.size()));
  std::string name;
  CollectiveSample sample;
  in >> name >> sample.group_size >> sample.buffer_bytes >> sample.seconds;
  std::optional<Collective> collective = parse_collective(name);
  if (!in || !collective) return make_error("cannot parse MPI worker line '{}'", line);
  sample.collective = *collective;
  return sample;
}

std::string worker_command(const CalibrateOptions& options, int ranks) {
  std::vector<std::string> sizes;
  for (double bytes : options.sizes_bytes) sizes.push_back(fmt::format("{:.0f}", bytes));
  return fmt::format(
      "mpirun --allow-run-as-root --oversubscribe --bind-to none -np {} -x OMP_NUM_THREADS=1 "
      "-x OPENBLAS_NUM_THREADS=1 {} calibrate --mpi-worker --sizes {}{}",
      ranks, shell_quote(options.self_path), fmt::join(sizes, ","), options.quick ? " --quick" : "");
}

Expected<LinkSpec> crude_link(const std::vector<CollectiveSample>& samples) {
  double fastest = 0, largest_bytes = 0, largest_time = 0;
  for (const CollectiveSample& s : samples) {
    if (s.seconds <= 0) continue;
    if (fastest == 0 || s.seconds < fastest) fastest = s.seconds;
    double sent = collective_sent_bytes(s.collective, s.group_size, s.buffer_bytes);
    if (sent > largest_bytes) {
      largest_bytes = sent;
      largest_time = s.seconds;
    }
  }
  if (largest_bytes <= 0 || largest_time <= 0) {
    return make_error("no collective sample moved any bytes");
  }
  return LinkSpec{largest_bytes / largest_time, fastest};
}

// Fits over all collectives of one rank count, then per collective.
Expected<LinkFit> fit_rank_count(int ranks, const std::vector<CollectiveSample>& samples) {
  LinkFit fit;
  fit.ranks = ranks;
  Expected<LinkSpec> all = fit_link(samples);
  if (all) {
    fit.all = *all;
  } else {
    // On a loaded machine the times can fail to grow with size; fall back to a
    // crude estimate (latency of the fastest call, bandwidth of the largest)
    // rather than fail, and say so.
    Expected<LinkSpec> crude = crude_link(samples);
    if (!crude) return make_error("{} ranks: {}", ranks, all.error().message);
    fmt::print(stderr, "calibrate: warning: {} ranks: {}; using a rough estimate instead\n", ranks,
               all.error().message);
    fit.all = *crude;
  }
  std::map<std::string, std::vector<CollectiveSample>> by_name;
  for (const CollectiveSample& s : samples) by_name[std::string(collective_name(s.collective))].push_back(s);
  for (const auto& [name, group] : by_name) {
    Expected<LinkSpec> one = fit_link(group);
    if (one) fit.per_collective.emplace_back(name, *one);
  }
  return fit;
}

nlohmann::ordered_json link_json(const LinkSpec& link) {
  return {{"bandwidth_bytes_per_s", link.bandwidth_bytes_per_s}, {"latency_s", link.latency_s}};
}

std::string today() {
  std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d", std::localtime(&now));
  return text;
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  return name;
}

HardwareProfile make_profile(const ComputeFigures& compute, const std::vector<LinkFit>& fits,
                             const HardwareProfile& fallback) {
  HardwareProfile p;
  p.name = "calibrated";
  p.source = fmt::format("autopar calibrate on {}, {}: libtorch on 1 thread, Open MPI collectives "
                         "over {} ranks on this machine",
                         host_name(), today(), fits.empty() ? 0 : fits.back().ranks);
  p.peak_flops = compute.matmul_flops;
  p.memory_bandwidth_bytes_per_s = compute.copy_bytes_per_s;
  // Measured rates are achieved rates: nothing left to discount.
  p.compute_efficiency = 1;
  p.memory_efficiency = 1;
  p.min_op_time_s = compute.min_op_time_s;
  if (fits.empty()) {
    p.devices_per_node = fallback.devices_per_node;
    p.intra_node = fallback.intra_node;
  } else {
    // The largest job measured: every rank of it ran on this machine.
    p.devices_per_node = fits.back().ranks;
    p.intra_node = fits.back().all;
  }
  // One machine has no network to measure; a mesh larger than the node uses
  // the same shared-memory link, which is what extra local ranks would get.
  p.inter_node = fits.empty() ? fallback.inter_node : p.intra_node;
  p.memory_bytes = compute.memory_bytes / static_cast<double>(p.devices_per_node);
  return p;
}

nlohmann::ordered_json calibration_json(const ComputeFigures& compute, const std::vector<LinkFit>& fits,
                                        const std::vector<CollectiveSample>& samples) {
  nlohmann::ordered_json out;
  out["threads"] = compute.threads;
  out["matmul_f32_flops_all_threads"] = compute.matmul_f32_flops_all_threads;
  out["links"] = nlohmann::ordered_json::array();
  for (const LinkFit& fit : fits) {
    nlohmann::ordered_json entry{{"ranks", fit.ranks}, {"all", link_json(fit.all)}};
    for (const auto& [name, link] : fit.per_collective) entry["per_collective"][name] = link_json(link);
    out["links"].push_back(entry);
  }
  out["samples"] = nlohmann::ordered_json::array();
  for (const CollectiveSample& s : samples) {
    out["samples"].push_back({{"collective", collective_name(s.collective)}, {"ranks", s.group_size},
                              {"bytes", s.buffer_bytes}, {"seconds", s.seconds}});
  }
  return out;
}

}  // namespace

std::vector<double> default_calibration_sizes(bool quick) {
  if (quick) return {4 * kKiB, 64 * kKiB, 1024 * kKiB};
  std::vector<double> sizes;
  for (double bytes = 4 * kKiB; bytes <= 16 * kKiB * kKiB; bytes *= 4) sizes.push_back(bytes);
  return sizes;  // 4 KiB, 16 KiB, ..., 16 MiB
}

std::vector<int> default_calibration_ranks(bool quick) {
  if (quick) return {2};
  return {2, 4};
}

Expected<double> parse_byte_size(std::string_view text) {
  std::string digits(text);
  double scale = 1;
  if (!digits.empty()) {
    switch (std::toupper(static_cast<unsigned char>(digits.back()))) {
      case 'K': scale = kKiB; break;
      case 'M': scale = kKiB * kKiB; break;
      case 'G': scale = kKiB * kKiB * kKiB; break;
      default: break;
    }
    if (scale != 1) digits.pop_back();
  }
  char* end = nullptr;
  double value = std::strtod(digits.c_str(), &end);
  if (digits.empty() || end != digits.c_str() + digits.size() || !(value > 0)) {
    return make_error("size '{}' is not a positive byte count (e.g. 4096, 64K, 16M, 1G)", text);
  }
  return value * scale;
}

Expected<std::vector<CollectiveSample>> run_collective_job(const CalibrateOptions& options, int ranks) {
  std::string command = worker_command(options, ranks);
  fmt::print(stderr, "calibrate: {}\n", command);
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return make_error("cannot start '{}'", command);
  std::vector<CollectiveSample> samples;
  std::string bad_line;
  char buffer[512];
  while (std::fgets(buffer, sizeof(buffer), pipe)) {
    std::string line(buffer);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    if (line.rfind(kSamplePrefix, 0) != 0) continue;  // mpirun chatter
    Expected<CollectiveSample> sample = parse_sample_line(line);
    if (sample) samples.push_back(*sample);
    else bad_line = sample.error().message;
  }
  int status = pclose(pipe);
  if (status != 0) return make_error("MPI worker job with {} ranks failed (status {}): {}", ranks, status, command);
  if (!bad_line.empty()) return make_error("{}", bad_line);
  if (samples.empty()) return make_error("MPI worker job with {} ranks printed no samples: {}", ranks, command);
  return samples;
}

Expected<std::string> calibrate(const CalibrateOptions& given) {
  CalibrateOptions options = given;
  if (options.sizes_bytes.empty()) options.sizes_bytes = default_calibration_sizes(options.quick);
  if (options.ranks.empty()) options.ranks = default_calibration_ranks(options.quick);
  std::sort(options.ranks.begin(), options.ranks.end());
  for (int r : options.ranks) {
    if (r < 2) return make_error("--ranks {}: collectives need at least 2 ranks", r);
  }
  if (!options.compute_only && !on_path("mpirun")) {
    return make_error("mpirun is not on PATH: install openmpi-bin, or pass --compute-only to keep the "
                      "built-in cpu link figures");
  }
  ComputeFigures compute = measure_compute(options.quick);
  std::vector<LinkFit> fits;
  std::vector<CollectiveSample> all_samples;
  for (int ranks : options.compute_only ? std::vector<int>{} : options.ranks) {
    Expected<std::vector<CollectiveSample>> samples = run_collective_job(options, ranks);
    if (!samples) return samples.error();
    Expected<LinkFit> fit = fit_rank_count(ranks, *samples);
    if (!fit) return fit.error();
    fmt::print(stderr, "calibrate: {} ranks: alpha {:.2f} us, bandwidth {:.3f} GB/s (all collectives)\n", ranks,
               fit->all.latency_s * 1e6, fit->all.bandwidth_bytes_per_s / 1e9);
    for (const auto& [name, link] : fit->per_collective) {
      fmt::print(stderr, "calibrate:   {:<15} alpha {:8.2f} us, bandwidth {:.3f} GB/s\n", name,
                 link.latency_s * 1e6, link.bandwidth_bytes_per_s / 1e9);
    }
    fits.push_back(*fit);
    all_samples.insert(all_samples.end(), samples->begin(), samples->end());
  }
  Expected<HardwareProfile> fallback = load_hardware("cpu");
  if (!fallback) return fallback.error();
  HardwareProfile profile = make_profile(compute, fits, *fallback);
  nlohmann::ordered_json out = nlohmann::ordered_json::parse(write_hardware_json(profile));
  out["notes"] = "Measured by autopar calibrate. Figures are achieved rates (efficiencies 1). A device is one "
                 "MPI rank with one BLAS thread; with more ranks than cores each gets a share of a core. "
                 "inter_node repeats the intra-node fit: one machine has no network to measure.";
  out["calibration"] = calibration_json(compute, fits, all_samples);
  return out.dump(2) + "\n";
}

}  // namespace autopar
