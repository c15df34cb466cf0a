// Kernels: run one IR node on tensors with libtorch CPU kernels.
//
// The single-process executor runs nodes on full tensors; the SPMD executor
// runs them on each rank's local shards. Shape-carrying attributes (a view's
// size, expand's size, embedding_dense_backward's num_weights) describe the
// full tensors, so callers pass the node's expected local output metadata and
// kernels take shapes from it, not from the attributes. Ops that need to know
// where a shard sits in the full tensor (embedding on a vocab-sharded table: a
// masked lookup; its backward writing only this shard's rows) read it from
// KernelContext.
//
// placeholder and getitem are the executors' business (values come from
// init.h; getitem picks one output of its producer): run_kernel rejects them.
// Every output is checked against its expected metadata (error naming the node).
// libtorch exceptions are caught and returned as errors naming the node.
//
// Runtime-only header: includes ATen. Never include it from the planner.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include <ATen/core/Tensor.h>

#include "ir/expected.h"
#include "ir/graph.h"

namespace autopar {

struct KernelContext {
  // Per input: the offset of this shard in the full tensor, per tensor dim
  // (empty, or missing entries: the input is whole). Read by the masked
  // embedding lookup when the table (input 0) is split by rows.
  std::vector<std::vector<int64_t>> input_offsets;
  // Per output: the same for outputs. Read by embedding_dense_backward when
  // its table gradient (output 0) is split by rows.
  std::vector<std::vector<int64_t>> output_offsets;
  // Per input: the full tensor's shape (empty: same as the local one).
  std::vector<Shape> input_full_shapes;
  // Random ops: this step's key (runtime/counter_rng.h step_random_key), the
  // same on every rank and in the single-process reference.
  uint64_t random_key = 0;
  // Sync strategies (sharding/rule.h: SyncBatchNorm): sums a tensor in place
  // over the devices the op reduces across, `sync_devices` of them. Null when
  // this device holds the whole reduction (single process, no sync option).
  std::function<Status(at::Tensor&)> sync_sum;
  int64_t sync_devices = 1;
};

// Runs node `node` on `inputs` (one tensor per node input).
// local_outputs: the metadata the outputs must have. Errors name the node.
Expected<std::vector<at::Tensor>> run_kernel(const Node& node, std::span<const at::Tensor> inputs,
                                             std::span<const TensorMeta> local_outputs,
                                             const KernelContext& context = {});

// True for every op of the op table that has a kernel (a test checks all do
// but placeholder and getitem).
bool has_kernel(OpId op);

at::ScalarType to_scalar_type(DType dtype);
Expected<DType> from_scalar_type(at::ScalarType type);

}  // namespace autopar
