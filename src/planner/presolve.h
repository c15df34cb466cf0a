// Presolve: shrinks a Problem before it becomes an ILP.
//
// - Each follow group (a leader and the nodes that follow it, transitively)
//   becomes one reduced node over the leader's strategies; members' costs,
//   bytes and edges are mapped through the follow maps.
// - Strategies that are forbidden (infinite cost, a pin, a follow map with
//   kNoStrategy, an infinite edge inside a group) are dropped, then edge
//   consistency removes strategies whose every partner across an edge is
//   forbidden, until nothing changes.
// - Parallel edges between the same two groups are summed into one matrix.
// - Dominated strategies go: one whose node cost, every edge cost against
//   every partner and every byte count are >= another's of the same node.
// - An edge with a single-strategy end folds into the other end's costs.
// - Exact edge aggregation: strategies of one end whose cost rows (columns)
//   across an edge are equal form a class, and the ILP's pair variables run
//   over class pairs (an edge's cost depends only on the producer's output
//   sharding and the consumer's input sharding, which many strategies share).
//   An edge whose end has a single class folds into the other end's costs.
// - Pair holdings (bytes both ends of an edge decide) ride on the edge
//   between their groups: dominance and the classes respect them, and an
//   edge folded into one end folds them into that end's bytes.
// - Memory rows: per time point, the per-node byte vectors are summed per
//   reduced node (pair holdings per edge, over its class pairs), and each vector's minimum moves into the row's constant (one
//   strategy is always chosen), which zeroes many coefficients. Rows that can
//   never exceed their budget are dropped. Static bytes (parameters, resident
//   all step) enter every time-point row through one shared sum.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "planner/problem.h"

namespace autopar::planner {

using GroupIdx = int32_t;  // a reduced node

struct ReducedNode {
  NodeIdx root = 0;                // the group's leader in the Problem
  std::vector<StrategyIdx> alive;  // leader strategies still possible
  std::vector<double> costs;       // per alive strategy, members and folded edges
};

// A pair holding (problem.h) between two groups: its bytes over their alive
// strategies, and after aggregation over their classes.
struct HeldOnEdge {
  std::vector<PairIdx> pairs;       // the pair holdings with these bytes (repeated layers)
  std::vector<double> bytes;        // row-major [alive of u][alive of v]
  std::vector<double> class_bytes;  // row-major [u class][v class]
};

// A pair holding that one group's strategy decides: both ends are in the
// group, or the edge between their groups folded into it.
struct HeldOnGroup {
  std::vector<PairIdx> pairs;
  GroupIdx group = 0;
  std::vector<double> bytes;  // per alive strategy
};

struct ReducedEdge {
  GroupIdx u = 0;
  GroupIdx v = 0;
  std::vector<HeldOnEdge> held;  // pair holdings between u and v
  std::vector<double> costs;  // row-major [alive of u][alive of v]; may hold kInfiniteCost
  // Aggregation (aggregate_edges): u_class[k] / v_class[l] name the class of
  // each alive strategy; strategies in one class have equal rows / columns,
  // so class_costs[a][b] (row-major, v_classes wide) is the cost of any pair.
  std::vector<int32_t> u_class, v_class;
  int32_t u_classes = 0, v_classes = 0;
  std::vector<double> class_costs;
};

// A term's coefficients, shared by the rows that hold the same ones:
// neighbouring time points mostly repeat a group's bytes (llama3-405b on
// 8x8x8 has 10,987 time rows), and each distinct vector is built once.
using SharedCoefficients = std::shared_ptr<const std::vector<double>>;

struct MemoryTerm {
  GroupIdx group = 0;
  SharedCoefficients shared;  // per alive strategy, minimum already subtracted
  const std::vector<double>& coef() const { return *shared; }
};

// Bytes on an edge's pair variables (pair holdings live at the row's point).
struct EdgeMemoryTerm {
  int32_t edge = 0;           // index into ReducedProblem::edges
  SharedCoefficients shared;  // row-major [u class][v class], minimum already subtracted
  const std::vector<double>& coef() const { return *shared; }
};

struct MemoryRow {
  TimeIdx point = -1;  // index into Problem::live_points; -1: the static-only row
  bool static_budget_row = false;  // static bytes against Problem::static_budget
  double budget = kNoBudget;
  double constant = 0;  // bytes no choice can avoid: a lower bound on the row
  std::vector<MemoryTerm> terms;
  std::vector<EdgeMemoryTerm> edge_terms;  // sorted by edge
  // Shared static bytes: when set, `terms` hold the live bytes only and the
  // row also counts ReducedProblem::static_terms (one ILP variable for their
  // sum instead of repeating every parameter in every row); ilp_constant is
  // the part of the left side that the terms leave out (live and static minima).
  bool shared_static = false;
  double ilp_constant = 0;
};

struct ReducedProblem {
  std::vector<ReducedNode> nodes;
  std::vector<ReducedEdge> edges;  // both ends have two or more strategies
  std::vector<MemoryRow> memory_rows;
  std::vector<MemoryTerm> static_terms;  // static bytes above their minimum, per group
  std::vector<HeldOnGroup> group_held;   // pair holdings that one group decides
  double constant_cost = 0;  // from single-strategy nodes and folded edges
  std::string infeasible;    // non-empty: no assignment exists (says why)
  // Expansion back to the Problem: node -> its group, and the leader-to-node
  // strategy map (identity for leaders).
  std::vector<GroupIdx> group_of;
  std::vector<std::vector<StrategyIdx>> from_root;
};

struct PresolveOptions {
  // Build a row for every time point even when no budget is set and keep rows
  // that cannot bind (for the min-peak-memory problem).
  bool all_memory_rows = false;
  // Drop strategies another of the same node dominates (costs and bytes no
  // lower anywhere); off only in tests that look at the unpruned domains.
  bool drop_dominated = true;
  // Build the memory rows; off for relaxations that ignore memory (a bound
  // without them is lower, still valid, and far faster on 3-D meshes).
  bool memory_rows = true;
};

// Requires validate(problem) to have passed.
ReducedProblem presolve(const Problem& problem, const PresolveOptions& options = {});

// Fills the classes of every edge and folds edges with a single-class end
// into the other end's node costs (exact: the edge cost then depends on that
// end alone). Part of presolve; exposed for tests.
void aggregate_edges(ReducedProblem& reduced);

// The memory-row part of presolve (memory_rows.cc); needs groups and domains.
void build_memory_rows(const Problem& problem, ReducedProblem& reduced,
                       const PresolveOptions& options);

// The left side of a memory row (bytes) under choice (an index into each
// group's alive strategies), static terms included when the row shares them.
double memory_row_value(const ReducedProblem& reduced, const MemoryRow& row,
                        const std::vector<int32_t>& choice);

// choice[g] is an index into nodes[g].alive.
Assignment expand(const ReducedProblem& reduced, const std::vector<int32_t>& choice);

// Smallest bytes node `node` can have under the reduced domains.
double min_bytes_of(const Problem& problem, const ReducedProblem& reduced, NodeIdx node,
                    bool static_bytes);

}  // namespace autopar::planner
