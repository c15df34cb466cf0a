#include "planner/layer_repeats.h"

#include <charconv>
#include <map>

namespace autopar {
namespace {

// Layer index from a scope "layers.12.attention" with prefix "layers"; -1 if none.
int32_t layer_of(std::string_view scope, std::string_view prefix) {
  if (!scope.starts_with(prefix) || scope.size() <= prefix.size() + 1 ||
      scope[prefix.size()] != '.') {
    return -1;
  }
  std::string_view rest = scope.substr(prefix.size() + 1);
  int32_t index = -1;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), index);
  if (ec != std::errc() || (end != rest.data() + rest.size() && *end != '.')) return -1;
  return index;
}

struct LayerNodes {
  std::vector<NodeId> nodes;  // in execution order
  std::vector<int32_t> position_of;  // indexed by node id; -1 when not in this layer
};

bool same_computation(const Node& a, const Node& b) {
  return a.op == b.op && a.attrs == b.attrs && a.outputs == b.outputs && a.kind == b.kind &&
         a.inputs.size() == b.inputs.size();
}

bool layers_match(const Graph& graph, const LayerNodes& rep, const LayerNodes& other) {
  if (rep.nodes.size() != other.nodes.size()) return false;
  for (size_t k = 0; k < rep.nodes.size(); ++k) {
    const Node& a = graph.node(rep.nodes[k]);
    const Node& b = graph.node(other.nodes[k]);
    if (!same_computation(a, b)) return false;
    for (size_t j = 0; j < a.inputs.size(); ++j) {
      int32_t pa = rep.position_of[static_cast<size_t>(a.inputs[j])];
      int32_t pb = other.position_of[static_cast<size_t>(b.inputs[j])];
      if (pa != pb) return false;
      if (pa < 0 && graph.node(a.inputs[j]).outputs != graph.node(b.inputs[j]).outputs) return false;
    }
  }
  return true;
}

}  // namespace

LayerRepeats find_layer_repeats(const Graph& graph, std::string_view prefix, bool keep_ends) {
  LayerRepeats result;
  result.representative.resize(static_cast<size_t>(graph.size()));
  for (NodeId id = 0; id < graph.size(); ++id) result.representative[static_cast<size_t>(id)] = id;

  std::map<int32_t, LayerNodes> layers;  // sorted by layer index
  for (NodeId id = 0; id < graph.size(); ++id) {
    const Node& node = graph.node(id);
    if (node.is_placeholder()) continue;  // params differ per layer but stay separate nodes
    int32_t layer = layer_of(node.scope, prefix);
    if (layer >= 0) layers[layer].nodes.push_back(id);
  }
  result.layers_found = static_cast<int32_t>(layers.size());
  if (layers.size() < 2) return result;
  for (auto& [index, layer] : layers) {
    layer.position_of.assign(static_cast<size_t>(graph.size()), -1);
    for (size_t k = 0; k < layer.nodes.size(); ++k) {
      layer.position_of[static_cast<size_t>(layer.nodes[k])] = static_cast<int32_t>(k);
    }
  }
  // Candidate representatives in layer order: a layer joins the first one it matches.
  std::vector<const LayerNodes*> reps;
  const int32_t first = layers.begin()->first, last = layers.rbegin()->first;
  for (const auto& [index, layer] : layers) {
    if (keep_ends && (index == first || index == last)) continue;
    const LayerNodes* match = nullptr;
    for (const LayerNodes* rep : reps) {
      if (layers_match(graph, *rep, layer)) {
        match = rep;
        break;
      }
    }
    if (match == nullptr) {
      reps.push_back(&layer);
      continue;
    }
    ++result.layers_shared;
    for (size_t k = 0; k < layer.nodes.size(); ++k) {
      result.representative[static_cast<size_t>(layer.nodes[k])] = match->nodes[k];
    }
  }
  if (!reps.empty()) result.nodes_per_layer = static_cast<int32_t>(reps.front()->nodes.size());
  return result;
}

}  // namespace autopar
