// Exact reductions of presolve and the ILP builder: edge aggregation over
// equal rows/columns, the shared static-bytes sum, implied memory rows. Each
// is checked on a hand-sized problem and, on random problems built with many
// equal rows/columns and static bytes, against brute force on the unreduced
// problem (the optimum must not move).
#include <random>

#include <gtest/gtest.h>

#include "planner/brute_force.h"
#include "planner/cbc_solver.h"
#include "planner/ilp_model.h"
#include "planner/presolve.h"

namespace autopar::planner {
namespace {

// u has 3 strategies whose rows 0 and 2 are equal (same output sharding);
// v has 3 strategies whose columns 1 and 2 are equal.
Problem three_by_three() {
  Problem p;
  p.add_node("u", {1, 2, 3});
  p.add_node("v", {4, 5, 6});
  p.add_edge(0, 1, {0, 7, 7,
                    9, 0, 0,
                    0, 7, 7});
  return p;
}

// Equal rows here mean equal strategies up to node cost, which dominance
// would prune; these tests look at aggregation alone.
constexpr PresolveOptions kNoDominance{.drop_dominated = false};

TEST(Aggregation, EqualRowsAndColumnsShareAClass) {
  ReducedProblem r = presolve(three_by_three(), kNoDominance);
  ASSERT_EQ(r.edges.size(), 1u);
  const ReducedEdge& e = r.edges[0];
  EXPECT_EQ(e.u_class, (std::vector<int32_t>{0, 1, 0}));  // rows 0 and 2 equal
  EXPECT_EQ(e.v_class, (std::vector<int32_t>{0, 1, 1}));  // columns 1 and 2 equal
  EXPECT_EQ(e.class_costs, (std::vector<double>{0, 7, 9, 0}));
}

TEST(Aggregation, IlpHasOnePairColumnPerClassPair) {
  ReducedProblem r = presolve(three_by_three(), kNoDominance);
  IlpModel m = build_ilp(r, IlpObjective::kCost);
  // 3 + 3 strategy columns and 2 x 2 class pairs (instead of 3 x 3 pairs);
  // rows: 2 one-hot rows, 2 + 2 class marginals.
  EXPECT_EQ(m.columns(), 3 + 3 + 2 * 2);
  EXPECT_EQ(m.rows(), 2 + 2 + 2);
}

TEST(Aggregation, EdgeWithOneClassAtAnEndFoldsIntoTheOtherEnd) {
  Problem p;
  p.add_node("u", {1, 2});
  p.add_node("v", {4, 5, 6});
  p.add_edge(0, 1, {3, 0, 8,
                    3, 0, 8});  // rows equal: the cost depends on v alone
  ReducedProblem r = presolve(p, kNoDominance);
  EXPECT_TRUE(r.edges.empty());
  EXPECT_EQ(r.nodes[1].costs, (std::vector<double>{4 + 3, 5 + 0, 6 + 8}));
  Expected<Solution> s = solve_with_cbc(p);
  ASSERT_TRUE(s.ok());
  EXPECT_DOUBLE_EQ(s->objective, 1 + 5);  // u=0, v=1
}

// Two parameters (static bytes) and one activation at two time points.
Problem with_params(double budget) {
  Problem p;
  for (const char* name : {"w1", "w2"}) {
    NodeIdx w = p.add_node(name, {2, 1});
    p.nodes[static_cast<size_t>(w)].static_bytes = {10, 40};
  }
  NodeIdx x = p.add_node("x", {2, 1});
  p.nodes[static_cast<size_t>(x)].bytes = {20, 50};
  p.add_edge(0, 2, {0, 1, 1, 0});
  p.add_edge(1, 2, {0, 1, 1, 0});
  p.live_points = {{x}, {x}};
  p.memory_budget = budget;
  return p;
}

TEST(SharedStatic, TimeRowsCountStaticBytesThroughOneSum) {
  ReducedProblem r = presolve(with_params(95.5));
  ASSERT_FALSE(r.memory_rows.empty());
  ASSERT_EQ(r.static_terms.size(), 2u);  // w1 and w2: 40 - 10 above their minimum
  EXPECT_EQ(r.static_terms[0].coef(), (std::vector<double>{0, 30}));
  const MemoryRow& row = r.memory_rows[0];
  EXPECT_TRUE(row.shared_static);
  ASSERT_EQ(row.terms.size(), 1u);  // only x's live bytes
  EXPECT_DOUBLE_EQ(row.ilp_constant, 20 + 10 + 10);
  EXPECT_DOUBLE_EQ(row.constant, 20 + 10 + 10);
}

TEST(SharedStatic, BudgetStillBindsOnStaticPlusLiveBytes) {
  // All strategy 1 (cost 1+1+1 = 3) needs 50 + 40 + 40 = 130 bytes > 95.5;
  // x=1 with one w=1 (cost 1+1+2 + edge 1 = 5) needs 50 + 40 + 10 = 100 > 95.5;
  // the best that fits costs 6 (e.g. all strategy 0: 2+2+2, 20+10+10 = 40).
  Problem p = with_params(95.5);
  Expected<Solution> cbc = solve_with_cbc(p);
  Expected<Solution> exact = solve_brute_force(p);
  ASSERT_TRUE(cbc.ok() && exact.ok());
  EXPECT_DOUBLE_EQ(exact->objective, 6);
  EXPECT_DOUBLE_EQ(cbc->objective, 6);
  EXPECT_LE(cbc->peak_bytes, 95.5);
}

TEST(ImpliedRows, RowWhoseLiveSetIsInsideAnotherIsDropped) {
  // a [100, 50] bytes, b [10, 0]; points {a} and {a, b}, budget 99.5: row {a}
  // can exceed the budget (100) but never exceeds row {a, b}.
  Problem p;
  NodeIdx a = p.add_node("a", {1, 3});
  NodeIdx b = p.add_node("b", {1, 3});
  p.nodes[static_cast<size_t>(a)].bytes = {100, 50};
  p.nodes[static_cast<size_t>(b)].bytes = {10, 0};
  p.live_points = {{a}, {a, b}};
  p.memory_budget = 99.5;
  ReducedProblem r = presolve(p);
  ASSERT_EQ(r.memory_rows.size(), 1u);  // {a} is implied by {a, b}
  EXPECT_EQ(r.memory_rows[0].point, 1);
}

TEST(Dominance, StrategyCostlierEverywhereWithMoreBytesIsDropped) {
  // u: strategy 1 costs more on the node (3 > 1), against every v strategy
  // (5 >= 0, 9 >= 2) and holds more bytes (8 >= 4): dropped. Strategy 2 is
  // cheaper on the node (0), so it stays although its edge row is worse.
  Problem p;
  NodeIdx u = p.add_node("u", {1, 3, 0});
  p.add_node("v", {1, 1});
  p.nodes[static_cast<size_t>(u)].bytes = {4, 8, 4};
  p.add_edge(0, 1, {0, 2,
                    5, 9,
                    6, 6});
  EXPECT_EQ(presolve(p).nodes[0].alive, (std::vector<StrategyIdx>{0, 2}));
  EXPECT_EQ(presolve(p, {.drop_dominated = false}).nodes[0].alive.size(), 3u);
  p.nodes[static_cast<size_t>(u)].bytes = {4, 3, 4};  // now 1 holds fewer bytes: kept
  EXPECT_EQ(presolve(p).nodes[0].alive, (std::vector<StrategyIdx>{0, 1, 2}));
}

// Propagation leaves x a single strategy, then dominance prunes p and y:
// the second compaction must read x's edges at x's new size (a stale mask
// once made it read past the edge matrices, and CBC then aborted on a NaN
// objective; llama3-8b tp-sp with --pair-activation-grads hit it).
TEST(Dominance, AfterPropagationEdgesStayAlignedWithTheirNodes) {
  Problem p;
  p.add_node("p", {5, 0, 5, 5});  // 1 dominates the others
  p.add_node("x", {1, 1, 1});
  p.add_node("y", {5, 1, 1});
  constexpr double kInf = kInfiniteCost;
  p.add_edge(0, 1, {0, kInf, kInf,
                    0, kInf, kInf,
                    0, kInf, kInf,
                    7, kInf, kInf});  // x may only take 0
  p.add_edge(1, 2, {10, 0, 3,
                    0, 0, 0,
                    0, 0, 0});
  ReducedProblem r = presolve(p);
  ASSERT_TRUE(r.infeasible.empty()) << r.infeasible;
  EXPECT_EQ(r.nodes[0].alive, (std::vector<StrategyIdx>{1}));
  EXPECT_EQ(r.nodes[1].alive, (std::vector<StrategyIdx>{0}));
  EXPECT_EQ(r.nodes[2].alive, (std::vector<StrategyIdx>{1}));
  EXPECT_TRUE(r.edges.empty());
  EXPECT_EQ(r.constant_cost, 2.0);  // p 0, x 1, y 1, both edges 0 (p 3 -> x 0 would be 7)
  Expected<Solution> cbc = solve_with_cbc(p);
  ASSERT_TRUE(cbc.ok()) << cbc.error().message;
  EXPECT_EQ(cbc->assignment, (Assignment{1, 0, 1}));
  EXPECT_DOUBLE_EQ(cbc->objective, 2.0);
}

// Strategies carry a "sharding" (one of a few classes); an edge's cost
// depends only on the two ends' classes, as in real graphs, so aggregation
// merges many rows and columns. Parameters carry static bytes.
Problem classed_problem(uint32_t seed) {
  std::mt19937 rng(seed);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Problem p;
  std::vector<std::vector<int>> cls;
  int n = uniform(3, 5);
  for (int v = 0; v < n; ++v) {
    std::vector<double> costs(static_cast<size_t>(uniform(2, 4)));
    std::vector<int> c;
    for (double& x : costs) x = uniform(0, 20), c.push_back(uniform(0, 1));
    NodeIdx idx = p.add_node("n" + std::to_string(v), costs);
    ProblemNode& node = p.nodes[static_cast<size_t>(idx)];
    for (size_t i = 0; i < costs.size(); ++i) node.bytes.push_back(uniform(0, 60));
    if (uniform(0, 1) == 0)
      for (size_t i = 0; i < costs.size(); ++i) node.static_bytes.push_back(uniform(0, 40));
    cls.push_back(c);
  }
  auto add_edge = [&](int a, int b) {
    double m[2][2];
    for (auto& row : m)
      for (double& x : row) x = uniform(0, 7) == 0 ? kInfiniteCost : uniform(0, 15);
    std::vector<double> costs;
    for (int i : cls[static_cast<size_t>(a)])
      for (int j : cls[static_cast<size_t>(b)]) costs.push_back(m[i][j]);
    p.add_edge(a, b, costs);
  };
  for (int v = 1; v < n; ++v) add_edge(uniform(0, v - 1), v);
  if (int a = uniform(0, n - 1), b = uniform(0, n - 1); a != b) add_edge(a, b);
  for (int t = uniform(2, 5); t > 0; --t) {
    std::vector<NodeIdx> live;
    for (int v = 0; v < n; ++v)
      if (uniform(0, 1) == 1) live.push_back(v);
    p.live_points.push_back(live);
  }
  p.memory_budget = uniform(40, 200) + 0.5;  // off the integers: no ties on the budget
  return p;
}

TEST(Reductions, OptimumMatchesBruteForceOnTheUnreducedProblem) {
  int feasible = 0, aggregated = 0;
  for (uint32_t seed = 500; seed < 540; ++seed) {
    Problem p = classed_problem(seed);
    ReducedProblem r = presolve(p);
    for (const ReducedEdge& e : r.edges)
      if (static_cast<size_t>(e.u_classes) < e.u_class.size() ||
          static_cast<size_t>(e.v_classes) < e.v_class.size())
        ++aggregated;
    Expected<Solution> cbc = solve_with_cbc(p);
    Expected<Solution> exact = solve_brute_force(p);
    ASSERT_TRUE(cbc.ok() && exact.ok()) << "seed " << seed;
    ASSERT_EQ(cbc->status, exact->status) << "seed " << seed << ": " << cbc->message;
    if (exact->status != SolveStatus::kOptimal) continue;
    ++feasible;
    EXPECT_NEAR(cbc->objective, exact->objective, 1e-6) << "seed " << seed;
    EXPECT_TRUE(is_feasible(p, evaluate(p, cbc->assignment))) << "seed " << seed;
  }
  EXPECT_GT(feasible, 10) << "the generator should mostly make feasible problems";
  EXPECT_GT(aggregated, 5) << "the generator should make edges with shared classes";
}

}  // namespace
}  // namespace autopar::planner
