// Memory rows of the reduced problem: one per time point (live activations
// plus static bytes) and one for static bytes alone when static_budget is set.
#include <algorithm>
#include <limits>
#include <memory>
#include <utility>

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
    edge_offset_.resize(r.edges.size() + 1, 0);
    for (size_t k = 0; k < r.edges.size(); ++k)
      edge_offset_[k + 1] = edge_offset_[k] + r.edges[k].class_costs.size();
    edge_acc_.assign(edge_offset_.back(), 0.0);
    edge_touched_.assign(r.edges.size(), 0);
    group_dirty_.assign(r.nodes.size(), 1);
    edge_dirty_.assign(r.edges.size(), 1);
    on_group_.assign(p.pairs.size(), -1);
    on_edge_.assign(p.pairs.size(), {-1, -1});
    for (size_t i = 0; i < r.group_held.size(); ++i)
      for (PairIdx h : r.group_held[i].pairs) on_group_[sz(h)] = static_cast<int32_t>(i);
    for (size_t k = 0; k < r.edges.size(); ++k)
      for (size_t i = 0; i < r.edges[k].held.size(); ++i)
        for (PairIdx h : r.edges[k].held[i].pairs)
          on_edge_[sz(h)] = {static_cast<int32_t>(k), static_cast<int32_t>(i)};
  }

  // A pair holding `times` times (negative: taken away), onto its group's
  // bytes or onto its edge's class pairs. With live nodes (add_times), the
  // time rows keep a running sum from point to point (LiveSums below)
  // instead of summing every live node again at each.
  void add_pair_times(PairIdx h, int times) {
    const double f = times;
    if (int32_t i = on_group_[sz(h)]; i >= 0) {
      const HeldOnGroup& held = r_.group_held[sz(i)];
      count(held.group, times);
      group_dirty_[sz(held.group)] = 1;
      double* acc = &acc_[offset_[sz(held.group)]];
      for (size_t k = 0; k < held.bytes.size(); ++k) acc[k] += f * held.bytes[k];
      return;
    }
    auto [k, i] = on_edge_[sz(h)];
    if (k < 0) return;  // a holding of strategies presolve dropped entirely cannot occur
    if (running_) {
      edge_live_[sz(k)] += times;
      edge_dirty_[sz(k)] = 1;
    } else if (!edge_touched_[sz(k)]) {
      edge_touched_[sz(k)] = 1, edge_order_.push_back(k);
    }
    const std::vector<double>& bytes = r_.edges[sz(k)].held[sz(i)].class_bytes;
    double* acc = &edge_acc_[edge_offset_[sz(k)]];
    for (size_t c = 0; c < bytes.size(); ++c) acc[c] += f * bytes[c];
  }

  void add_times(NodeIdx v, const std::vector<double>& bytes, int times) {
    if (bytes.empty()) return;
    GroupIdx g = r_.group_of[sz(v)];
    count(g, times);
    group_dirty_[sz(g)] = 1;
    const double f = times;
    const auto& alive = r_.nodes[sz(g)].alive;
    const auto& map = r_.from_root[sz(v)];
    for (size_t k = 0; k < alive.size(); ++k)
      acc_[offset_[sz(g)] + k] += f * bytes[sz(map[sz(alive[k])])];
  }

  // Running mode (time rows): groups and edges count their live
  // contributions instead of being touched once, and finishing a row leaves
  // the sums in place. Off again, every sum is zero.
  void set_running(bool on) {
    running_ = on;
    group_live_.assign(r_.nodes.size(), 0);
    edge_live_.assign(r_.edges.size(), 0);
    group_dirty_.assign(r_.nodes.size(), 1);
    edge_dirty_.assign(r_.edges.size(), 1);
    group_summary_.assign(r_.nodes.size(), {});
    edge_summary_.assign(r_.edges.size(), {});
    std::fill(acc_.begin(), acc_.end(), 0.0);
    std::fill(edge_acc_.begin(), edge_acc_.end(), 0.0);
  }

  void touch(GroupIdx g) {
    if (!touched_[sz(g)]) touched_[sz(g)] = 1, order_.push_back(g);
  }
  void count(GroupIdx g, int times) {
    if (running_) group_live_[sz(g)] += times;
    else touch(g);
  }

  void add(NodeIdx v, const std::vector<double>& bytes) { add_times(v, bytes, 1); }

  void add_static() {
    for (size_t v = 0; v < p_.nodes.size(); ++v)
      add(static_cast<NodeIdx>(v), p_.nodes[v].static_bytes);
  }

  // Moves the static bytes into their own accumulator (static_terms) so time
  // rows can count them through one shared sum.
  void capture_static(ReducedProblem& r) {
    add_static();
    static_acc_ = acc_;
    static_group_.assign(r_.nodes.size(), 0);
    for (GroupIdx g : order_) static_group_[sz(g)] = 1;
    double max_sum = 0;
    MemoryRow all = finish(-1, kNoBudget, max_sum);
    static_constant_ = all.constant;
    r.static_terms = std::move(all.terms);
  }

  // A time row over the live bytes added so far plus the captured static
  // bytes (running mode); its constant is that of the full left side (whose
  // most is running_max_sum). A group or edge whose sums did not change since
  // the last row gives the same term, shared with that row.
  MemoryRow finish_shared(TimeIdx point, double budget) {
    MemoryRow row{point, false, budget, 0.0, {}, {}, true, static_constant_};
    for (size_t g = 0; g < r_.nodes.size(); ++g) {
      if (group_live_[g] <= 0 && !static_group_[g]) continue;
      const GroupSummary& sum = group_summary(g);
      row.constant += sum.lo;
      row.ilp_constant += sum.live_lo;
      if (sum.live_hi > sum.live_lo) row.terms.push_back({static_cast<GroupIdx>(g), group_coefficients(g)});
    }
    for (size_t k = 0; k < r_.edges.size(); ++k) {
      if (edge_live_[k] <= 0) continue;
      const EdgeSummary& sum = edge_summary(k);
      row.constant += sum.lo;
      row.ilp_constant += sum.lo;
      if (sum.hi > sum.lo) row.edge_terms.push_back({static_cast<int32_t>(k), edge_coefficients(k)});
    }
    return row;
  }

  // Running mode: the most the next finish_shared row's left side can reach,
  // without building the row: a row that cannot bind is never built.
  double running_max_sum() {
    double max_sum = 0;
    for (size_t g = 0; g < r_.nodes.size(); ++g)
      if (group_live_[g] > 0 || static_group_[g]) max_sum += group_summary(g).hi;
    for (size_t k = 0; k < r_.edges.size(); ++k)
      if (edge_live_[k] > 0) max_sum += edge_summary(k).hi;
    return max_sum;
  }

  // Returns the row and the most its left side can reach.
  MemoryRow finish(TimeIdx point, double budget, double& max_sum) {
    MemoryRow row{point, false, budget, 0.0, {}, {}, false, 0.0};
    max_sum = 0;
    std::sort(order_.begin(), order_.end());
    for (GroupIdx g : order_) {
      double* acc = &acc_[offset_[sz(g)]];
      size_t n = r_.nodes[sz(g)].alive.size();
      double lo = *std::min_element(acc, acc + n), hi = *std::max_element(acc, acc + n);
      row.constant += lo;
      max_sum += hi;
      if (hi > lo) {
        std::vector<double> coef(acc, acc + n);
        for (double& c : coef) c -= lo;
        row.terms.push_back({g, std::make_shared<const std::vector<double>>(std::move(coef))});
      }
      std::fill(acc, acc + n, 0.0);
      touched_[sz(g)] = 0;
    }
    order_.clear();
    finish_edges(row, max_sum);
    row.ilp_constant = row.constant;
    return row;
  }

  // Moves the accumulated pair holdings on edges into the row (not in
  // running mode): each edge's least over its possible class pairs into the
  // constants, the rest as terms.
  void finish_edges(MemoryRow& row, double& max_sum) {
    std::sort(edge_order_.begin(), edge_order_.end());
    for (int32_t k : edge_order_) {
      const ReducedEdge& e = r_.edges[sz(k)];
      double* acc = &edge_acc_[edge_offset_[sz(k)]];
      size_t n = e.class_costs.size();
      double lo = kInfiniteCost, hi = 0;
      for (size_t c = 0; c < n; ++c)
        if (e.class_costs[c] < kInfiniteCost) lo = std::min(lo, acc[c]), hi = std::max(hi, acc[c]);
      row.constant += lo;
      row.ilp_constant += lo;
      max_sum += hi;
      if (hi > lo) row.edge_terms.push_back({k, edge_term_coefficients(sz(k), lo)});
      std::fill(acc, acc + n, 0.0);
      edge_touched_[sz(k)] = 0;
    }
    edge_order_.clear();
  }

 private:
  // Running mode: a group's least and most left-side bytes over its alive
  // strategies (with static bytes: lo, hi; live only: live_lo, live_hi) and
  // its term's coefficients, kept until its sums change.
  struct GroupSummary {
    double lo = 0, hi = 0, live_lo = 0, live_hi = 0;
    SharedCoefficients coef;  // built when a row first needs it
  };
  struct EdgeSummary {
    double lo = 0, hi = 0;
    SharedCoefficients coef;
  };

  const GroupSummary& group_summary(size_t g) {
    GroupSummary& sum = group_summary_[g];
    if (!group_dirty_[g]) return sum;
    group_dirty_[g] = 0;
    const double* acc = &acc_[offset_[g]];
    const double* st = &static_acc_[offset_[g]];
    double lo = kInfiniteCost, hi = 0, live_lo = kInfiniteCost, live_hi = 0;
    for (size_t k = 0, n = r_.nodes[g].alive.size(); k < n; ++k) {
      lo = std::min(lo, acc[k] + st[k]), hi = std::max(hi, acc[k] + st[k]);
      live_lo = std::min(live_lo, acc[k]), live_hi = std::max(live_hi, acc[k]);
    }
    sum = GroupSummary{lo, hi, live_lo, live_hi, nullptr};
    return sum;
  }
  SharedCoefficients group_coefficients(size_t g) {
    GroupSummary& sum = group_summary_[g];
    if (!sum.coef) {
      const double* acc = &acc_[offset_[g]];
      std::vector<double> coef(acc, acc + r_.nodes[g].alive.size());
      for (double& c : coef) c -= sum.live_lo;
      sum.coef = std::make_shared<const std::vector<double>>(std::move(coef));
    }
    return sum.coef;
  }
  const EdgeSummary& edge_summary(size_t k) {
    EdgeSummary& sum = edge_summary_[k];
    if (!edge_dirty_[k]) return sum;
    edge_dirty_[k] = 0;
    const ReducedEdge& e = r_.edges[k];
    const double* acc = &edge_acc_[edge_offset_[k]];
    double lo = kInfiniteCost, hi = 0;
    for (size_t c = 0; c < e.class_costs.size(); ++c)
      if (e.class_costs[c] < kInfiniteCost) lo = std::min(lo, acc[c]), hi = std::max(hi, acc[c]);
    sum = EdgeSummary{lo, hi, nullptr};
    return sum;
  }
  SharedCoefficients edge_coefficients(size_t k) {
    EdgeSummary& sum = edge_summary_[k];
    if (!sum.coef) sum.coef = edge_term_coefficients(k, sum.lo);
    return sum.coef;
  }
  // An edge's accumulated bytes less `lo` (0 on forbidden class pairs).
  SharedCoefficients edge_term_coefficients(size_t k, double lo) const {
    const ReducedEdge& e = r_.edges[k];
    const double* acc = &edge_acc_[edge_offset_[k]];
    std::vector<double> coef(acc, acc + e.class_costs.size());
    for (size_t c = 0; c < coef.size(); ++c) coef[c] = e.class_costs[c] < kInfiniteCost ? coef[c] - lo : 0.0;
    return std::make_shared<const std::vector<double>>(std::move(coef));
  }

  const Problem& p_;
  const ReducedProblem& r_;
  std::vector<size_t> offset_;
  std::vector<double> acc_;
  std::vector<char> touched_;
  std::vector<GroupIdx> order_;
  std::vector<double> static_acc_;
  double static_constant_ = 0;
  std::vector<size_t> edge_offset_;
  std::vector<double> edge_acc_;
  std::vector<char> edge_touched_;
  std::vector<int32_t> edge_order_;
  std::vector<char> static_group_;  // per group: has static bytes (capture_static)
  bool running_ = false;
  std::vector<int32_t> group_live_, edge_live_;  // running mode: live contributions
  std::vector<char> group_dirty_, edge_dirty_;    // running mode: sums changed since summarised
  std::vector<GroupSummary> group_summary_;
  std::vector<EdgeSummary> edge_summary_;
  std::vector<int32_t> on_group_;                     // pair -> index into group_held
  std::vector<std::pair<int32_t, int32_t>> on_edge_;  // pair -> (edge, held index)
};

