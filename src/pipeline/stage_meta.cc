// Shape inference per stage, the in-process protocol, and the agreement
// decision. Message and user-shape I/O are in meta_io.cc.
#include "pipeline/stage_meta.h"

#include <fmt/format.h>

namespace autopar::pipeline {
namespace {

std::optional<TensorMeta> grad_meta(const TensorMeta& meta) {
  if (!is_floating(meta.dtype) && !is_complex(meta.dtype)) return std::nullopt;
  return meta;
}

std::string rank_list(std::span<const bool> flags, bool want) {
  std::vector<size_t> ranks;
  for (size_t r = 0; r < flags.size(); ++r) {
    if (flags[r] == want) ranks.push_back(r);
  }
  return fmt::format("{}", fmt::join(ranks, ", "));
}

}  // namespace

Expected<StageMeta> infer_stage(const Graph& graph, const Stage& stage,
                                std::span<const TensorMeta> input_metas) {
  if (input_metas.size() != stage.inputs.size()) {
    return make_error("stage {}: {} input metas given, the stage has {} inputs", stage.index,
                      input_metas.size(), stage.inputs.size());
  }
  std::vector<std::vector<TensorMeta>> env(static_cast<size_t>(graph.size()));
  for (NodeId p : stage.params) env[static_cast<size_t>(p)] = graph.node(p).outputs;
  for (size_t i = 0; i < stage.inputs.size(); ++i) {
    const Value& v = stage.inputs[i];
    auto& slot = env[static_cast<size_t>(v.node)];
    slot.resize(graph.node(v.node).outputs.size());
    slot[static_cast<size_t>(v.output)] = input_metas[i];
  }
  std::vector<const std::vector<TensorMeta>*> args;
  for (NodeId id : stage.nodes) {
    const Node& node = graph.node(id);
    args.clear();
    for (NodeId in : node.inputs) args.push_back(&env[static_cast<size_t>(in)]);
    Expected<std::vector<TensorMeta>> out = infer_outputs(node.op, OpCall{args, node.attrs});
    if (!out) {
      return make_error_like(out.error(), "stage {} node {}: {}", stage.index, node.name, out.error().message);
    }
    env[static_cast<size_t>(id)] = std::move(*out);
  }
  StageMeta meta;
  meta.stage = stage.index;
  meta.inputs.assign(input_metas.begin(), input_metas.end());
  for (const TensorMeta& m : meta.inputs) meta.input_grads.push_back(grad_meta(m));
  for (const Value& v : stage.outputs) {
    meta.outputs.push_back(env[static_cast<size_t>(v.node)][static_cast<size_t>(v.output)]);
    meta.output_grads.push_back(grad_meta(meta.outputs.back()));
  }
  return meta;
}

Expected<std::map<std::string, TensorMeta>> microbatch_metas(
    const std::map<std::string, TensorMeta>& full_batch, int32_t microbatches) {
  if (microbatches < 1) return make_error("microbatches must be at least 1, got {}", microbatches);
  std::map<std::string, TensorMeta> out;
  for (const auto& [name, meta] : full_batch) {
    if (meta.shape.empty() || meta.shape[0] % microbatches != 0) {
      return make_error("input {} {}: batch dim 0 cannot be split into {} microbatches", name,
                        to_string(meta), microbatches);
    }
    TensorMeta mb = meta;
    mb.shape[0] /= microbatches;
    out.emplace(name, mb);
  }
  return out;
}

Expected<PipelineMeta> infer_pipeline(const Graph& graph, const std::vector<Stage>& stages,
                                      const std::vector<RankIdx>& stage_to_rank,
                                      const std::map<std::string, TensorMeta>& microbatch_inputs) {
  PipelineMeta result;
  std::map<Value, std::pair<StageIdx, TensorMeta>> produced;  // value -> (stage, meta)
  for (const Stage& st : stages) {
    // Group this stage's activation inputs by producing stage: one message
    // (or one direct hand-off) per producer.
    std::map<StageIdx, std::vector<size_t>> by_producer;
    std::vector<TensorMeta> metas(st.inputs.size());
    for (size_t i = 0; i < st.inputs.size(); ++i) {
      const Node& n = graph.node(st.inputs[i].node);
      if (n.is_placeholder()) {
        auto it = microbatch_inputs.find(n.name);
        if (it == microbatch_inputs.end()) {
          return make_error("stage {} reads graph input {}, but no meta was given for it", st.index,
                            n.name);
        }
        metas[i] = it->second;
        continue;
      }
      by_producer[produced.at(st.inputs[i]).first].push_back(i);
    }
    for (const auto& [from, indices] : by_producer) {
      MetaMessage message{from, st.index, {}, {}};
      for (size_t i : indices) message.metas.push_back(produced.at(st.inputs[i]).second);
      if (stage_to_rank[static_cast<size_t>(from)] ==
          stage_to_rank[static_cast<size_t>(st.index)]) {
        ++result.direct_hand_offs;  // return value: the metas as they are
      } else {
        Expected<MetaMessage> received = decode_metas(encode_metas(message));
        if (!received) return received.error();
        message = std::move(*received);
        result.messages.push_back(message);
      }
      for (size_t k = 0; k < indices.size(); ++k) metas[indices[k]] = message.metas[k];
    }
    Expected<StageMeta> meta = infer_stage(graph, st, metas);
    if (!meta) return meta.error();
    for (size_t o = 0; o < st.outputs.size(); ++o) {
      produced[st.outputs[o]] = {st.index, meta->outputs[o]};
    }
    result.stages.push_back(std::move(*meta));
  }
  return result;
}

Expected<bool> decide_inference(std::span<const bool> has_given_shapes) {
  bool any = false, all = true;
  for (bool given : has_given_shapes) any |= given, all &= given;
  if (any && !all) {
    return make_error(
        "ranks disagree on pipeline shape inference: rank(s) {} were given stage "
        "shapes, rank(s) {} were not; give --stage-shapes on every rank or on none",
        rank_list(has_given_shapes, true), rank_list(has_given_shapes, false));
  }
  return !any;
}

Expected<int64_t> microbatch_rows(const Graph& full, int32_t microbatches) {
  std::map<std::string, TensorMeta> inputs;
  for (const Node& n : full.nodes()) {
    if (n.is_placeholder() && n.kind == PlaceholderKind::kInput) inputs.emplace(n.name, n.meta());
  }
  Expected<std::map<std::string, TensorMeta>> micro = microbatch_metas(inputs, microbatches);
  if (!micro) return micro.error();
  if (micro->empty()) return make_error("the model has no graph inputs to split into microbatches");
  return micro->begin()->second.shape.at(0);
}

}  // namespace autopar::pipeline
