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
  // The size of the step's from and to shard dims across this mesh dim's
  // group (the whole dim unless another mesh dim splits it too): torch.chunk's
  // pieces of it are the group's shards (placement.h). 0: not a shard.
  int64_t from_size = 0;
  int64_t to_size = 0;
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

// A local dim of `have` elements must be the piece of a `size` dim the step
// expects: the whole dim, or this rank's torch.chunk piece of it. Anything
// else is a plan passing through a sharding finer than the dim allows.
Status check_size(const at::Tensor& x, int dim, int64_t expected) {
  if (x.size(dim) == expected) return ok_status();
  return make_error("local dim {} of shape [{}] holds {} elements where the step expects {} (an invalid sharding "
                    "on the way; please report it with the plan)",
                    dim, fmt::join(x.sizes(), ", "), x.size(dim), expected);
}

// x grown along dim to `size` with zeros (collectives send equal pieces).
at::Tensor pad_to(const at::Tensor& x, int dim, int64_t size) {
  if (x.size(dim) == size) return x;
  std::vector<int64_t> shape = x.sizes().vec();
  shape[static_cast<size_t>(dim)] = size - x.size(dim);
  return at::cat({x, at::zeros(shape, x.options())}, dim);
}

// This rank's piece of a `size` dim (checked), zero-padded to the group's
// equal piece for sending.
Expected<at::Tensor> padded_piece(const at::Tensor& x, int dim, int64_t size, const StepContext& ctx) {
  if (dim >= x.dim()) return make_error("cannot send dim {} of a rank-{} tensor", dim, x.dim());
  if (Status s = check_size(x, dim, chunk_size(size, ctx.group, ctx.me)); !s) return s.error();
  return pad_to(x, dim, padded_chunk(size, ctx.group));
}

// A received padded piece cut to this rank's true piece of a `size` dim,
// copied out so it does not hold the padded buffer.
at::Tensor own_piece(const at::Tensor& t, int dim, int64_t size, const StepContext& ctx) {
  const int64_t keep = chunk_size(size, ctx.group, ctx.me);
  return keep == t.size(dim) ? t : t.narrow(dim, 0, keep).clone();
}

// x's whole dim `dim` (of `size` elements) as the group's pieces, each padded
// to ceil(size / group), stacked as [group, ...] contiguous.
Expected<at::Tensor> blocks_along(const at::Tensor& x, int dim, int64_t size, const StepContext& ctx) {
  if (dim >= x.dim()) return make_error("cannot split dim {} of a rank-{} tensor", dim, x.dim());
  if (Status s = check_size(x, dim, size); !s) return s.error();
  const int64_t piece = padded_chunk(size, ctx.group);
  return at::stack(pad_to(x, dim, piece * ctx.group).chunk(ctx.group, dim), 0).contiguous();
}

// The group's padded pieces (recv: [group, ...]) joined along dim into the
// whole `size` elements, each piece cut to its true size.
at::Tensor join_pieces(const at::Tensor& recv, int dim, int64_t size, int64_t group) {
  std::vector<at::Tensor> parts;
  for (int64_t j = 0; j < group; ++j) {
    at::Tensor part = recv[j];
    const int64_t keep = chunk_size(size, group, j);
    parts.push_back(keep == part.size(dim) ? part : part.narrow(dim, 0, keep));
  }
  return at::cat(parts, dim);
}