// Most that terms a can exceed terms b by (both sorted by key(term)): each
// key chooses independently, so it is the sum of per-key maxima. Every
// coefficient vector is >= 0 with minimum 0 (the row builder subtracts it), so
// each key adds >= 0 (where b's coefficient is 0, a's is >= 0): once the sum
// passes stop_above it only grows, and the scan stops there.
template <typename Term, typename Key>
double most_excess(const std::vector<Term>& a, const std::vector<Term>& b, Key key, double stop_above) {
  static const std::vector<double> kNone;
  double excess = 0;
  for (size_t i = 0, j = 0; (i < a.size() || j < b.size()) && excess <= stop_above;) {
    int32_t ka = i < a.size() ? key(a[i]) : std::numeric_limits<int32_t>::max();
    int32_t kb = j < b.size() ? key(b[j]) : std::numeric_limits<int32_t>::max();
    const std::vector<double>& ca = ka <= kb ? a[i].coef() : kNone;
    const std::vector<double>& cb = kb <= ka ? b[j].coef() : kNone;
    if (&ca != &cb) {  // a shared term adds 0
      double most = -kInfiniteCost;
      for (size_t k = 0; k < std::max(ca.size(), cb.size()); ++k)
        most = std::max(most, (ca.empty() ? 0 : ca[k]) - (cb.empty() ? 0 : cb[k]));
      excess += most;
    }
    i += ka <= kb ? 1 : 0;
    j += kb <= ka ? 1 : 0;
  }
  return excess;
}

