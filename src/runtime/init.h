// Deterministic initial values of a graph's placeholders from one seed, so a
// single-process run and every SPMD rank (slicing the same full tensors) see
// the same numbers.
//
//   param   norm weights (name containing "norm", rank 1): ones; others
//           normal(0, 0.02), as torchtitan initialises Llama weights
//   buffer  freqs_cis: torchtitan's precompute_freqs_cis(2 * cols, rows, theta)
//           (c64 [seq, head_dim / 2]); other buffers: zeros
//   input   integer: uniform in [0, bound), bound = the smallest of the
//           embedding tables' rows and the loss's class count it feeds;
//           floating: normal(0, 1)
//   tangent ones (d loss / d loss = 1)
//   a buffer or constant whose value the graph carries (Node::value) takes it.
//
// Each placeholder draws from its own generator, seeded from the seed mixed
// with a hash of its name (target, else node name), so values do not depend on
// the order or number of other placeholders.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/core/Tensor.h>

#include "ir/expected.h"
#include "ir/graph.h"

namespace autopar {

struct InitOptions {
  uint64_t seed = 0;
  double rope_theta = 500000;  // Llama 3's; the model config's rope_theta
  double weight_std = 0.02;
};

// The full value of placeholder `id`. Errors name the node (not a placeholder,
// an index input with no embedding or loss to bound it).
Expected<at::Tensor> init_placeholder(const Graph& graph, NodeId id, const InitOptions& options);

// Every placeholder's value, indexed by NodeId (undefined for other nodes).
Expected<std::vector<at::Tensor>> init_placeholders(const Graph& graph, const InitOptions& options);

// A tensor of `meta` from raw little-endian row-major bytes (Node::value).
Expected<at::Tensor> tensor_from_bytes(const TensorBytes& bytes, const TensorMeta& meta);

// torchtitan's precompute_freqs_cis: c64 [end, dim / 2] with entry (t, i) =
// exp(1j * t * theta^(-2i / dim)).
at::Tensor precompute_freqs_cis(int64_t dim, int64_t end, double theta);

}  // namespace autopar
