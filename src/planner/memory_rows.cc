// Memory rows of the reduced problem: one per time point (live activations
// plus static bytes) and one for static bytes alone when static_budget is set.
#include <algorithm>
#include <limits>

#include "planner/presolve.h"

namespace autopar::planner {
namespace {

size_t sz(int32_t i) { return static_cast<size_t>(i); }

// Sums byte vectors per group over alive strategies, then splits each sum
// into its minimum (the row constant) and the excess (the row terms).
class RowBuilder {
 public:
  RowBuilder(const Problem& p, const ReducedProblem& r) : p_(p), r_(r) {
    offset_.resize(r.nodes.size() + 1, 0);
    for (size_t g = 0; g < r.nodes.size(); ++g)
      offset_[g + 1] = offset_[g] + r.nodes[g].alive.size();
    acc_.assign(offset_.back(), 0.0);
    touched_.assign(r.nodes.size(), 0);
  }

  void add(NodeIdx v, const std::vector<double>& bytes) {
    if (bytes.empty()) return;
    GroupIdx g = r_.group_of[sz(v)];
    if (!touched_[sz(g)]) touched_[sz(g)] = 1, order_.push_back(g);
    const auto& alive = r_.nodes[sz(g)].alive;
    const auto& map = r_.from_root[sz(v)];
    for (size_t k = 0; k < alive.size(); ++k)
      acc_[offset_[sz(g)] + k] += bytes[sz(map[sz(alive[k])])];
  }

  void add_static() {
    for (size_t v = 0; v < p_.nodes.size(); ++v)
      add(static_cast<NodeIdx>(v), p_.nodes[v].static_bytes);
  }

  // Moves the static bytes into their own accumulator (static_terms) so time
  // rows can count them through one shared sum.
  void capture_static(ReducedProblem& r) {
    add_static();
    static_acc_ = acc_;
    static_groups_ = order_;
    std::sort(static_groups_.begin(), static_groups_.end());
    double max_sum = 0;
    MemoryRow all = finish(-1, kNoBudget, max_sum);
    static_constant_ = all.constant;
    r.static_terms = std::move(all.terms);
  }

  // A time row over the live bytes added so far plus the captured static
  // bytes; constant and max_sum are those of the full left side.
  MemoryRow finish_shared(TimeIdx point, double budget, double& max_sum) {
    for (GroupIdx g : static_groups_)
      if (!touched_[sz(g)]) touched_[sz(g)] = 1, order_.push_back(g);
    std::sort(order_.begin(), order_.end());
    MemoryRow row{point, false, budget, 0.0, {}, true, static_constant_};
    max_sum = 0;
    for (GroupIdx g : order_) {
      double* acc = &acc_[offset_[sz(g)]];
      const double* st = &static_acc_[offset_[sz(g)]];
      size_t n = r_.nodes[sz(g)].alive.size();
      double lo = kInfiniteCost, hi = 0, live_lo = kInfiniteCost, live_hi = 0;
      for (size_t k = 0; k < n; ++k) {
        lo = std::min(lo, acc[k] + st[k]), hi = std::max(hi, acc[k] + st[k]);
        live_lo = std::min(live_lo, acc[k]), live_hi = std::max(live_hi, acc[k]);
      }
      row.constant += lo;
      max_sum += hi;
      row.ilp_constant += live_lo;
      if (live_hi > live_lo) {
        MemoryTerm term{g, std::vector<double>(acc, acc + n)};
        for (double& c : term.coef) c -= live_lo;
        row.terms.push_back(std::move(term));
      }
      std::fill(acc, acc + n, 0.0);
      touched_[sz(g)] = 0;
    }
    order_.clear();
    return row;
  }

  // Returns the row and the most its left side can reach.
  MemoryRow finish(TimeIdx point, double budget, double& max_sum) {
    MemoryRow row{point, false, budget, 0.0, {}, false, 0.0};
    max_sum = 0;
    std::sort(order_.begin(), order_.end());
    for (GroupIdx g : order_) {
      double* acc = &acc_[offset_[sz(g)]];
      size_t n = r_.nodes[sz(g)].alive.size();
      double lo = *std::min_element(acc, acc + n), hi = *std::max_element(acc, acc + n);
      row.constant += lo;
      max_sum += hi;
      if (hi > lo) {
        MemoryTerm term{g, std::vector<double>(acc, acc + n)};
        for (double& c : term.coef) c -= lo;
        row.terms.push_back(std::move(term));
      }
      std::fill(acc, acc + n, 0.0);
      touched_[sz(g)] = 0;
    }
    row.ilp_constant = row.constant;
    order_.clear();
    return row;
  }

