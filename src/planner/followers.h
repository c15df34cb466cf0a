// Follower folding: a view or one-input pointwise op (transpose, reshape,
// silu, a dtype cast, a scalar multiply) that reads one producer becomes a
// follower of that producer in the Problem (problem.h Follow): for each of the
// producer's strategies it takes the cheapest of its own strategies that
// accepts the producer's output sharding as is, and presolve merges it into
// the producer's variables. This removes most nodes of a transformer's joint
// graph from the ILP.
//
// It is a restriction, not always an identity: the follower can no longer
// reshard its input itself (a consumer further on still can). A node is folded
// only when every producer strategy has a match, so no producer choice is
// lost, and never when it or its producer is pinned (the user's pin wins).
// The gap it causes is measured: tests/autoplan compare the folded optimum
// with the unfolded one on small configs (equal), and bench/RESULTS.md
// records it on the benchmark cases: on llama3-8b b32 s8192 8x8 the folded
// plan is 2.3% slower (701.585 vs 686.005 ms) for a 1.5x faster solve. So it
// is opt-in (`autopar plan --fold-followers`), for the largest problems.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "planner/problem.h"
#include "sharding/strategy.h"

namespace autopar {

// representative: layer sharing (a member follows its representative, so only
// representatives may become followers). allowed: pins per node (empty = free).
std::vector<planner::Follow> find_followers(const Graph& graph, const StrategyGraph& strategies,
                                            const std::vector<NodeId>& representative,
                                            const std::vector<std::vector<StrategyIdx>>& allowed);

}  // namespace autopar
