// Calibration: measure this machine and write a hardware profile
// (cost/hardware.h) that the planner loads with --hardware FILE.
//
// Compute figures are measured in-process with libtorch on ONE thread, because
// a device in the CPU runtime is one MPI rank running one BLAS thread:
// matmul FLOP/s per dtype, copy bandwidth, and the smallest op's time.
// Collective figures need several ranks, so the calling process launches
// itself under mpirun once per rank count:
//   mpirun --allow-run-as-root --oversubscribe --bind-to none -np N
//          -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1
//          <self> calibrate --mpi-worker --sizes ...
// Rank 0 of each worker job prints one "AUTOPAR_SAMPLE <collective> <ranks>
// <bytes> <seconds>" line per measurement on stdout; the parent collects them
// and fits alpha and bandwidth by least squares (cost/alpha_beta_fit.h).
// Measured figures are achieved rates, so the profile's efficiencies are 1.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cost/alpha_beta_fit.h"
#include "cost/hardware.h"
#include "ir/expected.h"

namespace autopar {

struct CalibrateOptions {
  std::vector<double> sizes_bytes;  // collective buffer sizes B; empty -> defaults
  std::vector<int> ranks;           // MPI rank counts; empty -> defaults
  bool quick = false;               // small sizes and short timings (tests)
  bool compute_only = false;        // skip MPI (links keep the built-in cpu figures)
  std::string self_path;            // the autopar binary to launch under mpirun
};

struct ComputeFigures {
  std::array<double, kDTypeCount> matmul_flops{};  // 1 thread; 0 = dtype not supported
  double matmul_f32_flops_all_threads = 0;
  int threads = 1;
  double copy_bytes_per_s = 0;  // bytes read + written per second, 1 thread
  double min_op_time_s = 0;     // a 1-element add
  double memory_bytes = 0;      // physical memory of the machine
};

struct LinkFit {
  int ranks = 0;
  LinkSpec all;                                 // over every collective
  std::vector<std::pair<std::string, LinkSpec>> per_collective;
};

std::vector<double> default_calibration_sizes(bool quick);
std::vector<int> default_calibration_ranks(bool quick);
// "4096", "64K", "16M", "1G" (binary multiples) -> bytes.
Expected<double> parse_byte_size(std::string_view text);

// In-process libtorch measurements; progress on stderr.
ComputeFigures measure_compute(bool quick);
// Runs inside each rank of the mpirun job: times every collective at every
// size and prints AUTOPAR_SAMPLE lines on rank 0. Returns the exit code.
int run_mpi_worker(const std::vector<double>& sizes_bytes, bool quick, int* argc, char*** argv);
// Parent side: launches the worker job with `ranks` ranks and parses its lines.
Expected<std::vector<CollectiveSample>> run_collective_job(const CalibrateOptions& options, int ranks);

// The whole calibration; returns the profile JSON text (with a "calibration"
// section holding the raw samples and per-collective fits).
Expected<std::string> calibrate(const CalibrateOptions& options);

}  // namespace autopar
