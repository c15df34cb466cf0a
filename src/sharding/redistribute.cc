#include "sharding/redistribute.h"

#include <fmt/format.h>

namespace autopar {

TensorMeta communicated_meta(const TensorMeta& meta) {
  if (!is_complex(meta.dtype)) return meta;
  TensorMeta real{meta.shape, real_part_dtype(meta.dtype)};
  real.shape.push_back(2);
  return real;
}

namespace {

class Planner {
 public:
  Planner(const TensorMeta& meta, const Sharding& from, const DeviceMesh& mesh)
      : meta_(communicated_meta(meta)), from_(from), cur_(from), mesh_(mesh) {}

  void run(const Sharding& to) {
    for (MeshDim m = mesh_.ndim() - 1; m >= 0; --m) change_outward(m, to);
    for (MeshDim m = 0; m < mesh_.ndim(); ++m) {
      if (cur_[m] == to[m]) continue;
      if (to[m].is_shard()) gather_inner(m, to[m].dim(), -1);
      step(Collective::kLocalSlice, m, to[m]);
    }
  }

  RedistPlan take() {
    RedistPlan plan;
    plan.sent_meta = meta_;
    plan.from = from_;
    plan.steps = std::move(steps_);
    for (const RedistStep& s : plan.steps) {
      plan.time_s += s.time_s;
      plan.sent_bytes += s.sent_bytes;
    }
    return plan;
  }

 private:
  // True when a mesh dim outside m will still change and splits tensor dim d
  // now or after the change: that change gathers m's shard of d first
  // (gather_inner), so splitting d on m now would be undone, and may split d
  // finer than it divides (2x2, [2, ...]: S(0)S(3) -> RS(0) must not pass
  // through S(0)S(0)).
  bool undone_later(MeshDim m, int d, const Sharding& to) const {
    for (MeshDim k = 0; k < m; ++k) {
      if (cur_[k] == to[k]) continue;
      if ((cur_[k].is_shard() && cur_[k].dim() == d) || (to[k].is_shard() && to[k].dim() == d)) {
        return true;
      }
    }
    return false;
  }

  // Phase 1 on mesh dim m: every change that communicates. A shard that a
  // later outer change would undo is made Replicate here and sliced in phase 2.
  void change_outward(MeshDim m, const Sharding& to) {
    Placement target = to[m];
    if (target.is_shard() && undone_later(m, target.dim(), to)) target = Placement::replicate();
    Placement c = cur_[m];
    if (c == target || c.is_replicate()) return;
    if (c.is_shard() && target.is_shard()) {
      gather_inner(m, c.dim(), target.dim());
      step(Collective::kAllToAll, m, target);
    } else if (c.is_shard()) {
      gather_inner(m, c.dim(), -1);
      step(Collective::kAllGather, m, Placement::replicate());
    } else if (target.is_shard()) {
      gather_inner(m, target.dim(), -1);
      step(Collective::kReduceScatter, m, target);
    } else {
      step(Collective::kAllReduce, m, Placement::replicate());
    }
  }

  // Gathers every mesh dim inside m that splits tensor dim d0 or d1, innermost first.
  void gather_inner(MeshDim m, int d0, int d1) {
    for (MeshDim k = mesh_.ndim() - 1; k > m; --k) {
      Placement p = cur_[k];
      if (p.is_shard() && (p.dim() == d0 || p.dim() == d1)) {
        step(Collective::kAllGather, k, Placement::replicate());
      }
    }
  }

  // Records one step. Its bytes are counted on the buffer the collective
  // moves, in equal pieces: a shard dim it joins or splits counts as the
  // group's padded pieces (placement.h; the dim itself when even). A local
  // slice records the piece it keeps.
  void step(Collective c, MeshDim m, Placement to) {
    RedistStep s;
    s.collective = c;
    s.mesh_dim = m;
    s.from = cur_[m];
    s.to = to;
    s.dtype = meta_.dtype;
    const int64_t group = mesh_.size(m);
    Sharding after = cur_;
    after[m] = to;
    local_shape_into(meta_.shape, c == Collective::kLocalSlice ? after : cur_, mesh_, s.local_shape);
    if (c == Collective::kAllGather) {
      s.local_shape[static_cast<size_t>(s.from.dim())] *= group;
    } else if (c != Collective::kLocalSlice && to.is_shard()) {
      const auto d = static_cast<size_t>(to.dim());
      s.local_shape[d] = local_shape(meta_.shape, after, mesh_)[d] * group;
    }
    cur_[m] = to;
    int64_t numel = 1;
    for (int64_t d : s.local_shape) numel *= d;
    const MeshDimSpec& dim = mesh_.dims[static_cast<size_t>(m)];
    if (c != Collective::kLocalSlice) {
      s.buffer_bytes = static_cast<double>(numel * dtype_size(meta_.dtype));
      s.sent_bytes = collective_sent_bytes(c, dim.size, s.buffer_bytes);
      s.time_s = collective_time(c, dim.group, s.buffer_bytes);
    }
    steps_.push_back(std::move(s));
  }

