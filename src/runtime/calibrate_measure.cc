// The measurements of calibration: libtorch compute on one thread, and the
// collective timings each MPI rank runs (see calibrate.h).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <dlfcn.h>
#include <unistd.h>

#include "cost/comm_cost.h"
#include "runtime/calibrate.h"
#include "runtime/mpi_comm.h"

namespace autopar {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Mean seconds per call: one warm-up call, then calls until the budget is
// spent (at least min_calls).
double time_per_call(const std::function<void()>& call, double budget_s, int min_calls) {
  call();
  Clock::time_point start = Clock::now();
  int calls = 0;
  while (calls < min_calls || seconds_since(start) < budget_s) {
    call();
    ++calls;
  }
  return seconds_since(start) / calls;
}

// FLOP/s of an n x n matmul in this dtype, or 0 when libtorch has no CPU kernel for it.
double matmul_flops(at::ScalarType type, int64_t n, double budget_s) {
  try {
    at::Tensor a = at::randn({n, n}).to(type);
    at::Tensor b = at::randn({n, n}).to(type);
    at::Tensor c = at::empty({n, n}, a.options());
    double t = time_per_call([&] { at::mm_out(c, a, b); }, budget_s, /*min_calls=*/2);
    return 2.0 * static_cast<double>(n * n * n) / t;
  } catch (const c10::Error&) {
    return 0;
  }
}

double copy_bandwidth(int64_t bytes, double budget_s) {
  at::Tensor src = at::ones({bytes / 4});  // touches every page before timing
  at::Tensor dst = at::zeros({bytes / 4});
  double t = time_per_call([&] { dst.copy_(src); }, budget_s, /*min_calls=*/3);
  return 2.0 * static_cast<double>(bytes) / t;  // read + write, as the op table counts
}

double smallest_op_time() {
  at::Tensor x = at::ones({1});
  at::Tensor y = at::empty({1});
  return time_per_call([&] { at::add_out(y, x, x); }, /*budget_s=*/0.05, /*min_calls=*/100);
}

// libtorch's set_num_threads does not reach OpenBLAS's own thread pool; without
// this a "1 thread" matmul still spins one OpenBLAS thread per core.
void set_threads(int threads) {
  at::set_num_threads(threads);
  using SetThreads = void (*)(int);
  if (void* symbol = dlsym(RTLD_DEFAULT, "openblas_set_num_threads")) {
    reinterpret_cast<SetThreads>(symbol)(threads);
  }
}

}  // namespace

ComputeFigures measure_compute(bool quick) {
  ComputeFigures figures;
  double budget = quick ? 0.05 : 0.5;
  int64_t n = quick ? 256 : 1024;
  figures.threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  set_threads(figures.threads);
  figures.matmul_f32_flops_all_threads = matmul_flops(at::kFloat, n, budget);
  set_threads(1);
  struct Case {
    DType dtype;
    at::ScalarType type;
    int64_t n;
  };
  // 16-bit types often have slow or missing CPU kernels: a smaller matrix keeps the time bounded.
  const Case cases[] = {{DType::f32, at::kFloat, n},
                        {DType::f64, at::kDouble, n},
                        {DType::bf16, at::kBFloat16, quick ? 128 : 512},
                        {DType::f16, at::kHalf, quick ? 128 : 512}};
  for (const Case& c : cases) {
    double flops = matmul_flops(c.type, c.n, budget);
    figures.matmul_flops[static_cast<size_t>(c.dtype)] = flops;
    fmt::print(stderr, "calibrate: matmul {} {}x{} on 1 thread: {:.1f} GFLOP/s{}\n", dtype_name(c.dtype),
               c.n, c.n, flops / 1e9, flops == 0 ? " (no CPU kernel)" : "");
  }
  fmt::print(stderr, "calibrate: matmul f32 {}x{} on {} threads: {:.1f} GFLOP/s\n", n, n, figures.threads,
             figures.matmul_f32_flops_all_threads / 1e9);
  figures.copy_bytes_per_s = copy_bandwidth(quick ? (16 << 20) : (128 << 20), budget);
  fmt::print(stderr, "calibrate: copy on 1 thread: {:.2f} GB/s (read + write)\n", figures.copy_bytes_per_s / 1e9);
  figures.min_op_time_s = smallest_op_time();
  fmt::print(stderr, "calibrate: smallest op: {:.2f} us\n", figures.min_op_time_s * 1e6);
  figures.memory_bytes = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
  return figures;
}

