// Solver benchmark: a synthetic transformer-like chain of N nodes with S
// strategies each (resharding matrices, residual skip edges, followers,
// parameters with static bytes, activation liveness), solved by CBC.
//   solver_bench [nodes=5000] [strategies=10] [budget_fraction=0.5] [threads=2] [gap=0]
// budget_fraction places the memory budget between the least and the largest
// possible peak (by per-point minima/maxima); >= 1 means no budget.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "planner/cbc_solver.h"
#include "planner/presolve.h"

using namespace autopar::planner;
using autopar::Expected;

namespace {

Problem make_chain(int n, int s, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Problem p;
  for (int v = 0; v < n; ++v) {
    std::vector<double> costs(static_cast<size_t>(s)), bytes(costs.size());
    for (int i = 0; i < s; ++i) {
      // Strategy i splits work and bytes i+1 ways but pays more communication,
      // so the cheapest strategy (i ~ 2) is not the smallest one (i = s-1).
      double shards = 1 + i;
      costs[static_cast<size_t>(i)] = 1e-3 / shards + 1.5e-4 * i + 1e-5 * unit(rng);
      bytes[static_cast<size_t>(i)] = 64e6 / shards;
    }
    NodeIdx idx = p.add_node(fmt::format("n{}", v), costs);
    p.nodes[static_cast<size_t>(idx)].bytes = bytes;
    if (v % 50 == 0) {  // a parameter: resident all step
      auto& st = p.nodes[static_cast<size_t>(idx)].static_bytes;
      for (int i = 0; i < s; ++i) st.push_back(256e6 / (1 + i));
    }
  }
  auto reshard = [&](int a, int b) {
    std::vector<double> m(static_cast<size_t>(s * s));
    for (int i = 0; i < s; ++i)
      for (int j = 0; j < s; ++j)
        m[static_cast<size_t>(i * s + j)] =
            i == j ? 0 : (unit(rng) < 0.05 ? kInfiniteCost : 2e-4 * (1 + unit(rng)));
    p.add_edge(a, b, m);
  };
  for (int v = 1; v < n; ++v) {
    if (v % 4 == 3) p.add_equal(v - 1, v);  // an elementwise follower
    else reshard(v - 1, v);
    if (v % 10 == 0 && v >= 5) reshard(v - 5, v);  // a residual
  }
  for (int t = 0; t < n; ++t) {  // the last 8 values and the residual source
    std::vector<NodeIdx> live;
    for (int v = std::max(0, t - 7); v <= t; ++v) live.push_back(v);
    if (t % 10 < 5 && t >= 5) live.push_back(t - t % 10);
    p.live_points.push_back(live);
  }
  return p;
}

double seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 5000;
  int s = argc > 2 ? std::atoi(argv[2]) : 10;
  double fraction = argc > 3 ? std::atof(argv[3]) : 0.5;
  int threads = argc > 4 ? std::atoi(argv[4]) : 2;
  auto start = std::chrono::steady_clock::now();
  Problem p = make_chain(n, s, /*seed=*/7);
  double make_s = seconds(start);
  start = std::chrono::steady_clock::now();
  size_t points = p.live_points.size();
  reduce_time_points(p);
  double reduce_s = seconds(start);
  // Budget between the least and largest peak, from unconstrained rows.
  ReducedProblem all = presolve(p, PresolveOptions{/*all_memory_rows=*/true});
  double lo = 0, hi = 0;
  for (const MemoryRow& row : all.memory_rows) {
    double top = row.constant;
    for (const MemoryTerm& t : row.terms) top += *std::max_element(t.coef().begin(), t.coef().end());
    lo = std::max(lo, row.constant);
    hi = std::max(hi, top);
  }
  if (fraction < 1) p.memory_budget = lo + fraction * (hi - lo);
  SolverOptions o;
  o.threads = threads;
  o.time_limit_s = 60;
  o.relative_gap = argc > 5 ? std::atof(argv[5]) : 0.0;
  o.verbose = std::getenv("SOLVER_BENCH_VERBOSE") != nullptr;
  // SOLVER_BENCH_CBC="cuts off heur off": extra CBC parameters, in pairs.
  if (const char* extra = std::getenv("SOLVER_BENCH_CBC")) {
    std::istringstream in(extra);
    std::string name, value;
    while (in >> name >> value) o.cbc_parameters.emplace_back(name, value);
  }
  start = std::chrono::steady_clock::now();
  Expected<Solution> sol = solve_with_cbc(p, o);
  double total_s = seconds(start);
  if (!sol.ok()) {
    fmt::print("error: {}\n", sol.error().message);
    return 1;
  }
  const SolveStats& st = sol->stats;
  fmt::print("problem: {} nodes x {} strategies, {} edges, {} follows, {} -> {} time points "
             "(reduce {:.3f} s, make {:.3f} s)\n",
             n, s, p.edges.size(), p.follows.size(), points, p.live_points.size(), reduce_s,
             make_s);
  fmt::print("budget: {:.3f} GB (least peak {:.3f}, largest {:.3f})\n", p.memory_budget / 1e9,
             lo / 1e9, hi / 1e9);
  fmt::print("reduced: {} nodes, {} edges, {} memory rows; ILP {} vars ({} integer), {} rows, "
             "{} nonzeros\n",
             st.reduced_nodes, st.reduced_edges, st.memory_rows, st.variables,
             st.integer_variables, st.constraints, st.nonzeros);
  fmt::print("status: {}, objective {:.6f} s, bound {:.6f}, gap {:.2e}, peak {:.3f} GB\n",
             status_text(sol->status, sol->stopped_by), sol->objective, sol->best_bound, sol->gap,
             sol->peak_bytes / 1e9);
  fmt::print("time: presolve {:.3f} s, build {:.3f} s, CBC {:.3f} s, total {:.3f} s ({} threads)\n",
             st.presolve_s, st.build_s, st.solve_s, total_s, threads);
  return 0;
}
