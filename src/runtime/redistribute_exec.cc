#include "runtime/redistribute_exec.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace autopar {
namespace {

struct StepContext {
  const Communicator& comm;
  int64_t group = 1;
  int64_t me = 0;
  Tracer* tracer = nullptr;
  const RedistStep& step;
  const std::string& tensor;
  // B of the collective the step ran (comm_cost.h), for its trace event,
  // which spans the whole step: packing, the transfer and unpacking.
  mutable double bytes = 0;
};

// The dtypes the communicator moves (complex goes as its real view); it
// reduces the f32, f64, i32 and i64 ones and refuses to reduce the others.
Expected<DType> wire_dtype(const at::Tensor& x) {
  switch (x.scalar_type()) {
    case at::kFloat: return DType::f32;
    case at::kDouble: return DType::f64;
    case at::kInt: return DType::i32;
    case at::kLong: return DType::i64;
    case at::kBool: return DType::boolean;  // masks: gathered, sliced, never summed
    case at::kHalf: return DType::f16;
    case at::kBFloat16: return DType::bf16;
    default: return make_error("cannot send a tensor of type {}", at::toString(x.scalar_type()));
  }
}


// A shard step splits a local dim evenly or refuses: at::chunk would quietly
// hand out unequal or missing blocks (a plan passing through a sharding finer
// than the dim divides).
Status check_splits(const at::Tensor& x, int dim, int64_t group) {
  if (dim < x.dim() && x.size(dim) % group == 0) return ok_status();
  return make_error("cannot split local dim {} of shape [{}] into {} equal shards (an invalid "
                    "sharding on the way; please report it with the plan)",
                    dim, fmt::join(x.sizes(), ", "), group);
}

// Splits x along dim into the group's blocks, stacked as [group, ...] contiguous.
Expected<at::Tensor> blocks_along(const at::Tensor& x, int dim, int64_t group) {
  if (Status s = check_splits(x, dim, group); !s) return s.error();
  return at::stack(x.chunk(group, dim), 0).contiguous();
}

Expected<at::Tensor> all_gather(const at::Tensor& x, int dim, const StepContext& ctx) {
  at::Tensor send = x.contiguous();
  Expected<DType> dt = wire_dtype(send);
  if (!dt) return dt.error();
  std::vector<int64_t> sizes{ctx.group};
  for (int64_t s : send.sizes()) sizes.push_back(s);
  at::Tensor recv = at::empty(sizes, send.options());
  ctx.bytes = static_cast<double>(recv.nbytes());
  Status s = ctx.comm.all_gather(send.data_ptr(), recv.data_ptr(), send.numel(), *dt);
  if (!s) return s.error();
  return at::cat(recv.unbind(0), dim);
}

Expected<at::Tensor> all_reduce(const at::Tensor& x, const StepContext& ctx) {
  at::Tensor buf = x.contiguous().clone();
  Expected<DType> dt = wire_dtype(buf);
  if (!dt) return dt.error();
  ctx.bytes = static_cast<double>(buf.nbytes());
  Status s = ctx.comm.all_reduce_sum(buf.data_ptr(), buf.numel(), *dt);
  if (!s) return s.error();
  return buf;
}

Expected<at::Tensor> reduce_scatter(const at::Tensor& x, int dim, const StepContext& ctx) {
  Expected<at::Tensor> blocks = blocks_along(x, dim, ctx.group);
  if (!blocks) return blocks.error();
  at::Tensor send = std::move(*blocks);
  Expected<DType> dt = wire_dtype(send);
  if (!dt) return dt.error();
  at::Tensor recv = at::empty(send.sizes().slice(1), send.options());
  ctx.bytes = static_cast<double>(send.nbytes());
  Status s = ctx.comm.reduce_scatter_sum(send.data_ptr(), recv.data_ptr(), recv.numel(), *dt);
  if (!s) return s.error();
  return recv;
}

Expected<at::Tensor> all_to_all(const at::Tensor& x, int from_dim, int to_dim,
                                const StepContext& ctx) {
  Expected<at::Tensor> blocks = blocks_along(x, to_dim, ctx.group);
  if (!blocks) return blocks.error();
  at::Tensor send = std::move(*blocks);
  Expected<DType> dt = wire_dtype(send);
  if (!dt) return dt.error();
  at::Tensor recv = at::empty_like(send);
  ctx.bytes = static_cast<double>(send.nbytes());
  Status s = ctx.comm.all_to_all(send.data_ptr(), recv.data_ptr(), send.numel() / ctx.group, *dt);
  if (!s) return s.error();
  return at::cat(recv.unbind(0), from_dim);
}

// No communication: from what the collective left (`have`) to the step's target.
Expected<at::Tensor> local_change(const at::Tensor& x, Placement have, Placement want,
                                  const StepContext& ctx) {
  if (have == want) return x;
  if (have.is_partial() && want.is_partial()) {
    // Terms of a sum and of an average differ by the group size.
    if (have.reduce_op() == ReduceOp::kAvg && want.reduce_op() == ReduceOp::kSum) {
      return x / static_cast<double>(ctx.group);
    }
    if (have.reduce_op() == ReduceOp::kSum && want.reduce_op() == ReduceOp::kAvg) {
      return x * static_cast<double>(ctx.group);
    }
  }
  if (have.is_replicate() && want.is_shard()) {
    if (Status s = check_splits(x, want.dim(), ctx.group); !s) return s.error();
    return x.chunk(ctx.group, want.dim())[static_cast<size_t>(ctx.me)].contiguous();
  }
  if (have.is_replicate() && want.is_partial()) {
    // Sum: one rank holds the value; avg/max/min: every rank does.
    if (want.reduce_op() != ReduceOp::kSum || ctx.me == 0) return x;
    return at::zeros_like(x);
  }
  return make_error("no local change from {} to {} on mesh dim {}", to_string(have),
                    to_string(want), ctx.step.mesh_dim);
}

Expected<at::Tensor> run_step_untimed(const at::Tensor& x, const StepContext& ctx) {
  const RedistStep& step = ctx.step;
  Expected<at::Tensor> y = x;
  Placement have = step.from;
  switch (step.collective) {
    case Collective::kAllGather:
      if (!step.from.is_shard()) break;
      y = all_gather(x, step.from.dim(), ctx);
      have = Placement::replicate();
      break;
    case Collective::kAllReduce:
      if (!step.from.is_partial()) break;
      y = all_reduce(x, ctx);
      have = Placement::replicate();
      break;
    case Collective::kReduceScatter:
      if (!step.from.is_partial() || !step.to.is_shard()) break;
      y = reduce_scatter(x, step.to.dim(), ctx);
      have = step.to;
      break;
    case Collective::kAllToAll:
      if (!step.from.is_shard() || !step.to.is_shard()) break;
      y = all_to_all(x, step.from.dim(), step.to.dim(), ctx);
      have = step.to;
      break;
    case Collective::kLocalSlice:
      break;
  }
  if (!y) return y.error();
  if (step.from.is_partial() && have != step.from) {  // the reduction ran as a sum
    if (step.from.reduce_op() == ReduceOp::kAvg) {
      *y = *y / static_cast<double>(ctx.group);
    } else if (step.from.reduce_op() != ReduceOp::kSum) {
      return make_error("reducing P({}) is not supported (the communicator sums)",
                        reduce_op_name(step.from.reduce_op()));
    }
  }
  return local_change(*y, have, step.to, ctx);
}

// One step, traced as one collective event when it communicates.
Expected<at::Tensor> run_step(const at::Tensor& x, const StepContext& ctx) {
  double start = ctx.tracer ? ctx.tracer->now_us() : 0;
  Expected<at::Tensor> y = run_step_untimed(x, ctx);
  if (ctx.tracer && ctx.bytes > 0) {
    ctx.tracer->collective(ctx.step.collective, ctx.step.mesh_dim, ctx.bytes, ctx.tensor, start,
                           ctx.tracer->now_us());
  }
  return y;
}

}  // namespace