 private:
  const Problem& p_;
  const ReducedProblem& r_;
  std::vector<size_t> offset_;
  std::vector<double> acc_;
  std::vector<char> touched_;
  std::vector<GroupIdx> order_;
  std::vector<double> static_acc_;
  std::vector<GroupIdx> static_groups_;
  double static_constant_ = 0;
};

// Most that row a's left side can exceed row b's over every assignment:
// groups choose independently, so it is the sum of per-group maxima.
double max_excess(const MemoryRow& a, const MemoryRow& b) {
  double excess = a.ilp_constant - b.ilp_constant;
  if (a.shared_static != b.shared_static) return kInfiniteCost;
  size_t i = 0, j = 0;
  static const std::vector<double> kNone;
  while (i < a.terms.size() || j < b.terms.size()) {
    GroupIdx ga = i < a.terms.size() ? a.terms[i].group : std::numeric_limits<GroupIdx>::max();
    GroupIdx gb = j < b.terms.size() ? b.terms[j].group : std::numeric_limits<GroupIdx>::max();
    const std::vector<double>& ca = ga <= gb ? a.terms[i].coef : kNone;
    const std::vector<double>& cb = gb <= ga ? b.terms[j].coef : kNone;
    double most = -kInfiniteCost;
    for (size_t k = 0; k < std::max(ca.size(), cb.size()); ++k)
      most = std::max(most, (ca.empty() ? 0 : ca[k]) - (cb.empty() ? 0 : cb[k]));
    excess += most;
    i += ga <= gb ? 1 : 0;
    j += gb <= ga ? 1 : 0;
  }
  return excess;
}

// Drops time rows implied by a nearby kept row (whose left side is at least
// theirs for every assignment, so it binds first). Rows of neighbouring time
// points differ by a few storages, which is where implication is common.
void drop_implied_rows(std::vector<MemoryRow>& rows) {
  constexpr size_t kWindow = 24;
  std::vector<char> dropped(rows.size(), 0);
  for (size_t t = 0; t < rows.size(); ++t) {
    if (rows[t].static_budget_row) continue;
    size_t lo = t > kWindow ? t - kWindow : 0, hi = std::min(rows.size(), t + kWindow + 1);
    for (size_t u = lo; u < hi && !dropped[t]; ++u)
      if (u != t && !dropped[u] && !rows[u].static_budget_row &&
          max_excess(rows[t], rows[u]) <= 0)
        dropped[t] = 1;
  }
  size_t out = 0;
  for (size_t t = 0; t < rows.size(); ++t)
    if (!dropped[t]) {
      if (out != t) rows[out] = std::move(rows[t]);  // self-move would empty the terms
      ++out;
    }
  rows.resize(out);
}

}  // namespace

void build_memory_rows(const Problem& p, ReducedProblem& r, const PresolveOptions& options) {
  RowBuilder builder(p, r);
  auto emit = [&](TimeIdx point, double budget) {
    double max_sum = 0;
    MemoryRow row = builder.finish(point, budget, max_sum);
    // A row whose worst case fits can never bind.
    if (options.all_memory_rows || max_sum > budget) r.memory_rows.push_back(std::move(row));
  };
  bool peak_rows = options.all_memory_rows || p.memory_budget < kNoBudget;
  if (peak_rows && p.live_points.empty()) {
    builder.add_static();
    emit(-1, p.memory_budget);
  }
  if (peak_rows && !p.live_points.empty()) builder.capture_static(r);
  for (size_t t = 0; peak_rows && t < p.live_points.size(); ++t) {
    for (NodeIdx v : p.live_points[t]) builder.add(v, p.nodes[sz(v)].bytes);
    double max_sum = 0;
    MemoryRow row = builder.finish_shared(static_cast<TimeIdx>(t), p.memory_budget, max_sum);
    // A row whose worst case fits can never bind.
    if (options.all_memory_rows || max_sum > p.memory_budget)
      r.memory_rows.push_back(std::move(row));
  }
  drop_implied_rows(r.memory_rows);
  // The min-peak problem (all_memory_rows) bounds the peak rows only.
  if (p.static_budget < kNoBudget && !options.all_memory_rows) {
    builder.add_static();
    double max_sum = 0;
    MemoryRow row = builder.finish(-1, p.static_budget, max_sum);
    row.static_budget_row = true;
    if (max_sum > p.static_budget) r.memory_rows.push_back(std::move(row));
  }
}

}  // namespace autopar::planner
