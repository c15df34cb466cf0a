// Whole-layer recomputation in pipeline stages (see stage_recompute.h).
#include "pipeline_runtime/stage_recompute.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "memory/recompute.h"

namespace autopar::pipeline {
namespace {

size_t at(NodeId v) { return static_cast<size_t>(v); }

// `nodes` with the re-runs they need inserted, each before its first use.
// rerun: the stage's re-run nodes; held: those already held (re-run by I
// and kept for W), not re-run again. Adds what it re-runs to `made`.
std::vector<NodeId> with_reruns(const Graph& graph, const std::vector<NodeId>& nodes, const std::vector<NodeId>& rerun,
                                const std::vector<char>& is_rerun, const std::vector<char>& held,
                                std::vector<char>& made) {
  constexpr int32_t kUnused = std::numeric_limits<int32_t>::max();
  std::vector<int32_t> first_use(at(graph.size()), kUnused);
  auto need = [&](NodeId x, int32_t i) {
    if (is_rerun[at(x)] && !held[at(x)]) first_use[at(x)] = std::min(first_use[at(x)], i);
  };
  for (size_t i = 0; i < nodes.size(); ++i)
    for (NodeId in : graph.node(nodes[i]).inputs) need(in, static_cast<int32_t>(i));
  for (auto it = rerun.rbegin(); it != rerun.rend(); ++it) {  // readers before what they read
    if (first_use[at(*it)] == kUnused) continue;
    for (NodeId in : graph.node(*it).inputs) need(in, first_use[at(*it)]);
  }
  std::vector<std::vector<NodeId>> before(nodes.size());
  for (NodeId x : rerun) {  // graph order: producers first
    if (first_use[at(x)] == kUnused) continue;
    before[static_cast<size_t>(first_use[at(x)])].push_back(x);
    made[at(x)] = 1;
  }
  std::vector<NodeId> out;
  for (size_t i = 0; i < nodes.size(); ++i) {
    out.insert(out.end(), before[i].begin(), before[i].end());
    out.push_back(nodes[i]);
  }
  return out;
}

}  // namespace

int32_t add_layer_recomputation(const Graph& graph, std::vector<StageProgram>& programs) {
  const RecomputeCandidates candidates = find_layer_recompute(graph);
  int32_t stages = 0;
  for (StageProgram& p : programs) {
    std::vector<NodeId> rerun;
    for (NodeId v : p.forward)
      if (candidates.is_candidate(v)) rerun.push_back(v);
    std::sort(rerun.begin(), rerun.end());
    if (rerun.empty()) continue;
    std::vector<char> is_rerun(at(graph.size()), 0), none(at(graph.size()), 0);
    for (NodeId v : rerun) is_rerun[at(v)] = 1;
    std::vector<char> by_b(at(graph.size()), 0), by_i(at(graph.size()), 0), by_w(at(graph.size()), 0);
    p.backward = with_reruns(graph, p.backward, rerun, is_rerun, none, by_b);
    p.input_grad = with_reruns(graph, p.input_grad, rerun, is_rerun, none, by_i);
    p.weight_grad = with_reruns(graph, p.weight_grad, rerun, is_rerun, by_i, by_w);
    p.rerun.clear();
    for (NodeId v : rerun)
      if (by_b[at(v)] || by_i[at(v)] || by_w[at(v)]) p.rerun.push_back(v);
    stages += p.rerun.empty() ? 0 : 1;
  }
  return stages;
}

std::string rerun_summary(const std::vector<StageProgram>& programs) {
  size_t nodes = 0, stages = 0;
  for (const StageProgram& p : programs) {
    nodes += p.rerun.size();
    stages += p.rerun.empty() ? 0 : 1;
  }
  if (nodes == 0) return "";
  return fmt::format(", whole layers recomputed ({} nodes re-run in {} stages)", nodes, stages);
}

}  // namespace autopar::pipeline
