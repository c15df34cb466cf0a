// CBC (after presolve) against brute force on small random problems with
// forbidden pairs, pins, follows and memory rows; fixed seeds.
#include <algorithm>
#include <memory>
#include <optional>
#include <random>

#include <gtest/gtest.h>

#include "planner/brute_force.h"
#include "planner/cbc_solver.h"
#include "planner/relaxation_bound.h"

namespace autopar::planner {
namespace {

struct Knobs {
  bool memory = false;
  bool pins = false;
  bool follows = false;
  bool pairs = false;  // pair holdings (bytes both ends decide), memory only
  bool larger = false; // 7-8 nodes and more cycles: LP relaxations often fractional
};

class RandomProblem {
 public:
  explicit RandomProblem(uint32_t seed) : rng_(seed) {}

  Problem make(const Knobs& k) {
    Problem p;
    int n = k.larger ? uniform(7, 8) : uniform(3, 6);
    for (int v = 0; v < n; ++v) add_node(p, v, k.memory);
    for (int v = 1; v < n; ++v) add_edge(p, uniform(0, v - 1), v);  // a random tree
    for (int extra = k.larger ? uniform(3, 6) : uniform(0, 2); extra > 0; --extra) {
      int a = uniform(0, n - 1), b = uniform(0, n - 1);
      if (a != b) add_edge(p, a, b);
    }
    if (k.pins) p.pins.push_back(Pin{uniform(0, n - 1), {0}});
    if (k.follows) add_follow(p, n);
    if (k.memory) add_memory(p, n);
    if (k.memory && k.pairs) add_pairs(p, n);
    return p;
  }

 private:
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  void add_node(Problem& p, int v, bool memory) {
    std::vector<double> costs(static_cast<size_t>(uniform(1, 4)));
    for (double& c : costs) c = uniform(0, 20);
    if (costs.size() > 1 && uniform(0, 9) == 0) costs[1] = kInfiniteCost;
    NodeIdx idx = p.add_node("n" + std::to_string(v), costs);
    if (!memory) return;
    auto& node = p.nodes[static_cast<size_t>(idx)];
    for (size_t i = 0; i < costs.size(); ++i) node.bytes.push_back(uniform(0, 100));
    if (uniform(0, 2) == 0)
      for (size_t i = 0; i < costs.size(); ++i) node.static_bytes.push_back(uniform(0, 40));
  }

  void add_edge(Problem& p, int a, int b) {
    size_t count = p.strategy_count(a) * p.strategy_count(b);
    std::vector<double> costs(count);
    for (double& c : costs) c = uniform(0, 9) == 0 ? kInfiniteCost : uniform(0, 15);
    p.add_edge(a, b, costs);
  }

  void add_follow(Problem& p, int n) {
    int leader = uniform(0, n - 1), follower = uniform(0, n - 1);
    if (leader == follower) return;
    std::vector<StrategyIdx> map(p.strategy_count(leader));
    int fc = static_cast<int>(p.strategy_count(follower));
    for (StrategyIdx& j : map) j = uniform(0, 4) == 0 ? kNoStrategy : uniform(0, fc - 1);
    p.follows.push_back(Follow{leader, follower, map});
  }

  void add_memory(Problem& p, int n) {
    for (int t = uniform(2, 5); t > 0; --t) {
      std::vector<NodeIdx> live;
      for (int v = 0; v < n; ++v)
        if (uniform(0, 1) == 1) live.push_back(v);
      p.live_points.push_back(live);
    }
    // Between all-zero and a rough all-max peak, off the integers so no
    // assignment sits exactly on the budget (CBC's tolerance would differ).
    p.memory_budget = uniform(50, 250) + 0.5;
    if (uniform(0, 3) == 0) p.static_budget = uniform(0, 80) + 0.5;
  }

  // Pair holdings between random nodes (joined by an edge or not, in one
  // follow group or not), each live at some of the time points.
  void add_pairs(Problem& p, int n) {
    p.live_pairs.assign(p.live_points.size(), {});
    for (int h = uniform(1, 4); h > 0; --h) {
      int a = uniform(0, n - 1), b = uniform(0, n - 1);
      if (a == b) continue;
      auto bytes = std::make_shared<std::vector<double>>(p.strategy_count(a) * p.strategy_count(b));
      for (double& x : *bytes) x = uniform(0, 2) == 0 ? 0 : uniform(0, 80);
      auto index = static_cast<PairIdx>(p.pairs.size());
      p.pairs.push_back(PairHolding{a, b, std::move(bytes)});
      for (auto& live : p.live_pairs)
        if (uniform(0, 1) == 1) live.push_back(index);
    }
  }

