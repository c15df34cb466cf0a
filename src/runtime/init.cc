// Placeholder initialisation (see init.h for the scheme).
#include "runtime/init.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string_view>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/outer.h>
#include <ATen/ops/polar.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/zeros.h>

#include "runtime/kernels.h"

namespace autopar {
namespace {

// FNV-1a: stable across platforms and runs (std::hash is not).
uint64_t name_hash(std::string_view name) {
  uint64_t h = 1469598103934665603ull;
  for (char c : name) {
    h ^= static_cast<uint8_t>(c);
    h *= 1099511628211ull;
  }
  return h;
}

// splitmix64 finaliser: spreads nearby seeds apart.
uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::string_view key_of(const Node& node) { return node.target.empty() ? node.name : node.target; }

at::TensorOptions f32() { return at::TensorOptions().dtype(at::kFloat); }

bool passes_index_through(OpId op) {
  return op == OpId::kView || op == OpId::kUnsafeView || op == OpId::kClone ||
         op == OpId::kToCopy || op == OpId::kUnsqueeze || op == OpId::kExpand || op == OpId::kT ||
         op == OpId::kTranspose;
}

// The bound on an index input: embedding rows or loss classes it reaches
// through views.
std::optional<int64_t> index_bound(const Graph& graph, NodeId id,
                                   const std::vector<std::vector<NodeId>>& users) {
  std::optional<int64_t> bound;
  auto tighten = [&](int64_t b) { bound = bound ? std::min(*bound, b) : b; };
  std::vector<NodeId> frontier{id};
  while (!frontier.empty()) {
    NodeId at = frontier.back();
    frontier.pop_back();
    for (NodeId user : users[static_cast<size_t>(at)]) {
      const Node& u = graph.node(user);
      const std::vector<NodeId>& in = u.inputs;
      if (passes_index_through(u.op)) {
        frontier.push_back(user);
      } else if (u.op == OpId::kEmbedding && in.size() == 2 && in[1] == at) {
        tighten(graph.node(in[0]).meta().shape[0]);
      } else if (u.op == OpId::kEmbeddingDenseBackward && in.size() == 2 && in[1] == at) {
        tighten(u.attrs.get_int("num_weights"));
      } else if (u.op == OpId::kNllLossForward && in.size() == 2 && in[1] == at) {
        tighten(graph.node(in[0]).meta().shape.back());
      } else if (u.op == OpId::kNllLossBackward && in.size() == 4 && in[2] == at) {
        tighten(graph.node(in[1]).meta().shape.back());
      } else if (u.op == OpId::kNllLoss2dForward && in.size() >= 2 && in[1] == at) {
        tighten(graph.node(in[0]).meta().shape[1]);  // classes: self is [N, C, H, W]
      } else if (u.op == OpId::kNllLoss2dBackward && in.size() >= 4 && in[2] == at) {
        tighten(graph.node(in[1]).meta().shape[1]);
      } else if (u.op == OpId::kMaxPool2dWithIndicesBackward && in.size() == 3 && in[2] == at) {
        const Shape& x = graph.node(in[1]).meta().shape;  // offsets within one H*W plane
        tighten(x.size() == 4 ? x[2] * x[3] : 1);
      }
    }
  }
  return bound;
}

Expected<at::Tensor> init_input(const Graph& graph, const Node& node, at::Generator& gen,
                                const std::vector<std::vector<NodeId>>& users) {
  const TensorMeta& meta = node.meta();
  at::ScalarType type = to_scalar_type(meta.dtype);
  if (is_floating(meta.dtype) || is_complex(meta.dtype)) {
    return at::randn(meta.shape, gen, f32()).to(type);
  }
  if (meta.dtype == DType::boolean) {  // a mask: each element true or false at random
    return at::randint(2, meta.shape, gen, at::TensorOptions().dtype(at::kLong)).to(at::kBool);
  }
  std::optional<int64_t> bound = index_bound(graph, *graph.find(node.name), users);
  if (!bound) {
    return make_error(
        "input {} ({}) is an integer tensor that reaches no embedding or loss, so "
        "its value range is unknown",
        node.name, to_string(meta));
  }
  return at::randint(*bound, meta.shape, gen, at::TensorOptions().dtype(type));
}

Expected<at::Tensor> init_buffer(const Node& node, const InitOptions& options) {
  const TensorMeta& meta = node.meta();
  if (key_of(node).find("freqs_cis") != std::string_view::npos) {
    if (meta.dtype != DType::c64 || meta.rank() != 2) {
      return make_error("buffer {} should be c64 [seq, head_dim / 2], got {}", node.name,
                        to_string(meta));
    }
    return precompute_freqs_cis(2 * meta.shape[1], meta.shape[0], options.rope_theta);
  }
  return at::zeros(meta.shape, at::TensorOptions().dtype(to_scalar_type(meta.dtype)));
}

Expected<at::Tensor> init_one(const Graph& graph, NodeId id, const InitOptions& options,
                              const std::vector<std::vector<NodeId>>& users) {
  const Node& node = graph.node(id);
  if (!node.is_placeholder()) return make_error("node {} is not a placeholder", node.name);
  const TensorMeta& meta = node.meta();
  at::ScalarType type = to_scalar_type(meta.dtype);
  if (node.value) return tensor_from_bytes(*node.value, meta);
  at::Generator gen =
      at::make_generator<at::CPUGeneratorImpl>(mix(options.seed ^ name_hash(key_of(node))));
  switch (node.kind) {
    case PlaceholderKind::kParam:
      if (meta.rank() == 1 && key_of(node).find("norm") != std::string_view::npos) {
        return at::ones(meta.shape, at::TensorOptions().dtype(type));
      }
      return at::randn(meta.shape, gen, f32()).mul(options.weight_std).to(type);
    case PlaceholderKind::kBuffer: return init_buffer(node, options);
    case PlaceholderKind::kInput: return init_input(graph, node, gen, users);
    case PlaceholderKind::kTangent: return at::ones(meta.shape, at::TensorOptions().dtype(type));
    case PlaceholderKind::kConstant:
      return make_error("constant {} carries no value (a graph file gives each constant one)",
                        node.name);
    case PlaceholderKind::kNone: break;
  }
  return make_error("placeholder {} has no kind (param, buffer, input, tangent or constant)",
                    node.name);
}

}  // namespace

Expected<at::Tensor> tensor_from_bytes(const TensorBytes& bytes, const TensorMeta& meta) {
  at::Tensor t = at::empty(meta.shape, at::TensorOptions().dtype(to_scalar_type(meta.dtype)));
  size_t want = static_cast<size_t>(t.numel()) * t.element_size();
  if (bytes.size() != want) {
    return make_error("a value of {} bytes cannot be {} ({} bytes)", bytes.size(), to_string(meta),
                      want);
  }
  std::memcpy(t.data_ptr(), bytes.data(), want);  // little-endian hosts only (x86, arm64)
  return t;
}

at::Tensor precompute_freqs_cis(int64_t dim, int64_t end, double theta) {
  at::Tensor exponents = at::arange(0, dim, 2, at::TensorOptions().dtype(at::kDouble))
                             .slice(0, 0, dim / 2)
                             .div(static_cast<double>(dim));
  at::Tensor freqs = at::pow(theta, exponents).reciprocal();
  at::Tensor angles = at::outer(at::arange(end, at::TensorOptions().dtype(at::kDouble)), freqs);
  return at::polar(at::ones_like(angles), angles).to(at::kComplexFloat);
}

Expected<at::Tensor> init_placeholder(const Graph& graph, NodeId id, const InitOptions& options) {
  return init_one(graph, id, options, graph.users());
}

Expected<std::vector<at::Tensor>> init_placeholders(const Graph& graph,
                                                    const InitOptions& options) {
  std::vector<std::vector<NodeId>> users = graph.users();
  std::vector<at::Tensor> values(static_cast<size_t>(graph.size()));
  for (NodeId id = 0; id < graph.size(); ++id) {
    if (!graph.node(id).is_placeholder()) continue;
    Expected<at::Tensor> value = init_one(graph, id, options, users);
    if (!value) return value.error();
    values[static_cast<size_t>(id)] = std::move(*value);
  }
  return values;
}

}  // namespace autopar
