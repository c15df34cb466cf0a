// The sharding problem: a plain, IR-free request for the solvers.
//
// The planner turns a graph and its per-node sharding strategies into this
// struct: cost vectors per node, resharding matrices per edge, follow and pin
// constraints, and per-device memory (static bytes plus activation liveness).
// The solvers (CBC in cbc_solver.h, brute force in brute_force.h) see only
// this, so they are testable with hand-made five-node problems and stay
// swappable. Costs are seconds, memory is bytes per device.
//
// The ILP (built in ilp_model.cc after presolve.cc folds pins, follows and
// single-strategy nodes away):
//
//   s_{v,i} in {0,1}   node v takes strategy i        (Problem::nodes[v])
//   e_{k,ij} in {0,1}  edge k=(u->v): u takes i and v takes j  (Problem::edges[k])
//
//   minimise   sum_v sum_i c_v[i] s_{v,i}              c_v = ProblemNode::costs
//            + sum_k sum_ij R_k[i][j] e_{k,ij}          R_k = ProblemEdge::costs
//   subject to
//     sum_i s_{v,i} = 1                        for every node v
//     sum_j e_{k,ij} = s_{u,i}                 for every edge k, strategy i of u
//     sum_i e_{k,ij} = s_{v,j}                 for every edge k, strategy j of v
//     e_{k,ij} = 0  when R_k[i][j] = kInfiniteCost  (the column is not built)
//     s_{v,i} = 0  when c_v[i] = kInfiniteCost or i not in Pin::allowed
//     s_{b,j} = sum_{i: map[i]=j} s_{a,i}      Follow{leader a, follower b, map}
//     sum_{v in live(t)} m_v . s_v + sum_v st_v . s_v
//       + sum_{h in pairs(t)} sum_ij H_h[i][j] e_{k(h),ij} <= memory_budget
//                                              for every time point t:
//                                              live(t) = live_points[t],
//                                              m_v = ProblemNode::bytes,
//                                              st_v = ProblemNode::static_bytes,
//                                              pairs(t) = live_pairs[t],
//                                              H_h = PairHolding::bytes on the
//                                              pair variables of h's ends
//     sum_v st_v . s_v <= static_budget        (only when finite)
//
// Presolve substitutes each follower by its leader (so follow rows and the
// follower's variables disappear), drops forbidden strategies instead of
// writing s = 0 rows, folds every edge with a single-strategy end into the
// other end's cost vector, and drops memory rows that cannot be violated.
// It also applies exact reductions that leave the optimum unchanged (details
// in presolve.h): dominated strategies go; an edge's e variables run over
// classes of equal rows/columns (producer/consumer shardings) instead of
// strategy pairs; the static bytes enter the time rows through one shared
// sum; and time rows implied by a neighbouring row are dropped.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "ir/expected.h"

namespace autopar::planner {

using NodeIdx = int32_t;
using StrategyIdx = int32_t;
using EdgeIdx = int32_t;
using TimeIdx = int32_t;

inline constexpr double kInfiniteCost = std::numeric_limits<double>::infinity();
inline constexpr double kNoBudget = std::numeric_limits<double>::infinity();
// In a follow map: the leader's strategy has no matching follower strategy.
inline constexpr StrategyIdx kNoStrategy = -1;

struct ProblemNode {
  std::string name;               // for messages and dumps
  std::vector<double> costs;      // per strategy, seconds; kInfiniteCost = forbidden
  std::vector<double> bytes;      // per strategy: activation bytes per device (empty = 0)
  std::vector<double> static_bytes;  // per strategy: resident all step (empty = 0)
};

struct ProblemEdge {
  NodeIdx src = 0;  // producer
  NodeIdx dst = 0;  // consumer
  int32_t input_index = 0;    // which operand of dst (for messages)
  std::vector<double> costs;  // row-major [src strategy][dst strategy], seconds

  double cost(StrategyIdx i, StrategyIdx j, size_t dst_count) const {
    return costs[static_cast<size_t>(i) * dst_count + static_cast<size_t>(j)];
  }
};

// follower takes map[leader's strategy]; kNoStrategy forbids that leader strategy.
// A node follows at most one leader; chains are fine, cycles are not.
struct Follow {
  NodeIdx leader = 0;
  NodeIdx follower = 0;
  std::vector<StrategyIdx> map;  // size = leader's strategy count
};

struct Pin {
  NodeIdx node = 0;
  std::vector<StrategyIdx> allowed;
};

// Bytes that both ends of a producer -> consumer pair decide: the copy a
// redistribution makes when the consumer keeps it (a view of a redistributed
// operand views the copy, held over the view's liveness; step_memory.h).
using PairIdx = int32_t;
// The bytes are shared: repeated layers hold the same matrix.
struct PairHolding {
  NodeIdx src = 0;
  NodeIdx dst = 0;
  std::shared_ptr<const std::vector<double>> bytes;  // row-major [src strategy][dst strategy]

  double at(StrategyIdx i, StrategyIdx j, size_t dst_count) const {
    return (*bytes)[static_cast<size_t>(i) * dst_count + static_cast<size_t>(j)];
  }
};

struct Problem {
  std::vector<ProblemNode> nodes;
  std::vector<ProblemEdge> edges;
  std::vector<Follow> follows;
  std::vector<Pin> pins;
  std::vector<PairHolding> pairs;
  // Time points in execution order, each the nodes whose outputs are live
  // and (live_pairs, empty or one list per point) the pair holdings.
  std::vector<std::vector<NodeIdx>> live_points;
  std::vector<std::vector<PairIdx>> live_pairs;
  double memory_budget = kNoBudget;  // bytes per device, static included
  double static_budget = kNoBudget;  // bytes per device for static bytes alone

  NodeIdx add_node(std::string name, std::vector<double> costs);
  EdgeIdx add_edge(NodeIdx src, NodeIdx dst, std::vector<double> costs,
                   int32_t input_index = 0);
  // Equal-index follow between two nodes with the same strategy list.
  void add_equal(NodeIdx leader, NodeIdx follower);
  size_t strategy_count(NodeIdx v) const { return nodes[static_cast<size_t>(v)].costs.size(); }
  bool has_memory_limit() const { return memory_budget < kNoBudget || static_budget < kNoBudget; }
};

// Checks sizes, indices, non-negative bytes and follow chains; names the culprit.
Status validate(const Problem& problem);

using Assignment = std::vector<StrategyIdx>;  // per node

struct Evaluation {
  double cost = 0;           // kInfiniteCost if a forbidden pair or strategy is used
  bool satisfies_constraints = true;  // pins and follows
  double peak_bytes = 0;     // max over time points of live + static bytes
  TimeIdx peak_point = -1;   // -1 when there are no time points
  double static_bytes = 0;
  bool fits_memory = true;
};

// Cost and memory of a complete assignment, by direct summation (the ground
// truth the solvers are checked against).
Evaluation evaluate(const Problem& problem, const Assignment& assignment);
bool is_feasible(const Problem& problem, const Evaluation& eval);

// Drops time points whose live set is a subset of a neighbouring point's
// (repeated until none is), which keeps every memory row that can bind since
// bytes are non-negative. Returns the indices of the kept points.
std::vector<TimeIdx> reduce_time_points(Problem& problem);

}  // namespace autopar::planner