Expected<at::Tensor> execute_redistribution(const at::Tensor& local, const RedistPlan& plan,
                                            const SpmdMesh& mesh, Tracer* tracer,
                                            const std::string& tensor, const StorageAccount* account) {
  auto hold = [account](const at::Tensor& t, bool held) {
    if (account) (*account)(t, held);
  };
  const bool complex = local.is_complex();
  at::Tensor x = complex ? at::view_as_real(local.resolve_conj().contiguous()) : local;
  bool owned = false;  // x is a step's result, not the operand
  for (const RedistStep& step : plan.steps) {
    StepContext ctx{mesh.dim(step.mesh_dim), mesh.mesh().size(step.mesh_dim),
                    mesh.coordinate(step.mesh_dim), tracer, step, tensor};
    Expected<at::Tensor> y = run_step(x, ctx);
    if (!y) {
      return make_error("redistributing {} ({}): {}", tensor, to_string(step, mesh.mesh()),
                        y.error().message);
    }
    at::Tensor out = std::move(*y);
    if (out.storage().unsafeGetStorageImpl() == x.storage().unsafeGetStorageImpl()) out = out.clone();
    hold(out, true);
    if (owned) hold(x, false);
    x = std::move(out);
    owned = true;
  }
  if (!owned) {
    x = x.clone();
    hold(x, true);
  }
  x = x.contiguous();
  hold(x, false);
  return complex ? at::view_as_complex(x) : x;
}

Status all_reduce_in_place(at::Tensor& t, const SpmdMesh& mesh, MeshDim m, Tracer* tracer,
                           const std::string& tensor) {
  RedistStep step;
  step.collective = Collective::kAllReduce;
  step.mesh_dim = m;
  StepContext ctx{mesh.dim(m), mesh.mesh().size(m), mesh.coordinate(m), tracer, step, tensor};
  double start = tracer ? tracer->now_us() : 0;
  Expected<at::Tensor> sum = all_reduce(t, ctx);
  if (tracer) tracer->collective(step.collective, m, ctx.bytes, tensor, start, tracer->now_us());
  if (!sum) return sum.error();
  t = std::move(*sum);
  return ok_status();
}

Expected<at::Tensor> gather_full(const at::Tensor& local, const TensorMeta& meta,
                                 const Sharding& sharding, const SpmdMesh& mesh) {
  Sharding full = Sharding::replicated(sharding.ndim);
  if (sharding == full) return local;
  RedistPlan plan = plan_redistribution(meta, sharding, full, mesh.mesh());
  return execute_redistribution(local, plan, mesh, nullptr, "gather");
}

}  // namespace autopar
