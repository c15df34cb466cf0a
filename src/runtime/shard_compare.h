// Comparing a distributed tensor with its unsplit value, shard by shard and
// replica by replica: every rank's local block (after summing the Partial mesh
// dims, whose terms are not comparable one by one) is sent to rank 0 and
// compared there with the same block of the reference. A wrong replica on any
// rank, or a wrong small shard beside large ones, cannot hide.
#pragma once

#include <ATen/core/Tensor.h>

#include "ir/expected.h"
#include "ir/tensor_meta.h"
#include "runtime/spmd_mesh.h"
#include "sharding/placement.h"

namespace autopar {

// A block passes when max |split - reference| <= atol + rtol * max |reference
// block| (fp32: shards reduce in another order than the whole tensor).
struct CheckTolerance {
  double rtol = 1e-3;
  double atol = 1e-5;
};

struct ShardComparison {
  bool ok = true;
  double max_error = 0;    // largest |split - reference| over all blocks
  double tolerance = 0;    // of the block with the largest error / tolerance ratio
  int worst_rank = -1;     // that block's rank (-1: none compared)
};

// Every rank calls it (collectives); `reference` is read on rank 0 only, and
// only rank 0's result is meaningful. With `adopt` (rank 0: a full tensor of
// the reference's shape, often the reference itself), every rank's block is
// then copied into it: a checked run continues from the split run's values.
Expected<ShardComparison> compare_every_shard(const at::Tensor& local, const TensorMeta& meta,
                                              const Sharding& sharding, const at::Tensor& reference,
                                              const SpmdMesh& mesh, const CheckTolerance& tolerance,
                                              at::Tensor* adopt = nullptr);

}  // namespace autopar
