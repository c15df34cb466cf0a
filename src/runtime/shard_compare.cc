#include "runtime/shard_compare.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <ATen/ATen.h>

#include "runtime/redistribute_exec.h"
#include "runtime/shard_tensor.h"
#include "sharding/redistribute.h"

namespace autopar {
namespace {

// f64 values of a tensor (a complex one as its real view).
at::Tensor as_doubles(const at::Tensor& t) {
  return (t.is_complex() ? at::view_as_real(t.resolve_conj().contiguous()) : t).to(at::kDouble).contiguous();
}

}  // namespace

Expected<ShardComparison> compare_every_shard(const at::Tensor& local, const TensorMeta& meta,
                                              const Sharding& sharding, const at::Tensor& reference,
                                              const SpmdMesh& mesh, const CheckTolerance& tolerance,
                                              at::Tensor* adopt) {
  Sharding summed = sharding;
  for (MeshDim m = 0; m < sharding.ndim; ++m) {
    if (summed[m].is_partial()) summed[m] = Placement::replicate();
  }
  at::Tensor block = local;
  if (!(summed == sharding)) {
    Expected<at::Tensor> reduced = execute_redistribution(
        local, plan_redistribution(meta, sharding, summed, mesh.mesh()), mesh, nullptr, "check");
    if (!reduced) return reduced.error();
    block = std::move(*reduced);
  }
  // Uneven blocks differ in size: every rank sends its element count, then
  // its values zero-padded to the largest block (the plan's padded one).
  at::Tensor values = as_doubles(block).reshape({-1});
  int64_t largest = 1;
  for (int64_t d : local_shape(communicated_meta(meta).shape, summed, mesh.mesh())) largest *= d;
  largest = std::max(largest, values.numel());
  at::Tensor send = at::zeros({1 + largest}, values.options());
  send[0] = static_cast<double>(values.numel());
  send.narrow(0, 1, values.numel()).copy_(values);
  const int ranks = mesh.world().size();
  at::Tensor recv = at::empty({ranks, send.numel()}, send.options());
  if (Status s = mesh.world().all_gather(send.data_ptr(), recv.data_ptr(), send.numel(), DType::f64); !s) {
    return s.error();
  }
  ShardComparison c;
  if (mesh.world().rank() != 0) return c;
  double worst_ratio = -1;
  for (int r = 0; r < ranks; ++r) {
    Expected<at::Tensor> want = local_shard(reference, summed, mesh.mesh(), mesh_coordinate(mesh.mesh(), r));
    if (!want) return want.error();
    at::Tensor expect = as_doubles(*want);
    double error = std::numeric_limits<double>::infinity();
    double tol = tolerance.atol;
    const auto count = static_cast<int64_t>(recv[r][0].item<double>());
    if (expect.numel() == count && count <= largest) {
      at::Tensor got = recv[r].narrow(0, 1, count).view(expect.sizes());
      error = expect.numel() == 0 ? 0 : (got - expect).abs().max().item<double>();
      if (expect.numel() > 0) tol += tolerance.rtol * expect.abs().max().item<double>();
      if (adopt != nullptr) {
        Expected<at::Tensor> into = local_shard(*adopt, summed, mesh.mesh(), mesh_coordinate(mesh.mesh(), r));
        if (!into) return into.error();
        (into->is_complex() ? at::view_as_real(*into) : *into).copy_(got);
      }
    }
    if (std::isnan(error)) error = std::numeric_limits<double>::infinity();
    c.max_error = std::max(c.max_error, error);
    double ratio = error / tol;
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      c.tolerance = tol;
      c.worst_rank = r;
    }
    if (!(error <= tol)) c.ok = false;
  }
  return c;
}

}  // namespace autopar