// Whether row a's left side is at most row b's for every assignment (b then
// binds first).
bool implied_by(const MemoryRow& a, const MemoryRow& b) {
  if (a.shared_static != b.shared_static) return false;
  double room = b.ilp_constant - a.ilp_constant;  // the terms' excess must stay within it
  double excess = most_excess(a.terms, b.terms, [](const MemoryTerm& t) { return t.group; }, room);
  if (excess > room) return false;
  excess += most_excess(a.edge_terms, b.edge_terms, [](const EdgeMemoryTerm& t) { return t.edge; },
                        room - excess);
  return excess <= room;
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
          implied_by(rows[t], rows[u]))
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

// What changes from one time point's live list to the next: calls
// apply(item, times) with +k for items k more times live than at the last
// point and -k for items k fewer (lists may repeat an item). Neighbouring
// points share most of their lists, so a running sum updated this way costs
// the change, not the whole list. Byte counts are whole numbers, so the
// running sums equal fresh ones exactly.
class LiveSums {
 public:
  explicit LiveSums(size_t items) : count_(items, 0), next_(items, 0) {}

  template <typename Item, typename Apply>
  void step(const std::vector<Item>& live, Apply apply) {
    for (Item x : live) ++next_[sz(x)];
    auto settle = [&](Item x) {  // a second visit finds nothing left to change
      const int32_t change = next_[sz(x)] - count_[sz(x)];
      if (change != 0) apply(x, change);
      count_[sz(x)] = next_[sz(x)];
    };
    for (Item x : last_) settle(x);
    for (Item x : live) settle(x);
    for (Item x : live) next_[sz(x)] = 0;
    last_.assign(live.begin(), live.end());
  }

