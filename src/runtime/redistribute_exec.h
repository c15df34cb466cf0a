// Redistribution on the ranks: runs a RedistPlan (sharding/redistribute.h) on
// this rank's local shard, step by step, each collective on its mesh dim's
// communicator, giving the local shard of the tensor in the target sharding.
//
// Every rank of the job must run the same plans in the same order (SPMD).
// Complex tensors cross the wire as their real view (at::view_as_real), as the
// plan's steps record. R -> P keeps the value on coordinate 0 of the mesh dim
// and zeros elsewhere, so the partial terms sum exactly to the tensor.
#pragma once

#include <functional>
#include <string>

#include <ATen/core/Tensor.h>

#include "ir/expected.h"
#include "runtime/spmd_mesh.h"
#include "runtime/trace.h"
#include "sharding/redistribute.h"

namespace autopar {

// Told of every tensor a redistribution holds (held = true) and frees
// (false), so the caller can count them (live_storages.h). Every step's result
// owns its storage (a slice that would alias its input is copied), as
// memory/step_memory.h counts: while a step runs, its input and its output.
using StorageAccount = std::function<void(const at::Tensor&, bool held)>;

// `tracer` (optional) tallies and traces each collective under `tensor`'s
// name. `account` (optional) is told of each step's result as it is made and
// of its input as it is freed; the returned tensor is told freed last (the
// caller holds it from then on).
Expected<at::Tensor> execute_redistribution(const at::Tensor& local, const RedistPlan& plan,
                                            const SpmdMesh& mesh, Tracer* tracer = nullptr,
                                            const std::string& tensor = "",
                                            const StorageAccount* account = nullptr);

// Sums `t` in place across mesh dim m (an all-reduce on its communicator),
// traced like a plan's all_reduce: a sync strategy's own reduction.
Status all_reduce_in_place(at::Tensor& t, const SpmdMesh& mesh, MeshDim m, Tracer* tracer,
                           const std::string& tensor);

// The full tensor on every rank: redistributes to all-Replicate (used to
// compare results with the single-process reference; not part of a plan).
Expected<at::Tensor> gather_full(const at::Tensor& local, const TensorMeta& meta,
                                 const Sharding& sharding, const SpmdMesh& mesh);

}  // namespace autopar
