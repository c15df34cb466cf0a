// Roofline compute time (see compute_cost.h).
#include "cost/compute_cost.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

namespace autopar {
namespace {

// The element type whose peak applies: the first floating output, else the
// first floating input (an op on integers only, e.g. index arithmetic, uses f32).
// Complex tensors run on their real parts' units.
DType compute_dtype(const OpCall& call, std::span<const TensorMeta> outputs) {
  for (const TensorMeta& m : outputs) {
    if (is_floating(m.dtype) || is_complex(m.dtype)) return real_part_dtype(m.dtype);
  }
  for (int i = 0; i < call.num_inputs(); ++i) {
    for (const TensorMeta& m : *call.input_outputs[static_cast<size_t>(i)]) {
      if (is_floating(m.dtype) || is_complex(m.dtype)) return real_part_dtype(m.dtype);
    }
  }
  return DType::f32;
}

// A dtype with peak 0 (not listed, or no units for it) falls back to the f32
// peak rather than failing: an approximate cost is more useful to the planner
// than no plan, and parse_hardware_json guarantees f32 is positive.
double peak_for(const HardwareProfile& hw, DType dtype) {
  double peak = hw.peak_flops[static_cast<size_t>(dtype)];
  if (peak > 0) return peak;
  return hw.peak_flops[static_cast<size_t>(DType::f32)];
}

}  // namespace

std::string op_call_key(std::string_view op_name, const OpCall& call,
                        std::span<const TensorMeta> outputs) {
  std::string key(op_name);
  key += '(';
  for (int i = 0; i < call.num_inputs(); ++i) {
    if (i > 0) key += ", ";
    key += to_string(call.in(i));
  }
  key += ") -> ";
  for (size_t o = 0; o < outputs.size(); ++o) {
    if (o > 0) key += ", ";
    key += to_string(outputs[o]);
  }
  if (!call.attrs.items().empty()) {
    key += " {";
    for (size_t a = 0; a < call.attrs.items().size(); ++a) {
      const Attr& attr = call.attrs.items()[a];
      key += fmt::format("{}{}={}", a > 0 ? ", " : "", attr.name, attr_value_to_string(attr.value));
    }
    key += '}';
  }
  return key;
}

GradLayout gradient_layout(const Graph& graph, NodeId param) {
  for (const GraphOutput& out : graph.outputs()) {
    if (out.kind != OutputKind::kGradient || out.param != param) continue;
    const Node& producer = graph.node(out.node);
    if (producer.inputs.empty() || graph.node(producer.inputs[0]).outputs[0].shape.size() < 2) break;
    bool transposes = false;
    if (producer.op == OpId::kT) {
      transposes = true;
    } else if (producer.op == OpId::kTranspose) {
      transposes = producer.attrs.get_int_or("dim0", 0) != producer.attrs.get_int_or("dim1", 0);
    } else if (producer.op == OpId::kPermute) {
      std::vector<int64_t> dims = producer.attrs.get_ints_or("dims", {});
      for (size_t d = 0; d < dims.size(); ++d) transposes = transposes || dims[d] != static_cast<int64_t>(d);
    }
    return transposes ? GradLayout::kTransposed : GradLayout::kContiguous;
  }
  return GradLayout::kContiguous;
}

std::string update_key(Optimizer optimizer, const TensorMeta& local, GradLayout grad) {
  return fmt::format("optimizer.{}({}{})", optimizer == Optimizer::kAdamW ? "adamw" : "sgd", to_string(local),
                     grad == GradLayout::kTransposed ? ", grad transposed" : "");
}

double update_time(Optimizer optimizer, const TensorMeta& local, GradLayout grad, const HardwareProfile& hw) {
  if (!hw.op_times.empty()) {
    auto it = hw.op_times.find(update_key(optimizer, local, grad));
    if (it != hw.op_times.end()) return it->second;
  }
  DType dtype = local.dtype;
  double elements = 1;
  for (int64_t d : local.shape) elements *= static_cast<double>(d);
  const UpdateCost& measured = optimizer == Optimizer::kAdamW ? hw.adamw_update : hw.sgd_update;
  if (measured.measured()) return measured.per_tensor_s + elements * measured.per_element_s;
  // One fused pass: SGD reads the parameter and its gradient and writes the
  // parameter; AdamW also reads and writes its two f32 moments.
  double size = static_cast<double>(dtype_size(dtype));
  double bytes = 3 * size + (optimizer == Optimizer::kAdamW ? 4 * 4.0 : 0.0);
  double bandwidth = hw.memory_bandwidth_bytes_per_s * hw.memory_efficiency;
  return std::max(hw.min_op_time_s, bandwidth > 0 ? elements * bytes / bandwidth : 0.0);
}

double compute_time(OpId op, const OpCall& call, std::span<const TensorMeta> outputs,
                    const HardwareProfile& hw, std::string_view op_name) {
  const OpDef& def = op_def(op);
  if (def.has(kStructural)) return 0;
  if (!hw.op_times.empty()) {
    auto it = hw.op_times.find(op_call_key(op_name.empty() ? def.name : op_name, call, outputs));
    if (it != hw.op_times.end()) return it->second + hw.node_overhead_s;
  }
  double flops = def.flops(call, outputs);
  double bytes = def.bytes(call, outputs);
  if (flops == 0 && bytes == 0) return hw.node_overhead_s;  // a pure view: metadata only
  double peak = peak_for(hw, compute_dtype(call, outputs)) * hw.compute_efficiency;
  double bandwidth = hw.memory_bandwidth_bytes_per_s * hw.memory_efficiency;
  double flop_time = peak > 0 ? flops / peak : 0;
  double memory_time = bandwidth > 0 ? bytes / bandwidth : 0;
  return std::max({flop_time, memory_time, hw.min_op_time_s}) + hw.node_overhead_s;
}

double node_compute_time(const Graph& graph, NodeId id, const HardwareProfile& hw) {
  const Node& node = graph.node(id);
  std::vector<const std::vector<TensorMeta>*> inputs;
  inputs.reserve(node.inputs.size());
  for (NodeId input : node.inputs) inputs.push_back(&graph.node(input).outputs);
  OpCall call{inputs, node.attrs};
  return compute_time(node.op, call, node.outputs, hw, node_op_name(node));
}

}  // namespace autopar