  std::mt19937 rng_;
};

void expect_cbc_matches_brute_force(const Knobs& knobs, uint32_t first_seed, int count) {
  int feasible = 0;
  for (uint32_t seed = first_seed; seed < first_seed + static_cast<uint32_t>(count); ++seed) {
    Problem p = RandomProblem(seed).make(knobs);
    Expected<Solution> cbc = solve_with_cbc(p);
    Expected<Solution> exact = solve_brute_force(p);
    ASSERT_TRUE(cbc.ok() && exact.ok()) << "seed " << seed;
    bool exact_ok = exact->status == SolveStatus::kOptimal;
    ASSERT_EQ(cbc->status, exact->status) << "seed " << seed << ": " << cbc->message;
    if (!exact_ok) {
      if (exact->shortfall && cbc->shortfall) {
        EXPECT_NEAR(cbc->shortfall->lower_bound_bytes, exact->shortfall->lower_bound_bytes, 1e-6)
            << "seed " << seed;
      }
      continue;
    }
    ++feasible;
    EXPECT_NEAR(cbc->objective, exact->objective, 1e-6) << "seed " << seed;
    EXPECT_TRUE(is_feasible(p, evaluate(p, cbc->assignment))) << "seed " << seed;
  }
  EXPECT_GT(feasible, count / 4) << "the generator should mostly make feasible problems";
}

TEST(RandomProblems, CbcMatchesBruteForceOnCostsAndForbiddenPairs) {
  expect_cbc_matches_brute_force({}, /*first_seed=*/100, /*count=*/15);
}

TEST(RandomProblems, CbcMatchesBruteForceWithPinsAndFollows) {
  expect_cbc_matches_brute_force({.pins = true, .follows = true}, 200, 15);
}

TEST(RandomProblems, CbcMatchesBruteForceWithMemoryRows) {
  expect_cbc_matches_brute_force({.memory = true}, 300, 15);
}

TEST(RandomProblems, CbcMatchesBruteForceWithPairHoldings) {
  expect_cbc_matches_brute_force({.memory = true, .pairs = true}, 500, 25);
}

TEST(RandomProblems, CbcMatchesBruteForceWithPairHoldingsPinsAndFollows) {
  expect_cbc_matches_brute_force({.memory = true, .pins = true, .follows = true, .pairs = true}, 600, 40);
}

// A budget nothing meets: the least peak (min-peak rows entered lazily, the
// LP first, reduced-cost fixing when it is fractional) is exact and matches
// enumeration, on small problems and larger ones with fractional relaxations.
TEST(RandomProblems, TheLeastPeakOfAnUnmetBudgetMatchesBruteForce) {
  int compared = 0;
  for (uint32_t seed = 800; seed < 840; ++seed) {
    Problem p = RandomProblem(seed).make(
        {.memory = true, .follows = true, .pairs = seed % 2 == 0, .larger = seed % 4 < 2});
    p.memory_budget = 0.5;
    p.static_budget = kNoBudget;
    Expected<Solution> cbc = solve_with_cbc(p), exact = solve_brute_force(p);
    ASSERT_TRUE(cbc.ok() && exact.ok()) << "seed " << seed;
    ASSERT_EQ(cbc->status, exact->status) << "seed " << seed;
    // Skip: no assignment avoids every forbidden pair (brute force's least peak
    // is then infinite), or none uses memory.
    if (!exact->shortfall || !(exact->shortfall->lower_bound_bytes < kInfiniteCost)) continue;
    ASSERT_TRUE(cbc->shortfall.has_value()) << "seed " << seed << ": " << cbc->message;
    ++compared;
    EXPECT_TRUE(cbc->shortfall->exact) << "seed " << seed;
    EXPECT_NEAR(cbc->shortfall->lower_bound_bytes, exact->shortfall->lower_bound_bytes, 1e-6)
        << "seed " << seed;
  }
  EXPECT_GT(compared, 25);
}

// Every row in the ILP from the start gives the same optima as rows entered lazily.
TEST(RandomProblems, LazyMemoryRowsGiveTheSameOptimaAsAllRows) {
  int compared = 0;
  for (uint32_t seed = 700; seed < 730; ++seed) {
    Problem p = RandomProblem(seed).make({.memory = true, .pins = true, .follows = true, .pairs = true});
    SolverOptions all;
    all.lazy_memory_rows = false;
    Expected<Solution> lazy = solve_with_cbc(p), eager = solve_with_cbc(p, all);
    ASSERT_TRUE(lazy.ok() && eager.ok()) << "seed " << seed;
    ASSERT_EQ(lazy->status, eager->status) << "seed " << seed;
    if (lazy->status != SolveStatus::kOptimal) continue;
    ++compared;
    EXPECT_NEAR(lazy->objective, eager->objective, 1e-6) << "seed " << seed;
    EXPECT_TRUE(is_feasible(p, evaluate(p, lazy->assignment))) << "seed " << seed;
  }
  EXPECT_GT(compared, 7);
}

// Larger problems with cycles, where the LP relaxation is often fractional:
// the incumbent from rounding it and reduced-cost fixing (on by default) find
// the brute-force optimum, as CBC on the whole model does.
TEST(RandomProblems, ReducedCostFixingFindsTheOptimumOfFractionalRelaxations) {
  int fixed = 0;
  for (uint32_t seed = 800; seed < 1000; ++seed) {
    Problem p = RandomProblem(seed).make({.memory = seed % 2 == 1, .larger = true});
    SolverOptions whole;
    whole.reduced_cost_fixing = false;
    Expected<Solution> fixing = solve_with_cbc(p), plain = solve_with_cbc(p, whole);
    Expected<Solution> exact = solve_brute_force(p);
    ASSERT_TRUE(fixing.ok() && plain.ok() && exact.ok()) << "seed " << seed;
    ASSERT_EQ(fixing->status, exact->status) << "seed " << seed << ": " << fixing->message;
    ASSERT_EQ(plain->status, exact->status) << "seed " << seed;
    fixed += fixing->stats.relaxation_incumbents;
    if (exact->status != SolveStatus::kOptimal) continue;
    EXPECT_NEAR(fixing->objective, exact->objective, 1e-6) << "seed " << seed;
    EXPECT_NEAR(plain->objective, exact->objective, 1e-6) << "seed " << seed;
    EXPECT_LE(fixing->best_bound, exact->objective + 1e-6) << "seed " << seed;
    EXPECT_TRUE(is_feasible(p, evaluate(p, fixing->assignment))) << "seed " << seed;
  }
  EXPECT_GT(fixed, 9) << "too few fractional relaxations to exercise the fixing";
}

// The pairwise dual bound (relaxation_bound.h) never exceeds the optimum,
// memory rows and all; every assignment cheaper than an incumbent obeys its
// fixing pins (so the optimum does); and it is the optimum itself on trees
// without memory rows, where the pairwise LP is exact.
TEST(RandomProblems, DualBoundIsValidItsFixingKeepsTheOptimumAndTreesAreExact) {
  int trees = 0, pruned = 0;
  for (uint32_t seed = 1000; seed < 1150; ++seed) {
    const bool memory = seed % 3 == 0;
    Problem p = RandomProblem(seed).make({.memory = memory, .pins = seed % 4 == 1, .follows = seed % 5 == 2,
                                          .larger = seed % 2 == 0});
    Expected<Solution> exact = solve_brute_force(p);
    ASSERT_TRUE(exact.ok()) << "seed " << seed;
    if (exact->status != SolveStatus::kOptimal) continue;
    std::optional<RelaxationBound> b = relaxation_bound(p, exact->objective);
    ASSERT_TRUE(b) << "seed " << seed << ": presolve called a feasible problem infeasible";
    EXPECT_LE(b->bound, exact->objective + 1e-9) << "seed " << seed;
    for (const Pin& pin : b->fixing_pins) {
      StrategyIdx taken = exact->assignment[static_cast<size_t>(pin.node)];
      EXPECT_NE(std::find(pin.allowed.begin(), pin.allowed.end(), taken), pin.allowed.end())
          << "seed " << seed << ": fixing dropped the optimum's strategy at node " << pin.node;
    }
    pruned += b->strategies - b->strategies_left;
  }
  for (uint32_t seed = 1200; seed < 1260; ++seed) {
    RandomProblem gen(seed);
    Problem p = gen.make({});
    p.edges.resize(p.nodes.size() - 1);  // the random tree alone
    Expected<Solution> exact = solve_brute_force(p);
    ASSERT_TRUE(exact.ok()) << "seed " << seed;
    if (exact->status != SolveStatus::kOptimal) continue;
    std::optional<RelaxationBound> b = relaxation_bound(p);
    ASSERT_TRUE(b) << "seed " << seed;
    EXPECT_NEAR(b->bound, exact->objective, 1e-6) << "seed " << seed;
    ++trees;
  }
  EXPECT_GT(trees, 40);
  EXPECT_GT(pruned, 0) << "no strategy was ever fixed: the fixing is not exercised";
}

// Pruning to targets above the dual bound (target_pruning.h), forced on for
// these small problems: the same optima and verdicts as brute force, with
// most answered by a pruned problem, and some only after a first target
// proved too low.
TEST(RandomProblems, TargetPruningKeepsTheOptimum) {
  SolverOptions pruning;
  pruning.target_pruning_min_pairs = 0;
  int answered_pruned = 0, raised = 0;
  for (uint32_t seed = 4000; seed < 4160; ++seed) {
    Problem p = RandomProblem(seed).make({.memory = seed % 2 == 0, .pins = seed % 4 == 1,
                                          .follows = seed % 5 == 2, .pairs = seed % 4 == 0,
                                          .larger = seed % 3 != 0});
    Expected<Solution> cbc = solve_with_cbc(p, pruning);
    Expected<Solution> exact = solve_brute_force(p);
    ASSERT_TRUE(cbc.ok() && exact.ok()) << "seed " << seed;
    ASSERT_EQ(cbc->status, exact->status) << "seed " << seed << ": " << cbc->message;
    if (exact->status != SolveStatus::kOptimal) continue;
    EXPECT_NEAR(cbc->objective, exact->objective, 1e-6) << "seed " << seed;
    EXPECT_LE(cbc->best_bound, exact->objective + 1e-6) << "seed " << seed;
    EXPECT_TRUE(is_feasible(p, evaluate(p, cbc->assignment))) << "seed " << seed;
    answered_pruned += cbc->stats.pruned_variables > 0 ? 1 : 0;
    // More targets than rounds: some round's first target was below its optimum.
    raised += cbc->stats.pruning_targets > cbc->stats.memory_row_rounds ? 1 : 0;
  }
  EXPECT_GT(answered_pruned, 40) << "pruned problems rarely answered: the pruning is not exercised";
  EXPECT_GT(raised, 5) << "no target was ever too low: the next target is not exercised";
}

// With memory rows priced in (memory_dual_bound), the bound still never
// exceeds the optimum of the assignments that fit, its fixing keeps that
// optimum, it never falls below the memory-free bound, and where the budget
// binds it rises above it.
TEST(RandomProblems, MemoryPricedBoundIsValidAndTighterWhereTheBudgetBinds) {
  int binding = 0, raised = 0;
  for (uint32_t seed = 3000; seed < 3200; ++seed) {
    Problem p = RandomProblem(seed).make(
        {.memory = true, .pins = seed % 4 == 1, .follows = seed % 5 == 2, .pairs = seed % 2 == 0});
    Expected<Solution> exact = solve_brute_force(p);
    ASSERT_TRUE(exact.ok()) << "seed " << seed;
    if (exact->status != SolveStatus::kOptimal) continue;
    Problem free = p;
    free.memory_budget = free.static_budget = kNoBudget;
    Expected<Solution> unbounded = solve_brute_force(free);
    ASSERT_TRUE(unbounded.ok() && unbounded->status == SolveStatus::kOptimal) << "seed " << seed;
    std::optional<RelaxationBound> with_memory = relaxation_bound(p, exact->objective);
    std::optional<RelaxationBound> without = relaxation_bound(free);
    ASSERT_TRUE(with_memory && without) << "seed " << seed;
    EXPECT_LE(with_memory->bound, exact->objective + 1e-9) << "seed " << seed;
    EXPECT_GE(with_memory->bound, without->bound - 1e-9) << "seed " << seed;
    for (const Pin& pin : with_memory->fixing_pins) {
      StrategyIdx taken = exact->assignment[static_cast<size_t>(pin.node)];
      EXPECT_NE(std::find(pin.allowed.begin(), pin.allowed.end(), taken), pin.allowed.end())
          << "seed " << seed << ": fixing dropped the optimum's strategy at node " << pin.node;
    }
    if (exact->objective > unbounded->objective + 1e-9) {
      ++binding;
      raised += with_memory->bound > without->bound + 1e-9 ? 1 : 0;
    }
  }
  EXPECT_GT(binding, 20) << "too few problems where the budget binds";
  EXPECT_GT(raised, binding / 2) << "the prices rarely raise the bound where the budget binds";
}

TEST(RandomProblems, CbcMatchesBruteForceWithEverything) {
  expect_cbc_matches_brute_force({.memory = true, .pins = true, .follows = true}, 400, 15);
}

}  // namespace
}  // namespace autopar::planner
