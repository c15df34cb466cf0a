// Recomputation inside the sharding ILP (autopar plan --recompute).
//
// Each recomputation candidate (memory/recompute.h) gets its strategy list
// twice: index s is "strategy s, kept", index s + n is "strategy s,
// recomputed" (n = the node's strategy count). So the choice to recompute is
// made per tensor, in the same ILP and with the same variables as its
// sharding; with layer sharing (layer_repeats.h) a layer's members follow
// their representative, so the choice is made per layer-repeated group. A
// recomputed strategy costs, on top of the kept one:
//   - the node's compute and its own all-reduces once more (node costs);
//   - its operands' redistributions once more (edges into it: the recomputed
//     columns cost twice), and the compute and operand redistribution of each
//     view re-run with it (edges from it into a re-run view: the recomputed
//     rows cost the redistribution twice plus the view's compute; a view of
//     such a view is re-run too, and only the evaluation counts it);
// and holds the node's storage over [start, drop_after] and
// [restore_at, end] only: the builder gives the window and the part after it
// to two extra problem nodes that follow the candidate (problem_builder.cc),
// whose bytes are 0 in the window for recomputed strategies.
// Two candidates listed as exclusive cannot both be recomputed: an edge of
// its own between them (operand index kRecomputeExclusive), 0 everywhere
// but the recomputed-recomputed corner, which it forbids.
//
// kFull re-runs whole layers: its candidates are find_layer_recompute's
// (every re-run node of a layer, each with rerun = {itself}, no exclusive
// pairs), all pinned to the recomputed half; a layer one of whose nodes cannot
// be doubled (its layer-repeated group has a member that is no candidate) is
// left whole, kept. kNone builds nothing and the problem is exactly the one
// without recomputation.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "memory/recompute.h"
#include "planner/problem.h"
#include "sharding/strategy.h"

namespace autopar {

// The operand index of the edges that forbid recomputing two candidates.
inline constexpr int32_t kRecomputeExclusive = -3;

class RecomputeChoices {
 public:
  RecomputeChoices(const Graph& graph, const StrategyGraph& sg, const std::vector<NodeId>& rep,
                   RecomputeMode mode);

  RecomputeMode mode() const { return mode_; }
  bool doubled(NodeId v) const { return !doubled_.empty() && doubled_[static_cast<size_t>(v)]; }
  int32_t doubled_count() const { return doubled_count_; }
  const RecomputeCandidates& candidates() const { return candidates_; }
  const RecomputeWindow& window(NodeId v) const { return candidates_.window[static_cast<size_t>(v)]; }

  // A doubled node's costs, bytes and allowed strategies (empty: all).
  void double_node(NodeId v, planner::ProblemNode& node, std::vector<StrategyIdx>& allowed) const;
  // Exclusive pairs (graph nodes) whose ends are both doubled.
  std::vector<std::pair<NodeId, NodeId>> exclusive_pairs() const;
  // The cost matrix of the edge (src, dst, input), keyed by representatives
  // (input < 0: a pairing edge, not an operand; kRecomputeExclusive: built
  // here, `costs` only sized), with doubled ends expanded.
  std::vector<double> expand_edge(NodeId src, NodeId dst, int32_t input, std::vector<double> costs) const;
  // A view copy's bytes (rows: src's strategies) with a doubled src expanded.
  std::shared_ptr<const std::vector<double>> expand_pair(NodeId src, NodeId dst,
                                                         std::shared_ptr<const std::vector<double>> bytes) const;

  // (strategy, recomputed) of a problem strategy index of graph node v.
  std::pair<StrategyIdx, bool> decode(NodeId v, StrategyIdx s) const;

 private:
  const StrategyGraph& sg_;
  RecomputeMode mode_;
  RecomputeCandidates candidates_;
  std::vector<char> doubled_;
  int32_t doubled_count_ = 0;
  std::set<std::pair<NodeId, NodeId>> exclusive_;  // by representatives
  std::set<std::pair<NodeId, NodeId>> reruns_;     // (root, re-run view) by representatives
  std::vector<NodeId> rep_;
  std::vector<char> forced_;  // kFull: per representative, 1 = recomputed

  void choose_all(const Graph& graph);
};

}  // namespace autopar
