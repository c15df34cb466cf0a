#include "planner/problem_builder.h"

#include "sharding/edge_costs.h"

#include <algorithm>
#include <map>
#include <memory>
#include <tuple>

#include <fmt/format.h>

namespace autopar {
namespace {

using planner::Problem;
using planner::ProblemEdge;

NodeId rep_of(const std::vector<NodeId>& representative, NodeId id) {
  return representative[static_cast<size_t>(id)];
}

// Edges keyed by their representatives; repeated layers add to the count.
struct EdgeKey {
  NodeId src, dst;
  int32_t input;
  auto operator<=>(const EdgeKey&) const = default;
};

// EdgeKey::input for the two edges that are not operands.
constexpr int32_t kGradientToParam = -1;
constexpr int32_t kActivationGradPairing = -2;

struct PendingEdge {
  std::vector<double> costs;
  int32_t count = 0;
};

void add_operand_edges(const Graph& graph, const StrategyGraph& sg,
                       const std::vector<NodeId>& rep, RedistributionCache& cache,
                       std::map<EdgeKey, PendingEdge>& pending, int32_t& unreduced) {
  for (NodeId v = 0; v < graph.size(); ++v) {
    const Node& node = graph.node(v);
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      ++unreduced;
      EdgeKey key{rep_of(rep, node.inputs[i]), rep_of(rep, v), static_cast<int32_t>(i)};
      PendingEdge& edge = pending[key];
      if (edge.count++ == 0) {
        edge.costs = edge_costs(graph, sg, v, key.input, cache).time_s;
      }
    }
  }
}

// One more occurrence of an edge between the outputs of key.src and key.dst;
// the first fills its matrix with cost(src output sharding, dst output sharding).
template <typename Cost>
void add_output_edge(const StrategyGraph& sg, const EdgeKey& key,
                     std::map<EdgeKey, PendingEdge>& pending, Cost cost) {
  PendingEdge& edge = pending[key];
  if (edge.count++ > 0) return;
  const NodeStrategies& from = sg.nodes[static_cast<size_t>(key.src)];
  const NodeStrategies& to = sg.nodes[static_cast<size_t>(key.dst)];
  edge.costs.resize(static_cast<size_t>(from.size()) * static_cast<size_t>(to.size()));
  for (StrategyIdx i = 0; i < from.size(); ++i) {
    for (StrategyIdx j = 0; j < to.size(); ++j) {
      edge.costs[static_cast<size_t>(i * to.size() + j)] = cost(from.output(i, 0), to.output(j, 0));
    }
  }
}

// A gradient must end in its parameter's sharding for the optimizer step, a
// buffer update in its buffer's sharding for the next step.
void add_gradient_pairings(const Graph& graph, const StrategyGraph& sg,
                           const std::vector<NodeId>& rep, RedistributionCache& cache,
                           std::map<EdgeKey, PendingEdge>& pending, int32_t& unreduced) {
  for (const GraphOutput& out : graph.outputs()) {
    if (out.placeholder() == kNoNode) continue;
    ++unreduced;
    EdgeKey key{rep_of(rep, out.node), rep_of(rep, out.placeholder()), kGradientToParam};
    RedistributionCache::MetaId meta = cache.intern(graph.node(key.src).meta());
    add_output_edge(sg, key, pending, [&](const Sharding& from, const Sharding& to) {
      return from == to ? 0.0 : cache.time(meta, from, to);
    });
  }
}

// The gradient flowing back to an activation is placed as the activation is
// (pairs_as_gradient): a 0 / forbidden matrix, so the edge costs no time.
void add_activation_grad_pairings(const Graph& graph, const StrategyGraph& sg,
                                  const std::vector<NodeId>& rep,
                                  std::map<EdgeKey, PendingEdge>& pending, int32_t& unreduced) {
  for (const GradientLink& link : graph.gradient_links()) {
    ++unreduced;
    EdgeKey key{rep_of(rep, link.value), rep_of(rep, link.grad), kActivationGradPairing};
    add_output_edge(sg, key, pending, [](const Sharding& value, const Sharding& grad) {
      return pairs_as_gradient(value, grad) ? 0.0 : planner::kInfiniteCost;
    });
  }
}

// memory_points: the candidate peak points before add_time_points prunes them.
void count_unreduced_ilp(const Graph& graph, const StrategyGraph& sg, bool pair_activation_grads,
                         int64_t memory_points, BuiltProblem& built) {
  auto strategies = [&](NodeId v) {
    return static_cast<int64_t>(sg.nodes[static_cast<size_t>(v)].size());
  };
  auto edge = [&](NodeId u, NodeId v) {
    built.unreduced_variables += strategies(u) * strategies(v);
    built.unreduced_constraints += strategies(u) + strategies(v);
  };
  for (NodeId v = 0; v < graph.size(); ++v) {
    built.unreduced_variables += strategies(v);
    built.unreduced_constraints += 1;
    for (NodeId u : graph.node(v).inputs) edge(u, v);
  }
  for (const GraphOutput& out : graph.outputs())
    if (out.placeholder() != kNoNode) edge(out.node, out.placeholder());
  if (pair_activation_grads)
    for (const GradientLink& link : graph.gradient_links()) edge(link.value, link.grad);
  built.unreduced_constraints += memory_points;
}

void emit_edges(std::map<EdgeKey, PendingEdge>& pending, const RecomputeChoices& recompute, Problem& problem) {
  for (auto& [key, edge] : pending) {
    edge.costs = recompute.expand_edge(key.src, key.dst, key.input, std::move(edge.costs));
    if (edge.count > 1) {
      for (double& c : edge.costs) c *= edge.count;
    }
    if (key.src == key.dst) {
      // Both ends share variables: only the diagonal can be chosen.
      auto& costs = problem.nodes[static_cast<size_t>(key.dst)].costs;
      for (size_t s = 0; s < costs.size(); ++s) costs[s] += edge.costs[s * costs.size() + s];
      continue;
    }
    problem.add_edge(key.src, key.dst, std::move(edge.costs), key.input);
  }
}

// One holding over positions [start, end]: a node's bytes (pair < 0) or a
// pair holding's, between the least and most its strategies can give.
struct Interval {
  int32_t start = 0, end = 0;
  double lo = 0, hi = 0;
  NodeId node = kNoNode;
  planner::PairIdx pair = -1;
};

// Time points where the activation peak can be. A point is dropped when even
// its largest possible bytes (every holding at its biggest) stay below the
// smallest possible bytes of another point: its row can never bind before
// that one does. Returns the candidate count.
int32_t add_time_points(const std::vector<Interval>& intervals, int32_t positions, Problem& problem) {
  std::vector<int32_t> starts(intervals.size()), ends(intervals.size());
  for (size_t i = 0; i < intervals.size(); ++i) starts[i] = intervals[i].start, ends[i] = intervals[i].end;
  std::vector<int32_t> points = peak_candidate_points(starts, ends, positions);
  const auto n = static_cast<size_t>(positions);
  std::vector<std::vector<size_t>> starting(n), ending(n);
  for (size_t i = 0; i < intervals.size(); ++i) {
    starting[static_cast<size_t>(intervals[i].start)].push_back(i);
    ending[static_cast<size_t>(intervals[i].end)].push_back(i);
  }
  std::vector<double> lo(points.size()), hi(points.size());
  double lo_now = 0, hi_now = 0, best_lo = 0;
  size_t next = 0;
  for (size_t t = 0; t < n && next < points.size(); ++t) {
    for (size_t i : starting[t]) lo_now += intervals[i].lo, hi_now += intervals[i].hi;
    if (points[next] == static_cast<int32_t>(t)) {
      lo[next] = lo_now;
      hi[next] = hi_now;
      best_lo = std::max(best_lo, lo_now);
      ++next;
    }
    for (size_t i : ending[t]) lo_now -= intervals[i].lo, hi_now -= intervals[i].hi;
  }
  std::vector<int32_t> kept;
  for (size_t p = 0; p < points.size(); ++p) {
    if (hi[p] > best_lo || lo[p] == best_lo) kept.push_back(points[p]);
  }
  // Materialise the live lists of the kept points with one sweep.
  std::vector<size_t> live_now;
  size_t k = 0;
  for (size_t t = 0; t < n && k < kept.size(); ++t) {
    for (size_t i : starting[t]) live_now.push_back(i);
    if (kept[k] == static_cast<int32_t>(t)) {
      std::vector<planner::NodeIdx> nodes;
      std::vector<planner::PairIdx> pairs;
      for (size_t i : live_now) {
        if (intervals[i].pair >= 0) pairs.push_back(intervals[i].pair);
        else nodes.push_back(intervals[i].node);
      }
      std::sort(nodes.begin(), nodes.end());
      std::sort(pairs.begin(), pairs.end());
      problem.live_points.push_back(std::move(nodes));
      problem.live_pairs.push_back(std::move(pairs));
      ++k;
    }
    if (!ending[t].empty()) {
      std::erase_if(live_now, [&](size_t i) { return intervals[i].end == static_cast<int32_t>(t); });
    }
  }
  return static_cast<int32_t>(points.size());
}

// The last position at which each view's result is read, directly or
// through views of it (a graph output counts as read where step_memory.h
// keeps it); -1 for nodes that are not views.
std::vector<int32_t> view_read_ends(const Graph& graph) {
  const auto n = static_cast<size_t>(graph.size());
  std::vector<int32_t> end(n, -1);
  auto is_view = [&](NodeId v) {
    const Node& node = graph.node(v);
    return node.op != OpId::kGetItem && !node.inputs.empty() && aliases_input(node);
  };
  for (NodeId v = 0; v < graph.size(); ++v) {
    if (is_view(v)) end[static_cast<size_t>(v)] = v;
    for (NodeId input : graph.node(v).inputs)
      if (end[static_cast<size_t>(input)] >= 0) end[static_cast<size_t>(input)] = std::max(end[static_cast<size_t>(input)], v);
  }
  for (const GraphOutput& out : graph.outputs()) {
    auto& e = end[static_cast<size_t>(out.node)];
    if (e >= 0) e = out.placeholder() == kNoNode ? graph.size() - 1 : std::max(e, out.node);
  }
  for (NodeId v = graph.size() - 1; v >= 0; --v) {
    NodeId input = graph.node(v).inputs.empty() ? kNoNode : graph.node(v).inputs[0];
    if (is_view(v) && input != kNoNode && end[static_cast<size_t>(input)] >= 0)
      end[static_cast<size_t>(input)] = std::max(end[static_cast<size_t>(input)], end[static_cast<size_t>(v)]);
  }
  return end;
}

// A view whose operand is redistributed views the copy and keeps it over its
// liveness (step_memory.h): one pair holding per view, bytes the view's
// operand sharding gives when it differs from the producer's, 0 when equal.
// The producer's own storage still counts to the view's last read (the rows
// over-count it when the copy lets it die sooner). Matrices are computed
// once per representative pair.
void add_view_copies(const Graph& graph, const StrategyGraph& sg, const std::vector<NodeId>& rep,
                     const RecomputeChoices& recompute, Problem& problem, std::vector<Interval>& intervals) {
  std::vector<int32_t> end = view_read_ends(graph);
  std::map<std::pair<NodeId, NodeId>, std::shared_ptr<const std::vector<double>>> matrices;
  for (NodeId v = 0; v < graph.size(); ++v) {
    if (end[static_cast<size_t>(v)] < 0) continue;
    NodeId u = graph.node(v).inputs[0];
    auto [it, fresh] = matrices.try_emplace({rep_of(rep, u), rep_of(rep, v)});
    if (fresh) {
      NodeId ru = it->first.first, rv = it->first.second;
      const NodeStrategies &from = sg.nodes[static_cast<size_t>(ru)], &to = sg.nodes[static_cast<size_t>(rv)];
      int out = producer_output_index(graph, rv, 0);
      const TensorMeta& meta = input_meta(graph, rv, 0);
      auto bytes = std::make_shared<std::vector<double>>(static_cast<size_t>(from.size()) * static_cast<size_t>(to.size()), 0.0);
      std::vector<double> copy(static_cast<size_t>(to.size()));
      for (StrategyIdx j = 0; j < to.size(); ++j) copy[static_cast<size_t>(j)] = local_tensor_bytes(meta, to.input(j, 0), sg.mesh);
      for (StrategyIdx i = 0; i < from.size(); ++i)
        for (StrategyIdx j = 0; j < to.size(); ++j)
          if (from.output(i, out) != to.input(j, 0))
            (*bytes)[static_cast<size_t>(i * to.size() + j)] = copy[static_cast<size_t>(j)];
      it->second = recompute.expand_pair(ru, rv, std::move(bytes));
    }
    const std::vector<double>& bytes = *it->second;
    double hi = *std::max_element(bytes.begin(), bytes.end());
    if (hi == 0) continue;
    intervals.push_back({v, end[static_cast<size_t>(v)], *std::min_element(bytes.begin(), bytes.end()), hi,
                         kNoNode, static_cast<planner::PairIdx>(problem.pairs.size())});
    problem.pairs.push_back({u, v, it->second});
  }
}

// A doubled node's holding over [start, end] becomes its own part up to
// drop_after, a follower holding the window (0 bytes for the recomputed
// strategies) and a follower holding the rest (recompute_choices.h).
void add_recompute_window(Problem& problem, const RecomputeWindow& window, Interval& own,
                          std::vector<Interval>& intervals) {
  const NodeId v = own.node;
  const std::vector<double>& bytes = problem.nodes[static_cast<size_t>(v)].bytes;
  const size_t n = bytes.size() / 2;
  auto follower = [&](std::string_view part, std::vector<double> held) {
    auto f = static_cast<NodeId>(problem.nodes.size());
    problem.add_node(fmt::format("{}#{}", problem.nodes[static_cast<size_t>(v)].name, part),
                     std::vector<double>(bytes.size(), 0.0));
    problem.nodes.back().bytes = std::move(held);
    problem.add_equal(v, f);
    return f;
  };
  const int32_t window_end = std::min(own.end, window.restore_at - 1);
  if (window_end > window.drop_after) {
    std::vector<double> in_window = bytes;
    std::fill(in_window.begin() + static_cast<std::ptrdiff_t>(n), in_window.end(), 0.0);
    NodeId w = follower("recompute-window", std::move(in_window));
    intervals.push_back({window.drop_after + 1, window_end, 0.0, own.hi, w, -1});
  }
  // Re-run at restore_at, it is held there even when nothing reads it later
  // (a whole layer's re-run node); kept, it is not.
  std::vector<double> restored = bytes;
  if (own.end < window.restore_at) std::fill(restored.begin(), restored.begin() + static_cast<std::ptrdiff_t>(n), 0.0);
  const double lo = own.end < window.restore_at ? 0.0 : own.lo;
  NodeId after = follower("restored", std::move(restored));
  intervals.push_back({window.restore_at, std::max(own.end, window.restore_at), lo, own.hi, after, -1});
  own.end = std::min(own.end, window.drop_after);
}

}  // namespace

