// What each rank of calibration's mpirun job runs (see calibrate.h): the
// collectives through the SPMD runtime's redistribution, the optimizer's
// update, and, given a graph and a mesh, its op calls (calibrate_ops.h), all
// on every rank at once. Rank 0 prints the results as AUTOPAR_* lines.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "cost/comm_cost.h"
#include "runtime/calibrate.h"
#include "runtime/calibrate_ops.h"
#include "planner/auto_plan.h"
#include "planner/baselines.h"
#include "runtime/init.h"
#include "runtime/mpi_comm.h"
#include "runtime/redistribute_exec.h"
#include "runtime/spmd_executor.h"
#include "runtime/spmd_mesh.h"
#include "runtime/trace.h"

namespace autopar {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One collective as the runtime runs it on a 1-D mesh of n ranks: a [rows,
// 256] f32 tensor redistributed between these placements, the buffer B
// (comm_cost.h) as close to the asked size as whole rows allow.
struct CollectiveCase {
  Collective collective;
  const char* from;
  const char* to;
};
constexpr CollectiveCase kCases[] = {{Collective::kAllGather, "S(0)", "R"},
                                     {Collective::kReduceScatter, "P", "S(0)"},
                                     {Collective::kAllReduce, "P", "R"},
                                     {Collective::kAllToAll, "S(0)", "S(1)"}};
constexpr int64_t kColumns = 256;
// Written before each timed collective: more than a core's private caches, so
// the call meets its buffers as a step does, after other ops have run.
constexpr int64_t kEvictBytes = 16 << 20;

struct PreparedCase {
  at::Tensor local;
  RedistPlan plan;
  double buffer_bytes = 0;
};

Expected<PreparedCase> prepare(const CollectiveCase& c, double bytes, const SpmdMesh& mesh) {
  const int64_t n = mesh.mesh().num_devices();
  // The full tensor holds B, except for all-to-all, whose B is one rank's block.
  double full_bytes = c.collective == Collective::kAllToAll ? bytes * static_cast<double>(n) : bytes;
  int64_t rows = std::max<int64_t>(1, static_cast<int64_t>(full_bytes / 4.0 / kColumns / static_cast<double>(n))) * n;
  Expected<Sharding> from = parse_sharding(c.from, 1);
  Expected<Sharding> to = parse_sharding(c.to, 1);
  if (!from || !to) return make_error("bad calibration placement {} -> {}", c.from, c.to);
  PreparedCase p;
  p.plan = plan_redistribution(TensorMeta{{rows, kColumns}, DType::f32}, *from, *to, mesh.mesh());
  p.local = at::randn({from->has_partial() ? rows : rows / n, kColumns});
  double full = static_cast<double>(rows * kColumns * 4);
  p.buffer_bytes = c.collective == Collective::kAllToAll ? full / static_cast<double>(n) : full;
  return p;
}

// Seconds per call of the transfer itself: all ranks start each call
// together (a barrier), so what is timed is the collective, not a wait for a
// late rank; every call allocates its result, as in a step. The mean over
// ranks of each rank's mean. Every rank takes the same branches because the
// repetition count comes from a max over ranks.
Expected<double> time_collective(const SpmdMesh& mesh, const PreparedCase& p, OpInputs where, double budget_s) {
  const Communicator& comm = mesh.world();
  at::Tensor evict = at::empty({where == OpInputs::kCold ? kEvictBytes / 4 : 0});
  auto once = [&]() -> Expected<double> {
    if (where == OpInputs::kCold) evict.fill_(1.0f);
    if (Status s = comm.barrier(); !s) return s.error();
    Clock::time_point start = Clock::now();
    Expected<at::Tensor> out = execute_redistribution(p.local, p.plan, mesh, nullptr, "calibration");
    if (!out) return out.error();
    return seconds_since(start);
  };
  if (Expected<double> warm = once(); !warm) return warm.error();
  if (Status s = comm.barrier(); !s) return s.error();
  Expected<double> first = once();
  if (!first) return first.error();
  Expected<double> slowest = comm.max_over_ranks(*first);
  if (!slowest) return slowest.error();
  int reps = static_cast<int>(std::clamp(budget_s / std::max(*slowest, 1e-9), 3.0, 50.0));
  if (Status s = comm.barrier(); !s) return s.error();
  double mine = 0;
  for (int i = 0; i < reps; ++i) {
    Expected<double> t = once();
    if (!t) return t.error();
    mine += *t;
  }
  Expected<double> sum = comm.sum_over_ranks(mine / reps);
  if (!sum) return sum.error();
  return *sum / comm.size();
}

Status measure_collectives(const SpmdMesh& mesh, const std::vector<double>& sizes_bytes, OpInputs where,
                           bool quick) {
  const Communicator& world = mesh.world();
  for (const CollectiveCase& c : kCases) {
    for (double bytes : sizes_bytes) {
      Expected<PreparedCase> p = prepare(c, bytes, mesh);
      if (!p) return p.error();
      Expected<double> seconds = time_collective(mesh, *p, where, quick ? 0.01 : 0.05);
      if (!seconds) return seconds.error();
      if (world.rank() == 0) {
        std::printf("%s%s %d %.0f %.9g\n", kSampleLinePrefix.data(), std::string(collective_name(c.collective)).c_str(),
                    world.size(), p->buffer_bytes, *seconds);
        std::fflush(stdout);
      }
    }
    if (world.rank() == 0) {
      fmt::print(stderr, "calibrate: {} ranks: {} done\n", world.size(), collective_name(c.collective));
    }
  }
  return ok_status();
}

// The optimizer's update on every rank at once; the slowest rank's figures.
Status measure_updates(const Communicator& world, bool quick) {
  for (auto [name, kind] : {std::pair{"adamw", Optimizer::kAdamW}, std::pair{"sgd", Optimizer::kSgd}}) {
    UpdateCost u = fit_update(kind, quick);
    Expected<double> per_tensor = world.max_over_ranks(u.per_tensor_s);
    if (!per_tensor) return per_tensor.error();
    Expected<double> per_element = world.max_over_ranks(u.per_element_s);
    if (!per_element) return per_element.error();
    if (world.rank() == 0) {
      std::printf("%s%s %.9g %.9g\n", kUpdateLinePrefix.data(), name, *per_tensor, *per_element);
      std::fflush(stdout);
      fmt::print(stderr, "calibrate: {} update: {:.2f} us per tensor + {:.3f} ns per element\n", name,
                 *per_tensor * 1e6, *per_element * 1e9);
    }
  }
  return ok_status();
}

// The graph under the ddp layout, planned with `profile`.
Expected<Plan> ddp_plan(const Graph& graph, const std::vector<int64_t>& mesh_shape, const HardwareProfile& profile) {
  PlanOptions options;
  options.mesh_shape = mesh_shape;
  options.hardware = profile;
  options.label = "ddp";
  Expected<DeviceMesh> mesh = make_mesh(mesh_shape, profile);
  if (!mesh) return mesh.error();
  Expected<std::vector<PinSpec>> pins = baseline_pins("ddp", graph, *mesh);
  if (!pins) return pins.error();
  options.pins = std::move(*pins);
  return make_plan(graph, options);
}

// What the graph's steps under the ddp layout show (the slowest rank's
// figures): a step's time outside its collectives, and the bytes a rank's
// step touches (the peak of its held tensors plus AdamW's two states per
// parameter).
struct DdpStepFigures {
  double step_without_comm_s = 0;       // the median step (slowest rank)
  double best_step_without_comm_s = 0;  // the fastest step (slowest rank)
  double footprint_bytes = 0;
};

Expected<DdpStepFigures> measure_ddp_step(const Graph& graph, const WorkerTask& task, const HardwareProfile& cpu,
                                          const Communicator& world) {
  Expected<Plan> plan = ddp_plan(graph, task.mesh_shape, cpu);
  if (!plan) return plan.error();
  Expected<SpmdMesh> spmd_mesh = SpmdMesh::create(plan->mesh, world);
  if (!spmd_mesh) return spmd_mesh.error();
  Expected<std::vector<at::Tensor>> full = init_placeholders(graph, InitOptions{});
  if (!full) return full.error();
  Tracer tracer;
  SpmdExecutor exec(graph, *plan, *spmd_mesh, tracer);
  if (Status s = exec.load(*full); !s) return s.error();
  auto comm_s = [&] {
    double busy = 0;
    for (const auto& [key, tally] : tracer.tallies()) busy += tally.time_s;
    return busy;
  };
  // The first step warms up; then at least 6 steps, more while they take
  // under half a second (--quick: a twentieth), at most 40, every rank
  // agreeing on the count. The median of one sample is whatever a busy
  // neighbour made it, and the runtime's overhead per op is read from it.
  std::vector<double> steps;
  Clock::time_point first = Clock::now();
  for (int k = 0;; ++k) {
    double comm = comm_s();
    Clock::time_point start = Clock::now();
    Expected<SpmdStepResult> step = exec.step();
    if (!step) return step.error();
    double t = seconds_since(start) - (comm_s() - comm);
    if (k == 0) {
      first = Clock::now();
      continue;
    }
    steps.push_back(t);
    Expected<double> elapsed = world.max_over_ranks(seconds_since(first));
    if (!elapsed) return elapsed.error();
    if (k >= 40 || (k >= 6 && *elapsed >= (task.quick ? 0.025 : 0.5))) break;
  }
  std::sort(steps.begin(), steps.end());
  DdpStepFigures figures;
  Expected<double> step = world.max_over_ranks(steps[steps.size() / 2]);
  if (!step) return step.error();
  figures.step_without_comm_s = *step;
  Expected<double> best = world.max_over_ranks(steps.front());
  if (!best) return best.error();
  figures.best_step_without_comm_s = *best;
  double state = 0;
  for (const at::Tensor& p : exec.params()) state += 2.0 * static_cast<double>(p.nbytes());
  Expected<double> footprint = world.max_over_ranks(tracer.peak_bytes() + state);
  if (!footprint) return footprint.error();
  figures.footprint_bytes = *footprint;
  return figures;
}

// The runtime's own time per op: what the measured ddp step spends outside
// its collectives beyond the calibrated times of its op calls, spread over
// the ops the cost model charges it to. It holds what timing each call alone
// cannot see: walking the graph, counting storages, tracing, and an op's
// dispatch after a different op rather than after itself. Never below 0.
// Both sides are the fastest sample (a step, a call's rounds): a busy
// neighbour only ever adds time, and the difference of two medians taken
// while one ran was its noise (CI once read 0.592 ms against 0.608 ms).
struct NodeOverhead {
  double per_op_s = 0;
  double step_s = 0;   // the fastest ddp step outside its collectives
  double calls_s = 0;  // its op calls at their fastest
};

Expected<NodeOverhead> node_overhead(const Graph& graph, const WorkerTask& task, const HardwareProfile& cpu,
                                     const OpCallTimes& ops, const DdpStepFigures& ddp) {
  HardwareProfile measured = cpu;
  measured.op_times = ops.best_seconds;
  measured.node_overhead_s = 0;
  Expected<Plan> calls_only = ddp_plan(graph, task.mesh_shape, measured);
  if (!calls_only) return calls_only.error();
  measured.node_overhead_s = 1e-6;  // how many ops the cost model charges an overhead to
  Expected<Plan> per_op = ddp_plan(graph, task.mesh_shape, measured);
  if (!per_op) return per_op.error();
  double charged_ops = (per_op->summary.compute_s - calls_only->summary.compute_s) / 1e-6;
  NodeOverhead overhead;
  overhead.calls_s = calls_only->summary.compute_s;
  overhead.step_s = ddp.best_step_without_comm_s;
  if (charged_ops >= 0.5) overhead.per_op_s = std::max(0.0, (overhead.step_s - overhead.calls_s) / charged_ops);
  return overhead;
}

// The data a core can keep near it while its neighbours run: every rank at
// once reads a buffer of growing size again and again; the cache is the
// largest size still read at least 1.5 times as fast as the largest size
// (memory). That is the last level, not the first: a matmul whose operands
// wait in the last level cache runs as fast as one whose operands are in the
// nearest (on this project's VMs, 27 GB/s up to 32 MiB against 12 GB/s from
// memory; bench/RESULTS.md). The slowest rank's figure.
Expected<double> measure_cache_bytes(const Communicator& world, bool quick) {
  std::vector<double> sizes, rates;
  // Three sweeps, each size's best rate kept: a busy neighbour only ever
  // slows a read down, and one slow sweep halved the cache found (with
  // --quick's single sweep, CI once found none at all). A quick sweep reads
  // less per size, so three cost about 0.1 s.
  for (int round = 0; round < 3; ++round) {
    size_t k = 0;
    for (int64_t bytes = 256 << 10; bytes <= (int64_t{quick ? 64 : 256} << 20); bytes *= 2, ++k) {
      at::Tensor buffer = at::ones({bytes / 4});
      if (Status s = world.barrier(); !s) return s.error();
      at::Tensor sum = buffer.sum();  // warms it
      int64_t read = 0;
      Clock::time_point start = Clock::now();
      while (read < (int64_t{quick ? 64 : 512} << 20) || seconds_since(start) < (quick ? 0.005 : 0.02)) {
        sum = buffer.sum();
        read += bytes;
      }
      Expected<double> slowest = world.max_over_ranks(seconds_since(start) / static_cast<double>(read));
      if (!slowest) return slowest.error();
      if (k == sizes.size()) {
        sizes.push_back(static_cast<double>(bytes));
        rates.push_back(0);
      }
      rates[k] = std::max(rates[k], 1.0 / *slowest);
    }
  }
  // The largest such size, not the end of the first run of them: a small
  // size slowed in every sweep must not hide the cache behind it.
  double threshold = 1.5 * rates.back();
  double cache = 0;
  for (size_t i = 0; i < sizes.size(); ++i)
    if (rates[i] >= threshold) cache = sizes[i];
  return cache;
}

Status measure_all(const Communicator& world, const WorkerTask& task) {
  Expected<HardwareProfile> cpu = load_hardware("cpu");
  if (!cpu) return cpu.error();
  Expected<DeviceMesh> line = make_mesh({static_cast<int64_t>(world.size())}, *cpu);
  if (!line) return line.error();
  Expected<SpmdMesh> mesh = SpmdMesh::create(*line, world);
  if (!mesh) return mesh.error();
  // Without a graph nothing says how much a step touches: the buffers are
  // taken cold, as a model larger than the caches meets them.
  OpInputs inputs = OpInputs::kCold;
  std::optional<DdpStepFigures> ddp;
  if (task.graph) {
    Expected<DdpStepFigures> measured = measure_ddp_step(*task.graph, task, *cpu, world);
    if (!measured) return measured.error();
    ddp = *measured;
    Expected<double> cache = measure_cache_bytes(world, task.quick);
    if (!cache) return cache.error();
    if (ddp->footprint_bytes <= *cache) inputs = OpInputs::kWarm;
    if (world.rank() == 0) {
      std::printf("%s%s %.0f %.0f\n", kInputsLinePrefix.data(), inputs == OpInputs::kWarm ? "warm" : "cold",
                  ddp->footprint_bytes, *cache);
      std::fflush(stdout);
    }
  }
  if (Status s = measure_collectives(*mesh, task.sizes_bytes, inputs, task.quick); !s) return s;
  if (Status s = measure_updates(world, task.quick); !s) return s;
  if (!task.graph) return ok_status();
  Expected<DeviceMesh> graph_mesh = make_mesh(task.mesh_shape, *cpu);
  if (!graph_mesh) return graph_mesh.error();
  Expected<OpCallTimes> ops = measure_op_calls(*task.graph, *graph_mesh, world, inputs, task.quick);
  if (!ops) return ops.error();
  Expected<NodeOverhead> overhead = node_overhead(*task.graph, task, *cpu, *ops, *ddp);
  if (!overhead) return overhead.error();
  if (world.rank() == 0) {
    std::printf("%s%.9g\n", kOverheadLinePrefix.data(), overhead->per_op_s);
    fmt::print(stderr, "calibrate: ddp step outside its collectives {:.3f} ms (median {:.3f}), its op calls {:.3f} ms "
               "(each call's fastest): runtime overhead per op {:.2f} us\n", overhead->step_s * 1e3,
               ddp->step_without_comm_s * 1e3, overhead->calls_s * 1e3, overhead->per_op_s * 1e6);
    std::vector<std::pair<std::string, double>> sorted(ops->seconds.begin(), ops->seconds.end());
    std::sort(sorted.begin(), sorted.end());
    for (const auto& [key, seconds] : sorted) std::printf("%s%.9g %s\n", kOpLinePrefix.data(), seconds, key.c_str());
    std::fflush(stdout);
  }
  // Timed cold: the same calls warm too, for runs whose devices hold less
  // than the cache (a pipeline rank holds its stages only; hardware.h).
  if (inputs == OpInputs::kCold) {
    Expected<OpCallTimes> warm = measure_op_calls(*task.graph, *graph_mesh, world, OpInputs::kWarm, task.quick);
    if (!warm) return warm.error();
    if (world.rank() == 0) {
      std::vector<std::pair<std::string, double>> sorted(warm->seconds.begin(), warm->seconds.end());
      std::sort(sorted.begin(), sorted.end());
      for (const auto& [key, seconds] : sorted) {
        std::printf("%s%.9g %s\n", kWarmOpLinePrefix.data(), seconds, key.c_str());
      }
      std::fflush(stdout);
    }
  }
  if (world.rank() == 0) {
    fmt::print(stderr, "calibrate: ops: {} distinct local calls measured{}\n", ops->seconds.size(),
               ops->failed ? fmt::format("; {} refused on made-up inputs keep the roofline (first: {})",
                                         ops->failed, ops->first_failure)
                           : "");
  }
  return ok_status();
}

}  // namespace

int run_mpi_worker(const WorkerTask& task, int* argc, char*** argv) {
  Expected<MpiSession> session = MpiSession::init(argc, argv);
  if (!session) {
    fmt::print(stderr, "autopar: error: {}\n", session.error().message);
    return 1;
  }
  Communicator world = Communicator::world();
  Status measured = measure_all(world, task);
  if (!measured) world.abort(measured.error());
  return 0;
}

}  // namespace autopar