  TensorMeta meta_;
  Sharding from_;
  Sharding cur_;
  const DeviceMesh& mesh_;
  std::vector<RedistStep> steps_;
};

}  // namespace

RedistPlan plan_redistribution(const TensorMeta& meta, const Sharding& from, const Sharding& to,
                               const DeviceMesh& mesh) {
  Planner planner(meta, from, mesh);
  if (!(from == to)) planner.run(to);
  return planner.take();
}

std::string to_string(const RedistStep& s, const DeviceMesh& mesh) {
  return fmt::format("{} {} {}->{} {}{} B={} sent={} t={:.3g}us", collective_name(s.collective),
                     mesh.dims[static_cast<size_t>(s.mesh_dim)].name, to_string(s.from),
                     to_string(s.to), dtype_name(s.dtype), shape_to_string(s.local_shape),
                     s.buffer_bytes, s.sent_bytes, s.time_s * 1e6);
}

std::string to_string(const RedistPlan& plan, const DeviceMesh& mesh) {
  if (plan.steps.empty()) return "no steps";
  std::string out;
  for (const RedistStep& s : plan.steps) out += (out.empty() ? "" : "; ") + to_string(s, mesh);
  return out;
}

namespace {

// splitmix64's finaliser: placement keys differ only in a few low bits, so they
// need a full mix before bucketing.
uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

size_t RedistributionCache::KeyHash::operator()(const Key& k) const {
  return static_cast<size_t>(mix(mix(k.from ^ (uint64_t{k.meta} << 40)) ^ k.to));
}

size_t RedistributionCache::BlockKeyHash::operator()(const BlockKey& k) const {
  uint64_t h = mix(k.meta);
  for (uint64_t x : k.from) h = mix(h ^ x);
  h = mix(h ^ 0xF00D);
  for (uint64_t x : k.to) h = mix(h ^ x);
  return static_cast<size_t>(h);
}

const std::vector<double>& RedistributionCache::block(MetaId meta, std::span<const Sharding> from,
                                                      std::span<const Sharding> to) {
  probe_.meta = meta;
  probe_.from.clear();
  probe_.to.clear();
  for (const Sharding& s : from) probe_.from.push_back(s.key());
  for (const Sharding& s : to) probe_.to.push_back(s.key());
  auto it = blocks_.find(probe_);
  if (it != blocks_.end()) return it->second;
  std::vector<double> times(from.size() * to.size());
  for (size_t i = 0; i < from.size(); ++i) {
    for (size_t j = 0; j < to.size(); ++j) times[i * to.size() + j] = time(meta, from[i], to[j]);
  }
  return blocks_.emplace(probe_, std::move(times)).first->second;
}

size_t RedistributionCache::MetaHash::operator()(const TensorMeta& m) const {
  uint64_t h = static_cast<uint64_t>(m.dtype);
  for (int64_t d : m.shape) h = h * 1000003u ^ static_cast<uint64_t>(d);
  return static_cast<size_t>(h);
}

RedistributionCache::MetaId RedistributionCache::intern(const TensorMeta& meta) {
  auto [it, inserted] = meta_ids_.try_emplace(meta, static_cast<MetaId>(metas_.size()));
  if (inserted) metas_.push_back(meta);
  return it->second;
}

double RedistributionCache::time(MetaId meta, const Sharding& from, const Sharding& to) {
  if (from == to) return 0.0;
  Key key{meta, from.key(), to.key()};
  auto it = times_.find(key);
  if (it != times_.end()) return it->second;
  double t = plan_redistribution(metas_[meta], from, to, mesh_).time_s;
  times_.emplace(key, t);
  return t;
}

}  // namespace autopar
