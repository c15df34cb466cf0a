// What each rank of calibration's mpirun job runs (see calibrate.h): the
// collectives through the SPMD runtime's redistribution, the optimizer's
// update, and, given a graph and a mesh, its op calls (calibrate_ops.h), all
// on every rank at once. Rank 0 prints the results as AUTOPAR_* lines.
#include <algorithm>
#include <chrono>
#include <cstdio>
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

// Seconds per call as a rank of a step sees it: each call follows a burst of
// compute (a step's ops between two collectives), so it starts cold and waits
// for the rank that finished its burst last, as in a step; every call
// allocates its result. The mean over ranks of each rank's mean. Every rank
// takes the same branches because the repetition count comes from a max over ranks.
Expected<double> time_collective(const SpmdMesh& mesh, const PreparedCase& p, double budget_s) {
  const Communicator& comm = mesh.world();
  at::Tensor a = at::randn({256, 256}), b = at::randn({256, 256});
  auto burst = [&] {
    for (int i = 0; i < 2; ++i) a = at::mm(a, b).div_(256.0);
  };
  auto once = [&]() -> Expected<double> {
    burst();
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

Status measure_collectives(const SpmdMesh& mesh, const std::vector<double>& sizes_bytes, bool quick) {
  const Communicator& world = mesh.world();
  for (const CollectiveCase& c : kCases) {
    for (double bytes : sizes_bytes) {
      Expected<PreparedCase> p = prepare(c, bytes, mesh);
      if (!p) return p.error();
      Expected<double> seconds = time_collective(mesh, *p, quick ? 0.01 : 0.05);
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

// The runtime's own time per op beyond its kernel (walking the graph,
// counting storages, tracing, choosing redistributions): the graph's steps
// under the ddp layout, less every traced kernel and collective, per op.
Expected<double> measure_node_overhead(const Graph& graph, const WorkerTask& task, const HardwareProfile& cpu,
                                       const Communicator& world) {
  PlanOptions options;
  options.mesh_shape = task.mesh_shape;
  options.hardware = cpu;
  options.label = "ddp";
  Expected<DeviceMesh> mesh = make_mesh(task.mesh_shape, cpu);
  if (!mesh) return mesh.error();
  Expected<std::vector<PinSpec>> pins = baseline_pins("ddp", graph, *mesh);
  if (!pins) return pins.error();
  options.pins = std::move(*pins);
  Expected<Plan> plan = make_plan(graph, options);
  if (!plan) return plan.error();
  Expected<SpmdMesh> spmd_mesh = SpmdMesh::create(plan->mesh, world);
  if (!spmd_mesh) return spmd_mesh.error();
  Expected<std::vector<at::Tensor>> full = init_placeholders(graph, InitOptions{});
  if (!full) return full.error();
  Tracer tracer;
  SpmdExecutor exec(graph, *plan, *spmd_mesh, tracer);
  if (Status s = exec.load(*full); !s) return s.error();
  auto busy_s = [&] {
    double busy = 0;
    for (const auto& [op, t] : tracer.compute_by_op()) busy += t;
    for (const auto& [key, tally] : tracer.tallies()) busy += tally.time_s;
    return busy;
  };
  std::vector<double> gaps;
  for (int k = 0; k < (task.quick ? 2 : 6); ++k) {
    double busy = busy_s();
    Clock::time_point start = Clock::now();
    Expected<SpmdStepResult> step = exec.step();
    if (!step) return step.error();
    double gap = seconds_since(start) - (busy_s() - busy);
    if (k > 0) gaps.push_back(gap);  // the first step warms up
  }
  std::sort(gaps.begin(), gaps.end());
  int64_t ops = 0;
  for (NodeId v = 0; v < graph.size(); ++v) ops += graph.node(v).is_placeholder() ? 0 : 1;
  return world.max_over_ranks(std::max(0.0, gaps[gaps.size() / 2]) / static_cast<double>(std::max<int64_t>(ops, 1)));
}

Status measure_all(const Communicator& world, const WorkerTask& task) {
  Expected<HardwareProfile> cpu = load_hardware("cpu");
  if (!cpu) return cpu.error();
  Expected<DeviceMesh> line = make_mesh({static_cast<int64_t>(world.size())}, *cpu);
  if (!line) return line.error();
  Expected<SpmdMesh> mesh = SpmdMesh::create(*line, world);
  if (!mesh) return mesh.error();
  if (Status s = measure_collectives(*mesh, task.sizes_bytes, task.quick); !s) return s;
  if (Status s = measure_updates(world, task.quick); !s) return s;
  if (task.graph == nullptr) return ok_status();
  Expected<DeviceMesh> graph_mesh = make_mesh(task.mesh_shape, *cpu);
  if (!graph_mesh) return graph_mesh.error();
  Expected<OpCallTimes> ops = measure_op_calls(*task.graph, *graph_mesh, world, task.quick);
  if (!ops) return ops.error();
  Expected<double> overhead = measure_node_overhead(*task.graph, task, *cpu, world);
  if (!overhead) return overhead.error();
  if (world.rank() == 0) {
    std::printf("%s%.9g\n", kOverheadLinePrefix.data(), *overhead);
    fmt::print(stderr, "calibrate: runtime overhead per op: {:.2f} us\n", *overhead * 1e6);
    std::vector<std::pair<std::string, double>> sorted(ops->seconds.begin(), ops->seconds.end());
    std::sort(sorted.begin(), sorted.end());
    for (const auto& [key, seconds] : sorted) std::printf("%s%.9g %s\n", kOpLinePrefix.data(), seconds, key.c_str());
    std::fflush(stdout);
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
  if (!measured) world.abort(measured.error().message);
  return 0;
}

}  // namespace autopar