Expected<at::Tensor> all_gather(const at::Tensor& x, int dim, const StepContext& ctx) {
  Expected<at::Tensor> piece = padded_piece(x, dim, ctx.from_size, ctx);
  if (!piece) return piece.error();
  at::Tensor send = piece->contiguous();
  Expected<DType> dt = wire_dtype(send);
  if (!dt) return dt.error();
  std::vector<int64_t> sizes{ctx.group};
  for (int64_t s : send.sizes()) sizes.push_back(s);
  at::Tensor recv = at::empty(sizes, send.options());
  ctx.bytes = static_cast<double>(recv.nbytes());
  Status s = ctx.comm.all_gather(send.data_ptr(), recv.data_ptr(), send.numel(), *dt);
  if (!s) return s.error();
  return join_pieces(recv, dim, ctx.from_size, ctx.group);
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
  Expected<at::Tensor> blocks = blocks_along(x, dim, ctx.to_size, ctx);
  if (!blocks) return blocks.error();
  at::Tensor send = std::move(*blocks);
  Expected<DType> dt = wire_dtype(send);
  if (!dt) return dt.error();
  at::Tensor recv = at::empty(send.sizes().slice(1), send.options());
  ctx.bytes = static_cast<double>(send.nbytes());
  Status s = ctx.comm.reduce_scatter_sum(send.data_ptr(), recv.data_ptr(), recv.numel(), *dt);
  if (!s) return s.error();
  return own_piece(recv, dim, ctx.to_size, ctx);
}

Expected<at::Tensor> all_to_all(const at::Tensor& x, int from_dim, int to_dim,
                                const StepContext& ctx) {
  // Every rank sends equal blocks: its from-dim piece padded, cut along to_dim.
  Expected<at::Tensor> padded = padded_piece(x, from_dim, ctx.from_size, ctx);
  if (!padded) return padded.error();
  Expected<at::Tensor> blocks = blocks_along(*padded, to_dim, ctx.to_size, ctx);
  if (!blocks) return blocks.error();
  at::Tensor send = std::move(*blocks);
  Expected<DType> dt = wire_dtype(send);
  if (!dt) return dt.error();
  at::Tensor recv = at::empty_like(send);
  ctx.bytes = static_cast<double>(send.nbytes());
  Status s = ctx.comm.all_to_all(send.data_ptr(), recv.data_ptr(), send.numel() / ctx.group, *dt);
  if (!s) return s.error();
  // Block j: rank j's from-dim piece of my to-dim piece.
  return own_piece(join_pieces(recv, from_dim, ctx.from_size, ctx.group), to_dim, ctx.to_size, ctx);
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
    const int dim = want.dim();
    if (dim >= x.dim()) return make_error("cannot slice dim {} of a rank-{} tensor", dim, x.dim());
    if (Status s = check_size(x, dim, ctx.to_size); !s) return s.error();
    return x.narrow(dim, chunk_start(ctx.to_size, ctx.group, ctx.me), chunk_size(ctx.to_size, ctx.group, ctx.me))
        .contiguous();
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
  Sharding state = plan.from;
  // A shard dim's size across mesh dim m's group: the whole dim divided by
  // the other mesh dims splitting it now (evenly: uneven dims have one).
  auto group_size = [&](Placement p, MeshDim m) -> int64_t {
    if (!p.is_shard()) return 0;
    int64_t size = plan.sent_meta.shape[static_cast<size_t>(p.dim())];
    for (MeshDim k = 0; k < state.ndim; ++k) {
      if (k != m && state[k].is_shard() && state[k].dim() == p.dim()) size /= mesh.mesh().size(k);
    }
    return size;
  };
  for (const RedistStep& step : plan.steps) {
    StepContext ctx{mesh.dim(step.mesh_dim), mesh.mesh().size(step.mesh_dim),
                    mesh.coordinate(step.mesh_dim), tracer, step, tensor,
                    group_size(step.from, step.mesh_dim), group_size(step.to, step.mesh_dim)};
    state[step.mesh_dim] = step.to;
    Expected<at::Tensor> y = run_step(x, ctx);
    if (!y) {
      return make_error_like(y.error(), "redistributing {} ({}): {}", tensor, to_string(step, mesh.mesh()),
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
  StepContext ctx{mesh.dim(m), mesh.mesh().size(m), mesh.coordinate(m), tracer, step, tensor, 0, 0};
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
