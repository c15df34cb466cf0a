// Op sharding rules: what one op allows on ONE mesh dim, as printable data.
//
// A rule names the factors of an op's iteration space (einsum letters) and
// lists, for every input and output, which factors make up each tensor dim:
//
//   mm          ab,bc->ac  reduce={b:sum}  linear={0}{1}
//   add.Tensor  abc,c->abc  linear={0,1}
//   view        a(bc)->abc      [4096] split into [32, 128]: only b, the outer
//                               factor of a merged group, can shard it
//   log_softmax abc->abc  replicate={c}
//
// One mesh dim's options follow from the rule (single_dim_options):
//   - all Replicate;
//   - per shardable factor f: every tensor whose dim starts with f is S(dim);
//     a tensor holding f only as an inner factor of a merged dim rules the
//     option out; an output without f is P(kind) when f is a reduce factor
//     (it is in no output), otherwise the option is out; an input without f is
//     Replicate (broadcast), or Partial when the rule marks it additive (the
//     bias of addmm under a contraction);
//   - per linear group: those inputs P(sum), the other inputs R, outputs P(sum)
//     (Partial flows through ops linear in those inputs: add P+P->P,
//     mul P*R->P, views P->P);
//   - extra options written out as placements (embedding's masked lookup,
//     nll_loss's batch-sharded loss); an extra option marked `sync` is one
//     where the op itself all-reduces statistics across that mesh dim
//     (training-mode batch norm on a batch shard: SyncBatchNorm). Its cost is
//     the rule's sync all-reduces on the buffer sizes it names; the runtime
//     hands the kernel a sum over the mesh dims (KernelContext::sync_sum).
// The generic engine (strategy.h) expands them to N-D meshes.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ir/expected.h"
#include "ir/op_def.h"
#include "sharding/placement.h"

namespace autopar {

using FactorId = int8_t;

enum class FactorKind : uint8_t {
  kPass,           // appears in outputs; sharding it shards them
  kReduce,         // in no output: sharding it leaves outputs Partial(reduce)
  kReplicateOnly,  // never sharded (softmax dim, attention sequence dims)
};

struct Factor {
  char name = 'a';
  FactorKind kind = FactorKind::kPass;
  ReduceOp reduce = ReduceOp::kSum;  // kReduce only
};

// One tensor of the rule: per dim, its factors outer to inner. An empty list is
// a dim no factor maps to (a broadcast size-1 dim, the pair dim of a complex
// view); it is never sharded and prints as its size.
struct TensorFactors {
  std::vector<std::vector<FactorId>> dims;
  Shape sizes;
};

// One mesh dim's choice: a placement per input, then per output.
struct DimOption {
  std::vector<Placement> placements;
  bool sync = false;  // the op all-reduces across this mesh dim itself
  bool operator==(const DimOption&) const = default;
};

// What a sync option's all-reduces move, per sync'd mesh dim: one all-reduce
// per entry of `units`, each `units[k]` times the local bytes of tensor
// `tensor` (an index over inputs then outputs, as DimOption::placements).
// Batch norm: two reductions of one [C] statistic, {save_mean, {1, 1}}.
struct SyncCost {
  int32_t tensor = -1;
  std::vector<int32_t> units;
};

struct OpRule {
  std::vector<Factor> factors;
  std::vector<TensorFactors> inputs;
  std::vector<TensorFactors> outputs;
  uint32_t additive_inputs = 0;     // bit i: input i is Partial (not R) under a reduce factor
  std::vector<uint32_t> linear;     // each: bit mask of inputs that may be Partial together
  std::vector<DimOption> extra;     // options the factors cannot express
  SyncCost sync;                    // the all-reduces of sync extra options
  bool placeholder = false;         // graph inputs: every S/R, never P (printed differently)

  int num_tensors() const { return static_cast<int>(inputs.size() + outputs.size()); }
};

// Printed form, one line: "ab,bc->ac reduce={b:sum} linear={0}{1}"; a sync
// extra option prints with a trailing " sync".
std::string to_string(const OpRule& rule);
std::string to_string(const DimOption& option, int num_inputs);  // "S(0)R->P"

// The rule's options for one mesh dim: all-Replicate first, then factor,
// linear and extra options; duplicates removed.
std::vector<DimOption> single_dim_options(const OpRule& rule);

// Checks factor ids and that every tensor's dims match its sizes (for rule tests).
Status check_rule(const OpRule& rule);

}  // namespace autopar
