// Roofline compute time of one op call on one device:
//   max(FLOPs / (peak[dtype] · compute_efficiency),
//       bytes / (memory_bandwidth · memory_efficiency)),  floored at min_op_time_s
// for every op that computes (structural ops and pure views cost 0). No op is
// free because it has no matmul: embeddings, norms and pointwise ops pay for
// their bytes.
#pragma once

#include <span>

#include "cost/hardware.h"
#include "ir/graph.h"
#include "ir/op_def.h"

namespace autopar {

// The call's metas are the local (per-device) shapes.
double compute_time(OpId op, const OpCall& call, std::span<const TensorMeta> outputs,
                    const HardwareProfile& hw);

// A node of a graph on full (unsharded) shapes.
double node_compute_time(const Graph& graph, NodeId id, const HardwareProfile& hw);

}  // namespace autopar
