// `autopar calibrate`: measure this machine (libtorch compute, Open MPI
// collectives) and write a hardware profile for --hardware FILE. The same
// subcommand with --mpi-worker is what each rank of the launched mpirun job
// runs (see runtime/calibrate.h).
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli_output.h"
#include "commands.h"
#include "runtime/calibrate.h"

#include <fmt/format.h>

namespace autopar {
namespace {

struct CalibrateCommandOptions {
  std::string out;
  std::vector<std::string> sizes;
  std::vector<int> ranks;
  bool quick = false;
  bool compute_only = false;
  bool mpi_worker = false;
};

Expected<CalibrateOptions> to_options(const CalibrateCommandOptions& given) {
  CalibrateOptions options;
  for (const std::string& text : given.sizes) {
    Expected<double> bytes = parse_byte_size(text);
    if (!bytes) return make_error("--sizes: {}", bytes.error().message);
    options.sizes_bytes.push_back(*bytes);
  }
  options.ranks = given.ranks;
  options.quick = given.quick;
  options.compute_only = given.compute_only;
  options.self_path = "/proc/self/exe";
  std::error_code ec;
  std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (!ec) options.self_path = self;
  return options;
}

int run_calibrate(const CalibrateCommandOptions& given) {
  Expected<CalibrateOptions> options = to_options(given);
  if (!options) return report_error(options.error().message);
  if (given.mpi_worker) {
    if (options->sizes_bytes.empty()) options->sizes_bytes = default_calibration_sizes(given.quick);
    return run_mpi_worker(options->sizes_bytes, given.quick, nullptr, nullptr);
  }
  if (given.out.empty()) return report_error("calibrate needs --out FILE");
  Expected<std::string> profile = calibrate(*options);
  if (!profile) return report_error(profile.error().message);
  Status written = write_output(*profile, given.out);
  if (!written) return report_error(written.error().message);
  fmt::print(stderr, "calibrate: wrote {} (use it with --hardware {})\n", given.out, given.out);
  return kExitOk;
}

}  // namespace

Command add_calibrate_command(CLI::App& parent) {
  auto options = std::make_shared<CalibrateCommandOptions>();
  CLI::App* app = parent.add_subcommand(
      "calibrate", "Measure this machine (matmul, memory bandwidth, MPI collectives) and write a hardware profile");
  app->add_option("--out", options->out, "Profile JSON to write (load it with --hardware FILE)");
  app->add_option("--sizes", options->sizes, "Collective buffer sizes, e.g. 4K,64K,1M,16M (default 4K..16M)")
      ->delimiter(',');
  app->add_option("--ranks", options->ranks, "MPI rank counts to measure (default 2,4; --quick: 2)")
      ->delimiter(',');
  app->add_flag("--quick", options->quick, "Few sizes, short timings (a few seconds; for tests)");
  app->add_flag("--compute-only", options->compute_only, "Skip MPI; keep the built-in cpu link figures");
  // Internal: what each rank of the launched mpirun job runs.
  app->add_flag("--mpi-worker", options->mpi_worker)->group("");
  return {app, [options] { return run_calibrate(*options); }};
}

}  // namespace autopar
