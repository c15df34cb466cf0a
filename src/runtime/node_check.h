// Node-by-node check of one SPMD step (`autopar run --check-nodes`): finds the
// first node whose split result differs from the unsplit model, for when a
// --check fails and the gradient it names is far from the cause.
//
// Rank 0 first runs the whole step on full tensors and keeps every node's
// outputs (memory: the whole graph's values; a debugging aid for models that
// fit one process). Then, while the SPMD step runs, every rank gathers each
// node's outputs, and each input the plan redistributed, to rank 0
// (collectives in graph order, not counted as plan communication), which
// compares every rank's block with the same block of the kept values
// (shard_compare.h: every replica, each shard against its own scale).
// A node whose value aten leaves unspecified (empty, empty_like, ...) is not
// compared.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "ir/expected.h"
#include "ir/graph.h"
#include "runtime/spmd_executor.h"
#include "runtime/spmd_mesh.h"
#include "runtime/spmd_run.h"

namespace autopar {

struct NodeMismatch {
  NodeId node = kNoNode;
  int output = 0;   // or, with `input`, the input's index
  bool input = false;  // a redistributed input (the producer's output matched or not)
  double error = 0;      // max |split - unsplit| over every rank's block
  double tolerance = 0;  // atol + rtol max |unsplit| of the worst block
  int rank = -1;         // the worst block's rank
};

class NodeCheck {
 public:
  // `placeholders` (by NodeId) are the step's starting values; only rank 0's
  // are read. `random_key` is the step's (step_random_key).
  static Expected<NodeCheck> prepare(const Graph& graph, const std::vector<at::Tensor>& placeholders,
                                     const SpmdMesh& mesh, uint64_t random_key,
                                     CheckTolerance tolerance);

  // Installs the gather-and-compare observer on `exec` (running `plan`) for its
  // next step.
  void observe(SpmdExecutor& exec, const Plan& plan);
  // Rank 0: prints the verdict (the first mismatches with their strategies);
  // every rank: whether every node matched (rank 0's verdict, broadcast).
  Expected<bool> finish(const Plan& plan);

 private:
  NodeCheck(const Graph& graph, const SpmdMesh& mesh, CheckTolerance tolerance)
      : graph_(&graph), mesh_(&mesh), tolerance_(tolerance) {}
  Status compare_outputs(NodeId v, const std::vector<at::Tensor>& local, const SpmdExecutor& exec);
  Status compare_input(NodeId v, int i, const at::Tensor& local, const Plan& plan);
  // Gathers `local` (every rank) and compares it on rank 0 with `want`.
  Status compare(const at::Tensor& local, const TensorMeta& meta, const Sharding& sharding,
                 const at::Tensor& want, NodeMismatch where);

  const Graph* graph_;
  const SpmdMesh* mesh_;
  CheckTolerance tolerance_;
  std::vector<std::vector<at::Tensor>> reference_;  // rank 0: every node's outputs
  std::vector<NodeMismatch> mismatches_;            // rank 0, in graph order
  int64_t compared_ = 0;
};

}  // namespace autopar
