// Compute time of one op call on one device.
//
// A profile measured with `autopar calibrate --model/--graph --mesh` holds the
// time of every local op call the planner may choose (HardwareProfile::op_times,
// keyed by op_call_key): such a call costs what was measured, views included
// (on a CPU runtime a view's dispatch is not free). Any other call costs the roofline
//   max(FLOPs / (peak[dtype] · compute_efficiency),
//       bytes / (memory_bandwidth · memory_efficiency)),  floored at min_op_time_s
// for every op that computes (structural ops and pure views cost 0). No op is
// free because it has no matmul: embeddings, norms and pointwise ops pay for
// their bytes.
//
// The optimizer's update of each parameter is a cost too: measured per tensor
// and per element by calibration, else a memory-bound pass over the parameter,
// its gradient and its optimizer state.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "cost/hardware.h"
#include "ir/graph.h"
#include "ir/op_def.h"

namespace autopar {

enum class Optimizer : uint8_t { kSgd, kAdamW };

// The call's metas are the local (per-device) shapes. op_name: the aten name
// (a generic op's own; empty: the op table's).
double compute_time(OpId op, const OpCall& call, std::span<const TensorMeta> outputs,
                    const HardwareProfile& hw, std::string_view op_name = {});

// "aten.mm.default(f32[4, 256], f32[256, 768]) -> f32[4, 768] {...attrs}": the
// op and its local metas and attributes, which decide its time.
std::string op_call_key(std::string_view op_name, const OpCall& call,
                        std::span<const TensorMeta> outputs);

// How a parameter's gradient reaches the optimizer. A weight's gradient is
// often the transpose of what the backward's matmul wrote (linear's backward
// ends in aten.t); the update first copies it into the parameter's layout, as
// PyTorch's AccumulateGrad does, and on a CPU that copy can cost more than the
// update itself (bench/RESULTS.md, "Step time: measured against predicted").
enum class GradLayout { kContiguous, kTransposed };
// kTransposed when the node that completes `param`'s gradient is a transposing
// view (t, transpose, permute of a tensor of 2 or more dims).
GradLayout gradient_layout(const Graph& graph, NodeId param);

// One optimizer update of a parameter whose local shard is `local`: measured
// (op_times under update_key), else the profile's per-tensor and per-element
// figures, else a memory-bound pass.
double update_time(Optimizer optimizer, const TensorMeta& local, GradLayout grad, const HardwareProfile& hw);
// "optimizer.adamw(f32[256, 128])", "optimizer.adamw(f32[256, 128], grad transposed)".
std::string update_key(Optimizer optimizer, const TensorMeta& local, GradLayout grad);

// A node of a graph on full (unsharded) shapes.
double node_compute_time(const Graph& graph, NodeId id, const HardwareProfile& hw);

}  // namespace autopar
