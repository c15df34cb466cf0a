// Calibration: measure this machine and write a hardware profile
// (cost/hardware.h) that the planner loads with --hardware FILE.
//
// Compute figures are measured in-process with libtorch on ONE thread, because
// a device in the CPU runtime is one MPI rank running one BLAS thread:
// matmul FLOP/s per dtype, copy bandwidth, and the smallest op's time.
// The optimizer's update (the runtime's own OptimizerState) is timed on
// parameters of two sizes and fitted per tensor and per element. Given a graph
// and a mesh, every local op call the planner may choose is timed too
// (calibrate_ops.h).
// Collective figures need several ranks, so the calling process launches
// itself under mpirun once per rank count:
//   mpirun --allow-run-as-root --oversubscribe --bind-to none -np N
//          -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1
//          <self> calibrate --mpi-worker --sizes ...
// Each collective runs as the SPMD runtime runs it (runtime/redistribute_exec.h:
// packing the blocks, the transfer, unpacking into a new tensor), so the fit
// prices what a plan's redistribution costs on this runtime.
// Rank 0 of each worker job prints one "AUTOPAR_SAMPLE <collective> <ranks>
// <bytes> <seconds>" line per measurement on stdout; the parent collects them
// and fits alpha and bandwidth by least squares (cost/alpha_beta_fit.h), over
// all collectives (the link's figures) and per collective (LinkSpec::measured).
// Measured figures are achieved rates, so the profile's efficiencies are 1.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cost/alpha_beta_fit.h"
#include "cost/compute_cost.h"
#include "cost/hardware.h"
#include "ir/expected.h"
#include "ir/graph.h"

namespace autopar {

struct CalibrateOptions {
  std::vector<double> sizes_bytes;  // collective buffer sizes B; empty -> defaults
  std::vector<int> ranks;           // MPI rank counts; empty -> defaults (the mesh's devices, given one)
  bool quick = false;               // small sizes and short timings (tests)
  bool compute_only = false;        // skip MPI (links keep the built-in cpu figures)
  std::string self_path;            // the autopar binary to launch under mpirun
  // Given both: every local op call the planner may choose for this graph on
  // this mesh is measured into the profile's op_times (calibrate_ops.h).
  const Graph* graph = nullptr;
  std::vector<int64_t> mesh_shape;
};

struct ComputeFigures {
  std::array<double, kDTypeCount> matmul_flops{};  // 1 thread; 0 = dtype not supported
  double matmul_f32_flops_all_threads = 0;
  int threads = 1;
  double copy_bytes_per_s = 0;  // bytes read + written per second, 1 thread
  double min_op_time_s = 0;     // a 1-element add
  double memory_bytes = 0;      // physical memory of the machine
};

std::vector<double> default_calibration_sizes(bool quick);
std::vector<int> default_calibration_ranks(bool quick);
// "4096", "64K", "16M", "1G" (binary multiples) -> bytes.
Expected<double> parse_byte_size(std::string_view text);

// In-process libtorch measurements; progress on stderr.
ComputeFigures measure_compute(bool quick);
// The runtime's optimizer update of one parameter, per tensor and per element.
UpdateCost fit_update(Optimizer kind, bool quick);

// What the worker job measures; the graph (optional) comes as a JSON file.
struct WorkerTask {
  std::vector<double> sizes_bytes;
  bool quick = false;
  const Graph* graph = nullptr;
  std::vector<int64_t> mesh_shape;
};
// The lines rank 0 of the worker job prints on stdout:
//   AUTOPAR_SAMPLE <collective> <ranks> <bytes> <seconds>
//   AUTOPAR_UPDATE <adamw|sgd> <per_tensor_s> <per_element_s>
//   AUTOPAR_OP <seconds> <op_call_key>
//   AUTOPAR_OP_WARM <seconds> <op_call_key>  (op calls timed cold: the same warm)
//   AUTOPAR_OVERHEAD <seconds>   (the runtime's own time per op)
//   AUTOPAR_INPUTS <warm|cold> <step_footprint_bytes> <cache_bytes>
//                                (where the op calls found their inputs)
inline constexpr std::string_view kSampleLinePrefix = "AUTOPAR_SAMPLE ";
inline constexpr std::string_view kUpdateLinePrefix = "AUTOPAR_UPDATE ";
inline constexpr std::string_view kOpLinePrefix = "AUTOPAR_OP ";
inline constexpr std::string_view kWarmOpLinePrefix = "AUTOPAR_OP_WARM ";
inline constexpr std::string_view kOverheadLinePrefix = "AUTOPAR_OVERHEAD ";
inline constexpr std::string_view kInputsLinePrefix = "AUTOPAR_INPUTS ";
// Runs inside each rank of the mpirun job. Returns the exit code.
int run_mpi_worker(const WorkerTask& task, int* argc, char*** argv);

struct WorkerResult {
  std::vector<CollectiveSample> samples;
  UpdateCost adamw_update, sgd_update;
  std::unordered_map<std::string, double> op_times;
  std::unordered_map<std::string, double> op_times_warm;  // when op_times are cold
  double node_overhead_s = 0;
  std::string op_inputs;  // warm or cold (calibrate_ops.h), with the figures that chose it
  double step_footprint_bytes = 0, cache_bytes = 0;
};
// Parent side: launches the worker job with `ranks` ranks and parses its lines.
// graph_file (optional): the graph for the op calls, on options.mesh_shape.
Expected<WorkerResult> run_worker_job(const CalibrateOptions& options, int ranks, const std::string& graph_file);

// The whole calibration; returns the profile JSON text (with a "calibration"
// section holding the raw samples and per-collective fits).
Expected<std::string> calibrate(const CalibrateOptions& options);

}  // namespace autopar
