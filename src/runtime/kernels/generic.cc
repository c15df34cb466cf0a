// Generic aten ops (OpId::kGeneric): any op libtorch has, called through its
// dispatcher by schema name with boxed arguments. The node's inputs and
// attributes are bound back to the schema's arguments (ir/aten_schema.h; the
// reader checked the binding), absent arguments take the schema's defaults.
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/List.h>
#include <ATen/core/stack.h>

#include "ir/aten_schema.h"
#include "runtime/kernels/kernel_call.h"

namespace autopar::kernels {
namespace {

// "aten.triu.default" -> {"aten::triu", ""}; "aten.add.Tensor" -> {"aten::add", "Tensor"}.
c10::OperatorName operator_name(std::string_view dotted) {
  size_t first = dotted.find('.');
  size_t last = dotted.rfind('.');
  std::string name = std::string(dotted.substr(0, first)) + "::" +
                     std::string(dotted.substr(first + 1, last - first - 1));
  std::string overload(dotted.substr(last + 1));
  return {name, overload == "default" ? "" : overload};
}

// Inputs as PyTorch would have them: dense, at offset 0, owning their storage
// (ops such as as_strided address the storage, not the view).
at::Tensor dense(const at::Tensor& t) {
  bool owns = t.is_contiguous() && t.storage_offset() == 0 &&
              t.storage().nbytes() == static_cast<size_t>(t.numel()) * t.element_size();
  return owns ? t : t.clone(at::MemoryFormat::Contiguous);
}

c10::IValue attr_value(const AttrValue& value, const AtenArg& arg) {
  if (const auto* i = std::get_if<int64_t>(&value)) {
    // A whole number given for a float argument stays a float.
    bool is_float = arg.type.starts_with("float");
    return is_float ? c10::IValue(static_cast<double>(*i)) : c10::IValue(*i);
  }
  if (const auto* d = std::get_if<double>(&value)) return c10::IValue(*d);
  if (const auto* b = std::get_if<bool>(&value)) return c10::IValue(*b);
  if (const auto* ints = std::get_if<std::vector<int64_t>>(&value)) {
    if (arg.type.starts_with("bool")) {
      c10::List<bool> flags;
      for (int64_t v : *ints) flags.push_back(v != 0);
      return c10::IValue(flags);
    }
    return c10::IValue(c10::List<int64_t>(*ints));
  }
  if (const auto* text = std::get_if<std::string>(&value)) return c10::IValue(*text);
  if (const auto* floats = std::get_if<std::vector<double>>(&value)) {
    return c10::IValue(c10::List<double>(*floats));
  }
  return c10::IValue(to_scalar_type(std::get<DType>(value)));
}

// The boxed arguments, in schema order.
Expected<torch::jit::Stack> bind(const KernelCall& call, const AtenSchema& schema,
                                 const c10::FunctionSchema& c10_schema) {
  torch::jit::Stack stack;
  size_t next = 0;      // next input tensor
  size_t tensor_arg = 0;  // index into node.arg_inputs
  const std::vector<TensorArg>& binding = call.node.arg_inputs;
  for (size_t i = 0; i < schema.args.size(); ++i) {
    const AtenArg& arg = schema.args[i];
    if (arg.is_tensor()) {
      TensorArg b = binding.empty() ? TensorArg{} : binding[tensor_arg];
      ++tensor_arg;
      if (arg.kind == AtenArgKind::kTensor) {
        stack.emplace_back(dense(call.in[next++]));
      } else if (arg.kind == AtenArgKind::kOptionalTensor) {
        stack.emplace_back(b.count == 1 ? c10::IValue(dense(call.in[next++])) : c10::IValue());
      } else if (arg.kind == AtenArgKind::kTensorList) {
        c10::List<at::Tensor> list;
        for (int32_t k = 0; k < b.count; ++k) list.push_back(dense(call.in[next++]));
        stack.emplace_back(list);
      } else {
        c10::List<c10::optional<at::Tensor>> list;
        for (uint8_t present : b.present) {
          list.push_back(present ? c10::optional<at::Tensor>(dense(call.in[next++])) : c10::nullopt);
        }
        stack.emplace_back(list);
      }
      continue;
    }
    if (const AttrValue* value = call.attrs().find(arg.name)) {
      stack.push_back(attr_value(*value, arg));
      continue;
    }
    const c10::Argument& c10_arg = c10_schema.arguments()[i];
    if (c10_arg.default_value()) {
      stack.push_back(*c10_arg.default_value());
    } else if (arg.optional) {
      stack.emplace_back();
    } else {
      return make_error("argument '{}' is missing and has no default", arg.name);
    }
  }
  return stack;
}

}  // namespace

KernelResult generic(const KernelCall& call) {
  const AtenSchema* schema = find_aten_schema(call.node.aten);
  c10::optional<c10::OperatorHandle> op =
      c10::Dispatcher::singleton().findSchema(operator_name(call.node.aten));
  if (schema == nullptr || !op) return make_error("libtorch has no op {}", call.node.aten);
  if (op->schema().arguments().size() != schema->args.size()) {
    return make_error("libtorch's schema of {} differs from the one autopar was built with ({})",
                      call.node.aten, schema->text);
  }
  Expected<torch::jit::Stack> stack = bind(call, *schema, op->schema());
  if (!stack) return stack.error();
  op->callBoxed(&*stack);
  Tensors outputs;
  for (const c10::IValue& value : *stack) {
    if (value.isTensor()) {
      outputs.push_back(value.toTensor().contiguous());
    } else if (value.isTensorList()) {
      for (const at::Tensor& t : value.toTensorVector()) outputs.push_back(t.contiguous());
    } else {
      return make_error("libtorch returned a {} where autopar expects tensors", value.tagKind());
    }
  }
  return outputs;
}

}  // namespace autopar::kernels