BuiltProblem build_problem(const Graph& graph, const StrategyGraph& sg,
                           const std::vector<NodeId>& rep,
                           const std::vector<std::vector<StrategyIdx>>& allowed,
                           RedistributionCache& cache, const ProblemBuildOptions& options) {
  BuiltProblem built;
  Problem& problem = built.problem;
  problem.memory_budget = options.memory_budget;
  for (NodeId v = 0; v < graph.size(); ++v) {
    const NodeStrategies& ns = sg.nodes[static_cast<size_t>(v)];
    std::vector<double> costs(static_cast<size_t>(ns.size()));
    for (StrategyIdx s = 0; s < ns.size(); ++s) costs[static_cast<size_t>(s)] = ns.cost(s);
    problem.add_node(graph.node(v).name, std::move(costs));
  }
  // Memory (step_memory.h): what is held all step is static; every other
  // holding is one interval per node, listed at the time points.
  const std::vector<StepHolding> held = step_holdings(graph, sg, options.optimizer_bytes_per_element);
  std::vector<double> min_bytes(static_cast<size_t>(graph.size()), 0);
  std::vector<double> max_bytes(static_cast<size_t>(graph.size()), 0);
  for (const StepHolding& h : held) {
    planner::ProblemNode& pn = problem.nodes[static_cast<size_t>(h.node)];
    if (h.all_step(graph.size() - 1)) {
      if (pn.static_bytes.empty()) pn.static_bytes.assign(h.bytes.size(), 0.0);
      for (size_t s = 0; s < h.bytes.size(); ++s) pn.static_bytes[s] += h.bytes[s];
      continue;
    }
    pn.bytes = h.bytes;
    min_bytes[static_cast<size_t>(h.node)] = *std::min_element(h.bytes.begin(), h.bytes.end());
    max_bytes[static_cast<size_t>(h.node)] = *std::max_element(h.bytes.begin(), h.bytes.end());
  }
  const RecomputeChoices no_recompute(graph, sg, rep, RecomputeMode::kNone);
  const RecomputeChoices& recompute = options.recompute ? *options.recompute : no_recompute;
  built.recompute_candidates = recompute.candidates().count;
  built.recomputable = recompute.doubled_count();
  for (NodeId v = 0; v < graph.size(); ++v) {
    std::vector<StrategyIdx> pins = allowed[static_cast<size_t>(v)];
    if (recompute.doubled(v)) recompute.double_node(v, problem.nodes[static_cast<size_t>(v)], pins);
    if (!pins.empty()) problem.pins.push_back({v, std::move(pins)});
  }
  for (NodeId v = 0; v < graph.size(); ++v) {
    if (rep_of(rep, v) != v) problem.add_equal(rep_of(rep, v), v);
  }
  std::map<EdgeKey, PendingEdge> pending;
  add_operand_edges(graph, sg, rep, cache, pending, built.unreduced_edges);
  add_gradient_pairings(graph, sg, rep, cache, pending, built.unreduced_edges);
  if (options.pair_activation_grads) {
    add_activation_grad_pairings(graph, sg, rep, pending, built.unreduced_edges);
    built.activation_grad_pairs = static_cast<int32_t>(graph.gradient_links().size());
  }
  for (auto [u, v] : recompute.exclusive_pairs()) {
    EdgeKey key{rep_of(rep, u), rep_of(rep, v), kRecomputeExclusive};
    PendingEdge& edge = pending[key];
    const auto strategies = [&](NodeId n) { return static_cast<size_t>(sg.nodes[static_cast<size_t>(n)].size()); };
    if (edge.count++ == 0) edge.costs.assign(strategies(key.src) * strategies(key.dst), 0.0);
  }
  emit_edges(pending, recompute, problem);
  int32_t memory_points = 0;
  if (problem.memory_budget < planner::kNoBudget) {
    std::vector<Interval> intervals;
    for (const StepHolding& h : held) {
      if (h.all_step(graph.size() - 1)) continue;
      Interval interval{h.start, h.end, min_bytes[static_cast<size_t>(h.node)],
                        max_bytes[static_cast<size_t>(h.node)], h.node, -1};
      if (recompute.doubled(h.node) && h.tensor == h.node && h.kind == MemoryKind::kActivation) {
        add_recompute_window(problem, recompute.window(h.node), interval, intervals);
      }
      intervals.push_back(interval);
    }
    add_view_copies(graph, sg, rep, recompute, problem, intervals);
    memory_points = add_time_points(intervals, graph.size(), problem);
  }
  count_unreduced_ilp(graph, sg, options.pair_activation_grads, memory_points, built);
  return built;
}

}  // namespace autopar
