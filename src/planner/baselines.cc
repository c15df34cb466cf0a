#include "planner/baselines.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sharding/placement.h"

namespace autopar {
namespace {

enum class TpRole { kReplicate, kColumn, kRow };

struct Family {
  bool fsdp_on_dp = false;  // parameters sharded over the data-parallel dims
  bool tp = false;          // tensor parallel on the last mesh dim
  bool sp = false;          // sequence parallel norms
};

Expected<Family> family_of(std::string_view name, const DeviceMesh& mesh) {
  if (name == "ddp") return Family{};
  if (name == "fsdp") return Family{.fsdp_on_dp = true};
  if (name == "tp" || name == "tp-sp" || name == "fsdp-tp") {
    if (name == "fsdp-tp" && mesh.ndim() < 2) {
      return make_error("baseline fsdp-tp needs a mesh of 2 or more dims (FSDP on the outer, "
                        "TP on the last); got {}", mesh_shape_string(mesh));
    }
    return Family{.fsdp_on_dp = name == "fsdp-tp", .tp = true, .sp = name == "tp-sp"};
  }
  return make_error("unknown baseline '{}'; known: {}", name, baseline_names_text());
}

bool ends_with_any(std::string_view s, std::initializer_list<std::string_view> suffixes) {
  for (std::string_view suffix : suffixes) {
    if (s.ends_with(suffix)) return true;
  }
  return false;
}

// Megatron roles by parameter name: llama3 (torchtitan names) and MLPs whose
// linears alternate column/row in order.
std::vector<TpRole> tp_roles(const Graph& graph) {
  std::vector<TpRole> roles(static_cast<size_t>(graph.size()), TpRole::kReplicate);
  int linear_index = 0;
  for (NodeId v = 0; v < graph.size(); ++v) {
    const Node& n = graph.node(v);
    if (!n.is_placeholder() || n.kind != PlaceholderKind::kParam) continue;
    std::string_view t = n.target.empty() ? std::string_view(n.name) : std::string_view(n.target);
    TpRole& role = roles[static_cast<size_t>(v)];
    if (ends_with_any(t, {".wq.weight", ".wk.weight", ".wv.weight", ".w1.weight", ".w3.weight"}) ||
        (t == "output.weight" && graph.name.starts_with("llama3")) || t == "tok_embeddings.weight") {
      role = TpRole::kColumn;
    } else if (ends_with_any(t, {".wo.weight", ".w2.weight"})) {
      role = TpRole::kRow;
    } else if (!graph.name.starts_with("llama3") && t.ends_with(".weight") && n.meta().rank() == 2) {
      role = linear_index++ % 2 == 0 ? TpRole::kColumn : TpRole::kRow;
    } else if (!graph.name.starts_with("llama3") && t.ends_with(".bias") && v > 0 &&
               roles[static_cast<size_t>(v - 1)] == TpRole::kColumn) {
      role = TpRole::kColumn;  // the bias of a column-parallel linear is split with its rows
    }
  }
  return roles;
}

// Shards `dim` over mesh dims [first, last) nested, keeping only a valid prefix.
void shard_over(const Shape& shape, int dim, MeshDim first, MeshDim last, const DeviceMesh& mesh,
                Sharding& s) {
  for (MeshDim d = first; d < last; ++d) {
    Sharding trial = s;
    trial[d] = Placement::shard(dim);
    if (!is_valid_sharding(shape, trial, mesh)) return;
    s = trial;
  }
}

Sharding param_sharding(const TensorMeta& meta, TpRole role, const Family& f, const DeviceMesh& mesh) {
  Sharding s = Sharding::replicated(mesh.ndim());
  MeshDim dp_end = f.tp ? mesh.ndim() - 1 : mesh.ndim();
  if (f.tp && role != TpRole::kReplicate) {
    int dim = role == TpRole::kColumn ? 0 : 1;
    if (dim < meta.rank()) shard_over(meta.shape, dim, dp_end, mesh.ndim(), mesh, s);
  }
  if (f.fsdp_on_dp) {
    for (int dim = 0; dim < meta.rank() && s[0].is_replicate(); ++dim) {
      shard_over(meta.shape, dim, 0, dp_end, mesh, s);
    }
  }
  return s;
}

PinSpec exact_pin(const Node& node, const Sharding& s) {
  PinSpec pin;
  pin.pattern = node.name;
  pin.sharding = s;
  pin.text = fmt::format("{}={}", node.name, to_string(s));
  return pin;
}

}  // namespace

std::vector<std::string> baseline_names() { return {"ddp", "fsdp", "fsdp-tp", "tp", "tp-sp"}; }

std::string baseline_names_text() { return fmt::format("{}", fmt::join(baseline_names(), ", ")); }

Expected<std::vector<PinSpec>> baseline_pins(std::string_view name, const Graph& graph,
                                             const DeviceMesh& mesh) {
  Expected<Family> family = family_of(name, mesh);
  if (!family) return family.error();
  const Family& f = *family;
  std::vector<TpRole> roles = tp_roles(graph);
  MeshDim dp_end = f.tp ? mesh.ndim() - 1 : mesh.ndim();
  std::vector<PinSpec> pins;
  for (NodeId v = 0; v < graph.size(); ++v) {
    const Node& n = graph.node(v);
    Sharding s = Sharding::replicated(mesh.ndim());
    if (n.is_placeholder() && n.kind == PlaceholderKind::kParam) {
      s = param_sharding(n.meta(), roles[static_cast<size_t>(v)], f, mesh);
    } else if (n.is_placeholder() && n.kind == PlaceholderKind::kInput) {
      if (n.meta().rank() > 0) shard_over(n.meta().shape, 0, 0, dp_end, mesh, s);
    } else if (n.is_placeholder() && n.kind == PlaceholderKind::kTangent) {
      // replicated
    } else if (f.sp && n.meta().rank() >= 3 &&
               (n.scope.ends_with(".attention_norm") || n.scope.ends_with(".ffn_norm"))) {
      shard_over(n.meta().shape, 0, 0, dp_end, mesh, s);
      Sharding with_seq = s;
      with_seq[mesh.ndim() - 1] = Placement::shard(1);
      if (!is_valid_sharding(n.meta().shape, with_seq, mesh)) continue;
      s = with_seq;
    } else {
      continue;
    }
    pins.push_back(exact_pin(n, s));
  }
  return pins;
}

}  // namespace autopar
