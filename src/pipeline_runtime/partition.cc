// Backward partition of a joint graph over pipeline stages (see partition.h).
#include "pipeline_runtime/partition.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>

namespace autopar::pipeline {
namespace {

constexpr StageIdx kNoStage = -1;

bool contains(const std::vector<Value>& values, NodeId node) {
  return std::any_of(values.begin(), values.end(), [&](const Value& v) { return v.node == node; });
}
bool contains(const std::vector<NodeId>& nodes, NodeId node) {
  return std::find(nodes.begin(), nodes.end(), node) != nodes.end();
}

// A backward node with an unknown unit (an imported graph's backward has no
// scopes) joins the stage of the forward values and params it reads: they
// live there, so it runs there (for a layer norm's backward: its input and
// weight's stage, not the stage its incoming gradient came from). One that
// reads none of them joins the latest stage among the backward values it
// reads (the tangent counts as the last stage's).
StageIdx stage_from_inputs(const Graph& graph, NodeId id, const std::vector<StageIdx>& stage_of,
                           const std::vector<StageIdx>& param_stage, NodeId last_forward, StageIdx last) {
  StageIdx anchored = kNoStage, latest = kNoStage;
  for (NodeId in : graph.node(id).inputs) {
    const Node& n = graph.node(in);
    if (n.is_placeholder()) {
      if (n.kind == PlaceholderKind::kTangent) latest = std::max(latest, last);
      anchored = std::max(anchored, param_stage[static_cast<size_t>(in)]);
      continue;
    }
    StageIdx s = stage_of[static_cast<size_t>(in)];
    if (in <= last_forward) {
      anchored = std::max(anchored, s);
    } else {
      latest = std::max(latest, s);
    }
  }
  return anchored != kNoStage ? anchored : latest;
}

// Whether backward node `id` of stage `s` may read `in`; "" when it may,
// otherwise what is wrong.
std::string check_backward_input(const Graph& graph, const std::vector<Stage>& stages,
                                 const std::vector<StageIdx>& stage_of, NodeId first_backward,
                                 StageIdx s, NodeId in) {
  const Node& n = graph.node(in);
  const Stage& st = stages[static_cast<size_t>(s)];
  const StageIdx last = static_cast<StageIdx>(stages.size()) - 1;
  if (n.is_placeholder()) {
    switch (n.kind) {
      case PlaceholderKind::kTangent:
        return s == last ? "" : "the tangent, which only the last stage holds";
      case PlaceholderKind::kInput:
        return contains(st.inputs, in) ? "" : "a graph input the stage does not receive";
      default:
        return contains(st.params, in) ? "" : "a param/buffer of another stage";
    }
  }
  StageIdx t = stage_of[static_cast<size_t>(in)];
  if (in < first_backward) {
    if (t == s || contains(st.inputs, in)) return "";
    return fmt::format("a forward value of stage {} that stage {} does not receive", t, s);
  }
  if (t == s || t == s + 1) return "";
  return fmt::format("a backward value of stage {} (only stage {} may send gradients here)", t,
                     s + 1);
}

// The I part: backward nodes of `program` that grads_out depends on.
void split_input_weight(const Graph& graph, const std::vector<StageIdx>& stage_of,
                        StageProgram& program) {
  std::vector<bool> needed(static_cast<size_t>(graph.size()), false);
  for (NodeId g : program.grads_out) needed[static_cast<size_t>(g)] = true;
  for (auto it = program.backward.rbegin(); it != program.backward.rend(); ++it) {
    if (!needed[static_cast<size_t>(*it)]) continue;
    for (NodeId in : graph.node(*it).inputs) {
      if (stage_of[static_cast<size_t>(in)] == program.stage) needed[static_cast<size_t>(in)] = true;
    }
  }
  for (NodeId id : program.backward) {
    (needed[static_cast<size_t>(id)] ? program.input_grad : program.weight_grad).push_back(id);
  }
}

}  // namespace

Expected<std::vector<StageIdx>> node_stages(const Graph& graph, const std::vector<Stage>& stages) {
  std::vector<StageIdx> stage_of(static_cast<size_t>(graph.size()), kNoStage);
  std::map<std::string, StageIdx> unit_stage;
  NodeId last_forward = -1;
  for (const Stage& st : stages) {
    for (const std::string& unit : st.units) unit_stage[unit] = st.index;
    for (NodeId id : st.nodes) {
      stage_of[static_cast<size_t>(id)] = st.index;
      last_forward = std::max(last_forward, id);
    }
  }
  std::vector<StageIdx> param_stage(static_cast<size_t>(graph.size()), kNoStage);
  for (const Stage& st : stages) {
    for (NodeId prm : st.params) param_stage[static_cast<size_t>(prm)] = st.index;
  }
  const StageIdx last = static_cast<StageIdx>(stages.size()) - 1;
  for (NodeId id = last_forward + 1; id < graph.size(); ++id) {
    const Node& n = graph.node(id);
    if (n.is_placeholder()) continue;
    auto it = unit_stage.find(layer_unit(n.scope));
    StageIdx s = it != unit_stage.end() ? it->second
                                        : stage_from_inputs(graph, id, stage_of, param_stage, last_forward, last);
    if (s == kNoStage) {
      return make_error("backward node {} (scope '{}') has no stage: its scope names no unit of "
                        "the forward and it reads no backward value",
                        n.name, n.scope);
    }
    stage_of[static_cast<size_t>(id)] = s;
  }
  return stage_of;
}

Expected<std::vector<StageProgram>> partition_stages(const Graph& graph,
                                                     const std::vector<Stage>& stages) {
  Expected<std::vector<StageIdx>> stage_of = node_stages(graph, stages);
  if (!stage_of) return stage_of.error();
  std::vector<StageProgram> programs(stages.size());
  NodeId first_backward = 0;
  for (const Stage& st : stages) {
    StageProgram& p = programs[static_cast<size_t>(st.index)];
    p.stage = st.index;
    p.forward = st.nodes;
    if (!st.nodes.empty()) first_backward = std::max(first_backward, st.nodes.back() + 1);
    for (const Value& v : st.inputs) {
      if (graph.node(v.node).is_placeholder()) continue;
      StageIdx from = (*stage_of)[static_cast<size_t>(v.node)];
      if (from != st.index - 1) {
        return make_error("stage {} reads {} from stage {}: the pipeline runtime passes "
                          "activations only from the previous stage",
                          st.index, graph.node(v.node).name, from);
      }
      p.activations_in.push_back(v);
      programs[static_cast<size_t>(from)].activations_out.push_back(v);
    }
  }
  std::set<std::pair<NodeId, StageIdx>> boundary;  // (gradient node, reading stage)
  for (NodeId id = first_backward; id < graph.size(); ++id) {
    if (graph.node(id).is_placeholder()) continue;
    StageIdx s = (*stage_of)[static_cast<size_t>(id)];
    programs[static_cast<size_t>(s)].backward.push_back(id);
    for (NodeId in : graph.node(id).inputs) {
      std::string why = check_backward_input(graph, stages, *stage_of, first_backward, s, in);
      if (!why.empty()) {
        return make_error("stage {} backward node {} (scope '{}') reads {}: {}", s,
                          graph.node(id).name, graph.node(id).scope, graph.node(in).name, why);
      }
      if (in >= first_backward && (*stage_of)[static_cast<size_t>(in)] == s + 1) {
        boundary.insert({in, s});
      }
    }
  }
  for (const auto& [grad, reader] : boundary) {
    programs[static_cast<size_t>(reader)].grads_in.push_back(grad);
    programs[static_cast<size_t>(reader + 1)].grads_out.push_back(grad);
  }
  std::vector<StageIdx> param_stage(static_cast<size_t>(graph.size()), kNoStage);
  for (const Stage& st : stages) {
    for (NodeId prm : st.params) {
      StageIdx& owner = param_stage[static_cast<size_t>(prm)];
      if (owner != kNoStage && graph.node(prm).kind == PlaceholderKind::kParam) {
        return make_error("param {} is read by stages {} and {}: a param shared by stages is not "
                          "supported by the pipeline runtime",
                          graph.node(prm).target, owner, st.index);
      }
      owner = st.index;
    }
  }
  for (const GraphOutput& out : graph.outputs()) {
    StageIdx s = (*stage_of)[static_cast<size_t>(out.node)];
    if (out.kind == OutputKind::kLoss) {
      if (s != static_cast<StageIdx>(stages.size()) - 1) {
        return make_error("the loss {} is in stage {}, not the last stage", graph.node(out.node).name, s);
      }
      programs.back().loss = out.node;
      continue;
    }
    if (s == kNoStage || param_stage[static_cast<size_t>(out.param)] != s) {
      return make_error("the gradient {} of {} is computed in stage {} but the param is read by "
                        "stage {}",
                        graph.node(out.node).name, graph.node(out.param).target, s,
                        param_stage[static_cast<size_t>(out.param)]);
    }
    programs[static_cast<size_t>(s)].params.push_back(out.param);
    programs[static_cast<size_t>(s)].param_grads.push_back(out.node);
  }
  for (StageProgram& p : programs) split_input_weight(graph, *stage_of, p);
  return programs;
}

}  // namespace autopar::pipeline
