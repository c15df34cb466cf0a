// `autopar calibrate`: measure this machine (libtorch compute, Open MPI
// collectives) and write a hardware profile for --hardware FILE. The same
// subcommand with --mpi-worker is what each rank of the launched mpirun job
// runs (see runtime/calibrate.h).
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli_output.h"
#include "commands.h"
#include "graph_options.h"
#include "runtime/calibrate.h"
#include "sharding/mesh.h"

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
  GraphOptions graph;  // optional: measure this graph's op calls
  std::string mesh;
};

Expected<CalibrateOptions> to_options(const CalibrateCommandOptions& given) {
  CalibrateOptions options;
  for (const std::string& text : given.sizes) {
    Expected<double> bytes = parse_byte_size(text);
    if (!bytes) return make_error_like(bytes.error(), "--sizes: {}", bytes.error().message);
    options.sizes_bytes.push_back(*bytes);
  }
  options.ranks = given.ranks;
  if (!given.mesh.empty()) {
    Expected<std::vector<int64_t>> shape = parse_mesh_shape(given.mesh);
    if (!shape) return make_error_like(shape.error(), "--mesh: {}", shape.error().message);
    options.mesh_shape = *shape;
  }
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
  if (!options) return report_error(options.error());
  if (given.mpi_worker) {
    WorkerTask task{options->sizes_bytes, given.quick, nullptr, options->mesh_shape};
    if (task.sizes_bytes.empty()) task.sizes_bytes = default_calibration_sizes(given.quick);
    std::optional<Graph> graph;
    if (!given.graph.graph_file.empty()) {
      Expected<Graph> loaded = load_graph(given.graph);
      if (!loaded) return report_error(loaded.error());
      graph = std::move(*loaded);
      task.graph = &*graph;
    }
    return run_mpi_worker(task, nullptr, nullptr);
  }
  if (given.out.empty()) return report_error(ErrorKind::kUsage, "calibrate needs --out FILE");
  std::optional<Graph> graph;
  bool has_graph = !given.graph.model.empty() || !given.graph.graph_file.empty();
  if (has_graph != !given.mesh.empty()) {
    return report_error(ErrorKind::kUsage,
                        "calibrate measures a graph's op calls on a mesh: give --model or --graph "
                        "together with --mesh (or neither)");
  }
  if (has_graph) {
    Expected<Graph> loaded = load_graph(given.graph);
    if (!loaded) return report_error(loaded.error());
    graph = std::move(*loaded);
    options->graph = &*graph;
  }
  Expected<std::string> profile = calibrate(*options);
  if (!profile) return report_error(profile.error());
  Status written = write_output(*profile, given.out);
  if (!written) return report_error(written.error());
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
  app->add_option("--mesh", options->mesh,
                  "With --model or --graph: time every local op call the planner may choose on this mesh "
                  "(e.g. 2, 2x2); the collectives are then measured on the mesh's rank count");
  add_graph_options(*app, options->graph, /*source_required=*/false);
  // Internal: what each rank of the launched mpirun job runs.
  app->add_flag("--mpi-worker", options->mpi_worker)->group("");
  return {app, [options] { return run_calibrate(*options); }};
}

}  // namespace autopar
