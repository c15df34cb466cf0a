// Helpers that build OpRules from einsum-like specs. Each op family file
// (rules/<family>.cc) turns a call into a spec string and a few marks.
//
// Spec syntax: tensors separated by ',', inputs and outputs by "->"; each dim
// is a factor letter, "(bc)" for a dim merged from factors b (outer) and c, or
// a digit / '_' for a dim no factor maps to. Letters in no output become
// reduce factors (Partial(sum) unless marked otherwise).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "sharding/op_rules.h"

namespace autopar::sharding_rules {

// The shapes of a call's inputs and outputs, for spec parsing.
Expected<OpRule> rule_from_spec(std::string_view spec, const RuleCall& call);
Expected<OpRule> rule_from_spec(std::string_view spec, std::span<const Shape> inputs,
                                std::span<const Shape> outputs);

// "abc..." for rank n, starting at letter `first`.
std::string letters(int64_t n, char first = 'a');
// Right-aligned broadcasting of each input onto the output: equal dims share a
// letter, broadcast dims print as '1'.
std::string pointwise_spec(const RuleCall& call);
// Regroups in -> out dims (views): "a(bc)->abc".
std::string view_spec(const Shape& in, const Shape& out);

void mark_replicate_only(OpRule& rule, char factor);
void mark_reduce(OpRule& rule, char factor, ReduceOp op);
// Linear group over inputs (bit i = input i may be Partial).
void add_linear(OpRule& rule, std::initializer_list<int> inputs);
// An extra option from its printed form, e.g. "S(0)R->P"; sync: the op
// all-reduces across the mesh dim itself (rule.h).
Status add_extra(OpRule& rule, std::string_view option, bool sync = false);

// An output an output_mask turns off: the empty [0] tensor (PyTorch's None).
// It sees no factor ("_" in a spec) and is Replicate in every option.
bool is_masked(const TensorMeta& out);

// Rules shared by several families.
Expected<OpRule> identity_rule(const RuleCall& call, bool linear);  // unary, same shape

// Family entry points (one file each), registered in registry.cc.
Expected<OpRule> addmm_rule(const RuleCall& call);
Expected<OpRule> baddbmm_rule(const RuleCall& call);
Expected<OpRule> bmm_rule(const RuleCall& call);
Expected<OpRule> mm_rule(const RuleCall& call);

Expected<OpRule> expand_rule(const RuleCall& call);
Expected<OpRule> t_rule(const RuleCall& call);
Expected<OpRule> transpose_rule(const RuleCall& call);
Expected<OpRule> unsqueeze_rule(const RuleCall& call);
Expected<OpRule> view_rule(const RuleCall& call);

Expected<OpRule> conj_rule(const RuleCall& call);
Expected<OpRule> view_as_complex_rule(const RuleCall& call);
Expected<OpRule> view_as_real_rule(const RuleCall& call);

Expected<OpRule> pointwise_linear_rule(const RuleCall& call);     // clone, mul/div.Scalar, _to_copy, zeros_like
Expected<OpRule> pointwise_nonlinear_rule(const RuleCall& call);  // relu, silu, add.Scalar, ones_like, ...
Expected<OpRule> add_tensor_rule(const RuleCall& call);
Expected<OpRule> mul_tensor_rule(const RuleCall& call);
Expected<OpRule> grad_linear_rule(const RuleCall& call);  // silu_backward, threshold_backward
Expected<OpRule> div_tensor_rule(const RuleCall& call);
Expected<OpRule> fill_rule(const RuleCall& call);  // fill.Scalar
Expected<OpRule> masked_fill_rule(const RuleCall& call);
Expected<OpRule> where_self_rule(const RuleCall& call);

Expected<OpRule> mean_rule(const RuleCall& call);
Expected<OpRule> sum_rule(const RuleCall& call);

Expected<OpRule> embedding_rule(const RuleCall& call);
Expected<OpRule> embedding_dense_backward_rule(const RuleCall& call);
Expected<OpRule> log_softmax_rule(const RuleCall& call);
Expected<OpRule> log_softmax_backward_rule(const RuleCall& call);
Expected<OpRule> nll_loss_forward_rule(const RuleCall& call);
Expected<OpRule> nll_loss_backward_rule(const RuleCall& call);

Expected<OpRule> sdpa_rule(const RuleCall& call);
Expected<OpRule> sdpa_backward_rule(const RuleCall& call);

// pointwise.cc: random ops shard every dim (their draws follow the global index)
Expected<OpRule> random_rule(const RuleCall& call);

// cnn.cc (PyTorch import: CNN ops)
Expected<OpRule> convolution_rule(const RuleCall& call);
Expected<OpRule> convolution_backward_rule(const RuleCall& call);
Expected<OpRule> max_pool2d_with_indices_rule(const RuleCall& call);
Expected<OpRule> max_pool2d_with_indices_backward_rule(const RuleCall& call);
Expected<OpRule> native_batch_norm_rule(const RuleCall& call);
Expected<OpRule> native_batch_norm_backward_rule(const RuleCall& call);

// transformer.cc (PyTorch import: transformer ops)
Expected<OpRule> cat_rule(const RuleCall& call);
Expected<OpRule> native_layer_norm_rule(const RuleCall& call);
Expected<OpRule> native_layer_norm_backward_rule(const RuleCall& call);
Expected<OpRule> permute_rule(const RuleCall& call);
Expected<OpRule> select_rule(const RuleCall& call);
Expected<OpRule> select_backward_rule(const RuleCall& call);
Expected<OpRule> slice_rule(const RuleCall& call);
Expected<OpRule> slice_backward_rule(const RuleCall& call);

// pooling.cc (PyTorch import: pooling and upsampling)
Expected<OpRule> pool_rule(const RuleCall& call);
Expected<OpRule> pool_backward_rule(const RuleCall& call);

// norms.cc (PyTorch import: group norm)
Expected<OpRule> native_group_norm_rule(const RuleCall& call);
Expected<OpRule> native_group_norm_backward_rule(const RuleCall& call);

// shape.cc (PyTorch import: shape ops)
Expected<OpRule> constant_pad_nd_rule(const RuleCall& call);
Expected<OpRule> roll_rule(const RuleCall& call);
Expected<OpRule> stack_rule(const RuleCall& call);

// losses.cc (PyTorch import: per-pixel loss)
Expected<OpRule> nll_loss2d_forward_rule(const RuleCall& call);
Expected<OpRule> nll_loss2d_backward_rule(const RuleCall& call);

Expected<OpRule> getitem_rule(const RuleCall& call);
// Generic aten ops: every tensor replicated (no factor may shard).
Expected<OpRule> generic_rule(const RuleCall& call);
Expected<OpRule> placeholder_rule(const RuleCall& call);

}  // namespace autopar::sharding_rules
