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
#include <optional>
#include <thread>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "ir/json_io.h"

namespace autopar {
namespace {

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
  std::istringstream in(line.substr(kSampleLinePrefix.size()));
  std::string name;
  CollectiveSample sample;
  in >> name >> sample.group_size >> sample.buffer_bytes >> sample.seconds;
  std::optional<Collective> collective = parse_collective(name);
  if (!in || !collective) return make_error("cannot parse MPI worker line '{}'", line);
  sample.collective = *collective;
  return sample;
}

// Ranks bound one per core, as `mpirun -np N` places a job of up to one rank
// per core; more ranks than cores share them unbound.
std::string worker_command(const CalibrateOptions& options, int ranks, const std::string& graph_file) {
  std::vector<std::string> sizes;
  for (double bytes : options.sizes_bytes) sizes.push_back(fmt::format("{:.0f}", bytes));
  bool fits_cores = ranks <= static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::string graph = graph_file.empty() ? ""
                                         : fmt::format(" --graph {} --mesh {}", shell_quote(graph_file),
                                                       fmt::join(options.mesh_shape, "x"));
  return fmt::format(
      "mpirun --allow-run-as-root --oversubscribe{} -np {} -x OMP_NUM_THREADS=1 "
      "-x OPENBLAS_NUM_THREADS=1 {} calibrate --mpi-worker --sizes {}{}{}",
      fits_cores ? "" : " --bind-to none", ranks, shell_quote(options.self_path), fmt::join(sizes, ","),
      options.quick ? " --quick" : "", graph);
}

Status parse_update_line(const std::string& line, WorkerResult& result) {
  std::istringstream in(line.substr(kUpdateLinePrefix.size()));
  std::string name;
  UpdateCost u;
  in >> name >> u.per_tensor_s >> u.per_element_s;
  if (!in || (name != "adamw" && name != "sgd")) return make_error("cannot parse MPI worker line '{}'", line);
  (name == "adamw" ? result.adamw_update : result.sgd_update) = u;
  return ok_status();
}

Status parse_op_line(const std::string& line, size_t prefix, std::unordered_map<std::string, double>& table) {
  std::string rest = line.substr(prefix);
  size_t space = rest.find(' ');
  char* end = nullptr;
  double seconds = std::strtod(rest.c_str(), &end);
  if (space == std::string::npos || end != rest.c_str() + space || !(seconds >= 0)) {
    return make_error("cannot parse MPI worker line '{}'", line);
  }
  table[rest.substr(space + 1)] = seconds;
  return ok_status();
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
    for (const auto& [name, link] : fits.back().per_collective) {
      std::optional<Collective> c = parse_collective(name);
      if (c && static_cast<int>(*c) < kMeasuredCollectiveCount) {
        p.intra_node.measured[static_cast<size_t>(*c)] = RingFigures{link.latency_s, link.bandwidth_bytes_per_s};
      }
    }
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

Expected<WorkerResult> run_worker_job(const CalibrateOptions& options, int ranks, const std::string& graph_file) {
  std::string command = worker_command(options, ranks, graph_file);
  fmt::print(stderr, "calibrate: {}\n", command);
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return make_error("cannot start '{}'", command);
  WorkerResult result;
  std::string bad_line;
  std::string line;
  char buffer[4096];
  while (std::fgets(buffer, sizeof(buffer), pipe)) {
    line += buffer;
    if (line.empty() || line.back() != '\n') continue;  // a long line comes in pieces
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    Status parsed = ok_status();
    if (line.rfind(kSampleLinePrefix, 0) == 0) {
      Expected<CollectiveSample> sample = parse_sample_line(line);
      if (sample) result.samples.push_back(*sample);
      else parsed = sample.error();
    } else if (line.rfind(kUpdateLinePrefix, 0) == 0) {
      parsed = parse_update_line(line, result);
    } else if (line.rfind(kOpLinePrefix, 0) == 0) {
      parsed = parse_op_line(line, kOpLinePrefix.size(), result.op_times);
    } else if (line.rfind(kWarmOpLinePrefix, 0) == 0) {
      parsed = parse_op_line(line, kWarmOpLinePrefix.size(), result.op_times_warm);
    } else if (line.rfind(kOverheadLinePrefix, 0) == 0) {
      result.node_overhead_s = std::strtod(line.c_str() + kOverheadLinePrefix.size(), nullptr);
    } else if (line.rfind(kInputsLinePrefix, 0) == 0) {
      std::istringstream in(line.substr(kInputsLinePrefix.size()));
      in >> result.op_inputs >> result.step_footprint_bytes >> result.cache_bytes;
      if (!in) parsed = make_error("cannot parse MPI worker line '{}'", line);
    }  // anything else is mpirun chatter
    if (!parsed) bad_line = parsed.error().message;
    line.clear();
  }
  int status = pclose(pipe);
  if (status != 0) return make_error("MPI worker job with {} ranks failed (status {}): {}", ranks, status, command);
  if (!bad_line.empty()) return make_error("{}", bad_line);
  if (result.samples.empty()) return make_error("MPI worker job with {} ranks printed no samples: {}", ranks, command);
  return result;
}

namespace {

// The graph for the worker job, as a file it reads; removed with the object.
class TempGraphFile {
 public:
  static Expected<TempGraphFile> write(const Graph& graph) {
    char path[] = "/tmp/autopar-calibrate-XXXXXX.json";
    int fd = mkstemps(path, 5);
    if (fd < 0) return make_error("cannot create a temporary file for the graph in /tmp");
    std::string text = write_graph_json(graph);
    bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    TempGraphFile file(path);
    if (!ok) return make_error("cannot write the graph to {}", path);
    return file;
  }
  TempGraphFile(TempGraphFile&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  TempGraphFile& operator=(TempGraphFile&&) = delete;
  ~TempGraphFile() {
    if (!path_.empty()) std::remove(path_.c_str());
  }
  const std::string& path() const { return path_; }

 private:
  explicit TempGraphFile(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace

Expected<std::string> calibrate(const CalibrateOptions& given) {
  CalibrateOptions options = given;
  if (options.sizes_bytes.empty()) options.sizes_bytes = default_calibration_sizes(options.quick);
  int64_t mesh_devices = 1;
  for (int64_t d : options.mesh_shape) mesh_devices *= d;
  if (options.ranks.empty()) {
    options.ranks = mesh_devices > 1 ? std::vector<int>{static_cast<int>(mesh_devices)}
                                     : default_calibration_ranks(options.quick);
  }
  std::sort(options.ranks.begin(), options.ranks.end());
  for (int r : options.ranks) {
    if (r < 2) return make_error("--ranks {}: collectives need at least 2 ranks", r);
  }
  if (options.graph && !options.compute_only &&
      std::find(options.ranks.begin(), options.ranks.end(), mesh_devices) == options.ranks.end()) {
    return make_error("the op calls of mesh {} run on its {} ranks: {}",
                      fmt::join(options.mesh_shape, "x"), mesh_devices,
                      mesh_devices < 2 ? "give a mesh of at least 2 devices"
                                       : fmt::format("add {} to --ranks", mesh_devices));
  }
  if (!options.compute_only && !on_path("mpirun")) {
    return make_error("mpirun is not on PATH: install openmpi-bin, or pass --compute-only to keep the "
                      "built-in cpu link figures");
  }
  if (options.graph && options.compute_only) {
    return make_error("measuring a graph's op calls runs them on the mesh's ranks under mpirun: drop --compute-only");
  }
  std::optional<TempGraphFile> graph_file;
  if (options.graph) {
    Expected<TempGraphFile> written = TempGraphFile::write(*options.graph);
    if (!written) return written.error();
    graph_file.emplace(std::move(*written));
  }
  ComputeFigures compute = measure_compute(options.quick);
  std::vector<LinkFit> fits;
  std::vector<CollectiveSample> all_samples;
  UpdateCost adamw, sgd;  // from the last job (the largest), or measured here without MPI
  std::unordered_map<std::string, double> op_times, op_times_warm;
  double node_overhead_s = 0, cache_bytes = 0;
  nlohmann::ordered_json op_inputs;
  if (options.compute_only) {
    adamw = fit_update(Optimizer::kAdamW, options.quick);
    sgd = fit_update(Optimizer::kSgd, options.quick);
  }
  for (int ranks : options.compute_only ? std::vector<int>{} : options.ranks) {
    // The op calls run in the job of the mesh's size (the last one when no mesh is given).
    bool ops_here = graph_file && (ranks == mesh_devices);
    Expected<WorkerResult> job = run_worker_job(options, ranks, ops_here ? graph_file->path() : std::string());
    if (!job) return job.error();
    Expected<LinkFit> fit = fit_rank_count(ranks, job->samples);
    if (!fit) return fit.error();
    for (const std::string& warning : fit->warnings) fmt::print(stderr, "calibrate: warning: {}\n", warning);
    fmt::print(stderr, "calibrate: {} ranks: alpha {:.2f} us, bandwidth {:.3f} GB/s (all collectives)\n", ranks,
               fit->all.latency_s * 1e6, fit->all.bandwidth_bytes_per_s / 1e9);
    for (const auto& [name, link] : fit->per_collective) {
      fmt::print(stderr, "calibrate:   {:<15} alpha {:8.2f} us, bandwidth {:.3f} GB/s\n", name,
                 link.latency_s * 1e6, link.bandwidth_bytes_per_s / 1e9);
    }
    fits.push_back(*fit);
    all_samples.insert(all_samples.end(), job->samples.begin(), job->samples.end());
    adamw = job->adamw_update;
    sgd = job->sgd_update;
    if (ops_here) {
      op_times = std::move(job->op_times);
      op_times_warm = std::move(job->op_times_warm);
      cache_bytes = job->cache_bytes;
      node_overhead_s = job->node_overhead_s;
      op_inputs = {{"inputs", job->op_inputs},
                   {"step_footprint_bytes", job->step_footprint_bytes},
                   {"cache_bytes", job->cache_bytes}};
      fmt::print(stderr, "calibrate: op calls timed on {} inputs: a ddp step touches {:.1f} MiB per rank, {} the "
                 "{:.1f} MiB a core caches\n", job->op_inputs, job->step_footprint_bytes / (1 << 20),
                 job->op_inputs == "warm" ? "within" : "beyond", job->cache_bytes / (1 << 20));
    }
  }
  Expected<HardwareProfile> fallback = load_hardware("cpu");
  if (!fallback) return fallback.error();
  HardwareProfile profile = make_profile(compute, fits, *fallback);
  profile.adamw_update = adamw;
  profile.sgd_update = sgd;
  profile.op_times = std::move(op_times);
  profile.op_times_warm = std::move(op_times_warm);
  profile.cache_bytes = cache_bytes;
  profile.node_overhead_s = node_overhead_s;
  nlohmann::ordered_json out = nlohmann::ordered_json::parse(write_hardware_json(profile));
  out["notes"] = "Measured by autopar calibrate. Figures are achieved rates (efficiencies 1). A device is one "
                 "MPI rank with one BLAS thread; with more ranks than cores each gets a share of a core. "
                 "inter_node repeats the intra-node fit: one machine has no network to measure.";
  out["calibration"] = calibration_json(compute, fits, all_samples);
  if (options.graph) {
    out["calibration"]["op_times_for"] =
        fmt::format("{} on mesh {}", options.graph->name, fmt::join(options.mesh_shape, "x"));
    out["calibration"]["op_inputs"] = op_inputs;
  }
  return out.dump(2) + "\n";
}

}  // namespace autopar
