// The in-process measurements of calibration: libtorch compute on one thread
// and the optimizer's update (see calibrate.h).
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

#include "runtime/calibrate.h"
#include "runtime/optimizer.h"
#include "runtime/process_memory.h"

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

// Seconds per parameter tensor of `elements` f32 elements: the runtime's
// optimizer stepping `count` such tensors.
double update_seconds(Optimizer kind, int64_t elements, int count, double budget_s) {
  std::vector<at::Tensor> params, grads;
  for (int i = 0; i < count; ++i) {
    params.push_back(at::randn({elements}));
    grads.push_back(at::randn({elements}));
  }
  OptimizerConfig config;
  config.kind = kind;
  OptimizerState state(config);
  state.allocate(params);
  return time_per_call([&] { state.step(params, grads); }, budget_s, /*min_calls=*/3) / count;
}

}  // namespace

// t(n) = per_tensor + n * per_element through many small parameters and a few
// large ones, whose state (256 MiB) is far larger than any cache, as a model's is.
UpdateCost fit_update(Optimizer kind, bool quick) {
  const int64_t small = 1024, large = quick ? (256 << 10) : (4 << 20);
  double budget_s = quick ? 0.02 : 0.3;
  double t_small = update_seconds(kind, small, 64, budget_s);
  double t_large = update_seconds(kind, large, 4, budget_s);
  double per_element = std::max(0.0, (t_large - t_small) / static_cast<double>(large - small));
  double per_tensor = std::max(0.0, t_small - per_element * static_cast<double>(small));
  return UpdateCost{per_tensor, per_element};
}

ComputeFigures measure_compute(bool quick) {
  keep_freed_memory();  // as every runtime process does
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

}  // namespace autopar