 private:
  std::vector<int32_t> count_;  // per item, times live at the last point
  std::vector<int32_t> next_;   // scratch: times live at this point
  std::vector<int32_t> last_;
};

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
  LiveSums nodes(p.nodes.size()), pairs(p.pairs.size());
  if (peak_rows) builder.set_running(true);
  for (size_t t = 0; peak_rows && t < p.live_points.size(); ++t) {
    nodes.step(p.live_points[t], [&](NodeIdx v, int times) { builder.add_times(v, p.nodes[sz(v)].bytes, times); });
    static const std::vector<PairIdx> kNoPairs;
    pairs.step(t < p.live_pairs.size() ? p.live_pairs[t] : kNoPairs,
               [&](PairIdx h, int times) { builder.add_pair_times(h, times); });
    // A row whose worst case fits can never bind.
    if (!options.all_memory_rows && builder.running_max_sum() <= p.memory_budget) continue;
    r.memory_rows.push_back(builder.finish_shared(static_cast<TimeIdx>(t), p.memory_budget));
  }
  if (peak_rows) builder.set_running(false);
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

double memory_row_value(const ReducedProblem& r, const MemoryRow& row,
                        const std::vector<int32_t>& choice) {
  double value = row.ilp_constant;
  for (const MemoryTerm& t : row.terms) value += t.coef()[sz(choice[sz(t.group)])];
  for (const EdgeMemoryTerm& t : row.edge_terms) {
    const ReducedEdge& e = r.edges[sz(t.edge)];
    auto a = e.u_class[sz(choice[sz(e.u)])], b = e.v_class[sz(choice[sz(e.v)])];
    value += t.coef()[sz(a) * sz(e.v_classes) + sz(b)];
  }
  if (row.shared_static)
    for (const MemoryTerm& t : r.static_terms) value += t.coef()[sz(choice[sz(t.group)])];
  return value;
}

}  // namespace autopar::planner