namespace {

// Buffers for one collective whose full per-device buffer is `total` f32s.
struct CollectiveBuffers {
  std::vector<float> send;
  std::vector<float> recv;
  int64_t block = 0;  // elements per rank
};

Status run_once(const Communicator& comm, Collective c, CollectiveBuffers& b) {
  switch (c) {
    case Collective::kAllGather:
      return comm.all_gather(b.send.data(), b.recv.data(), b.block, DType::f32);
    case Collective::kReduceScatter:
      return comm.reduce_scatter_sum(b.send.data(), b.recv.data(), b.block, DType::f32);
    case Collective::kAllReduce:
      return comm.all_reduce_sum(b.send.data(), static_cast<int64_t>(b.send.size()), DType::f32);
    case Collective::kAllToAll:
      return comm.all_to_all(b.send.data(), b.recv.data(), b.block, DType::f32);
    case Collective::kLocalSlice:
      break;
  }
  return ok_status();
}

// Seconds per collective, the slowest rank's. Every rank takes the same
// branches because the repetition count comes from a max over ranks.
Expected<double> time_collective(const Communicator& comm, Collective c, CollectiveBuffers& b,
                                 double budget_s) {
  if (Status s = run_once(comm, c, b); !s) return s.error();  // warm-up
  if (Status s = comm.barrier(); !s) return s.error();
  Clock::time_point start = Clock::now();
  if (Status s = run_once(comm, c, b); !s) return s.error();
  Expected<double> first = comm.max_over_ranks(seconds_since(start));
  if (!first) return first.error();
  int reps = static_cast<int>(std::clamp(budget_s / std::max(*first, 1e-9), 1.0, 50.0));
  if (Status s = comm.barrier(); !s) return s.error();
  start = Clock::now();
  for (int i = 0; i < reps; ++i) {
    if (Status s = run_once(comm, c, b); !s) return s.error();
  }
  Expected<double> total = comm.max_over_ranks(seconds_since(start));
  if (!total) return total.error();
  return *total / reps;
}

constexpr Collective kMeasured[] = {Collective::kAllGather, Collective::kReduceScatter,
                                    Collective::kAllReduce, Collective::kAllToAll};

Status measure_all(const Communicator& comm, const std::vector<double>& sizes_bytes, bool quick) {
  int64_t n = comm.size();
  for (Collective c : kMeasured) {
    for (double bytes : sizes_bytes) {
      int64_t total = std::max<int64_t>(n, static_cast<int64_t>(bytes / 4.0 / static_cast<double>(n)) * n);
      CollectiveBuffers b{std::vector<float>(static_cast<size_t>(total), 1.0f),
                          std::vector<float>(static_cast<size_t>(total), 0.0f), total / n};
      Expected<double> seconds = time_collective(comm, c, b, quick ? 0.01 : 0.05);
      if (!seconds) return seconds.error();
      if (comm.rank() == 0) {
        std::printf("AUTOPAR_SAMPLE %s %lld %lld %.9g\n", std::string(collective_name(c)).c_str(),
                    static_cast<long long>(n), static_cast<long long>(total * 4), *seconds);
        std::fflush(stdout);
      }
    }
    if (comm.rank() == 0) fmt::print(stderr, "calibrate: {} ranks: {} done\n", n, collective_name(c));
  }
  return ok_status();
}

}  // namespace

int run_mpi_worker(const std::vector<double>& sizes_bytes, bool quick, int* argc, char*** argv) {
  Expected<MpiSession> session = MpiSession::init(argc, argv);
  if (!session) {
    fmt::print(stderr, "autopar: error: {}\n", session.error().message);
    return 1;
  }
  Communicator world = Communicator::world();
  Status measured = measure_all(world, sizes_bytes, quick);
  if (!measured) world.abort(measured.error().message);
  return 0;
}

}  // namespace autopar
