#include "planner/dual_bound.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "planner/local_search.h"

namespace autopar::planner {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

size_t sz(int32_t i) { return static_cast<size_t>(i); }

// Costs of the same shape as a reduced problem's, and a constant added to
// them: its own costs with each memory row's bytes priced in.
struct PenalizedCosts {
  std::vector<std::vector<double>> nodes;  // per group, per alive strategy
  std::vector<std::vector<double>> edges;  // per edge, class pairs (ReducedEdge::class_costs)
  double constant = 0;
};

// The multipliers and the node potentials they make.
class Ascent {
 public:
  explicit Ascent(const ReducedProblem& r) : r_(r), lu_(r.edges.size()), lv_(r.edges.size()) {
    for (size_t k = 0; k < r.edges.size(); ++k) {
      lu_[k].assign(sz(r.edges[k].u_classes), 0.0);
      lv_[k].assign(sz(r.edges[k].v_classes), 0.0);
    }
    set_costs(nullptr);
  }

  // The costs the ascent works on: the problem's own (nullptr), or others of
  // the same shape (the penalized costs of memory_dual_bound). The
  // multipliers stay: they bound any costs.
  void set_costs(const PenalizedCosts* costs) {
    costs_ = costs;
    recompute_potentials();
  }

  void recompute_potentials() {
    phi_.clear();
    for (size_t g = 0; g < r_.nodes.size(); ++g) phi_.push_back(node_costs(g));
    for (size_t k = 0; k < r_.edges.size(); ++k) {
      const ReducedEdge& e = r_.edges[k];
      add_to(phi_[sz(e.u)], e.u_class, lu_[k], 1);
      add_to(phi_[sz(e.v)], e.v_class, lv_[k], 1);
    }
  }

  // The MPLP update of edge k (dual_bound.h).
  void update(size_t k) {
    const ReducedEdge& e = r_.edges[k];
    const std::vector<double>& class_costs = edge_costs(k);
    std::vector<double>& pu = phi_[sz(e.u)];
    std::vector<double>& pv = phi_[sz(e.v)];
    add_to(pu, e.u_class, lu_[k], -1);
    add_to(pv, e.v_class, lv_[k], -1);
    class_minima(pu, e.u_class, e.u_classes, mu_);
    class_minima(pv, e.v_class, e.v_classes, mv_);
    const size_t A = sz(e.u_classes), B = sz(e.v_classes);
    std::vector<double>& lu = lu_[k];
    std::vector<double>& lv = lv_[k];
    std::fill(lv.begin(), lv.end(), kInf);  // lv holds min_a C(a,b) + mu(a) first
    for (size_t a = 0; a < A; ++a) {
      double row_min = kInf;
      for (size_t b = 0; b < B; ++b) {
        const double c = class_costs[a * B + b];
        row_min = std::min(row_min, c + mv_[b]);
        lv[b] = std::min(lv[b], c + mu_[a]);
      }
      lu[a] = 0.5 * (row_min - mu_[a]);
    }
    for (size_t b = 0; b < B; ++b) lv[b] = 0.5 * (lv[b] - mv_[b]);
    add_to(pu, e.u_class, lu, 1);
    add_to(pv, e.v_class, lv, 1);
  }

  // D(l) from potentials recomputed from the multipliers (no drift).
  double bound() {
    recompute_potentials();
    double d = r_.constant_cost + (costs_ ? costs_->constant : 0.0);
    // A single-strategy group's cost is in constant_cost already (presolve.h).
    for (const std::vector<double>& p : phi_)
      if (p.size() > 1) d += *std::min_element(p.begin(), p.end());
    for (size_t k = 0; k < r_.edges.size(); ++k) {
      const std::vector<double>& class_costs = edge_costs(k);
      const size_t B = sz(r_.edges[k].v_classes);
      double m = kInf;
      for (size_t a = 0; a < lu_[k].size(); ++a)
        for (size_t b = 0; b < B; ++b) m = std::min(m, class_costs[a * B + b] - lu_[k][a] - lv_[k][b]);
      d += m;
    }
    return d;
  }

  // phi_g(i) - min phi_g of the potentials bound() last recomputed.
  std::vector<std::vector<double>> slack() const {
    std::vector<std::vector<double>> out = phi_;
    for (std::vector<double>& p : out) {
      const double m = *std::min_element(p.begin(), p.end());
      for (double& x : p) x -= m;
    }
    return out;
  }

  // psi_e(ab) - min psi_e per edge, class pairs row-major.
  std::vector<std::vector<double>> edge_slack() const {
    std::vector<std::vector<double>> out(r_.edges.size());
    for (size_t k = 0; k < r_.edges.size(); ++k) {
      const std::vector<double>& class_costs = edge_costs(k);
      const size_t B = sz(r_.edges[k].v_classes);
      std::vector<double>& psi = out[k];
      psi.resize(class_costs.size());
      for (size_t a = 0; a < lu_[k].size(); ++a)
        for (size_t b = 0; b < B; ++b) psi[a * B + b] = class_costs[a * B + b] - lu_[k][a] - lv_[k][b];
      const double m = *std::min_element(psi.begin(), psi.end());
      for (double& x : psi) x -= m;
    }
    return out;
  }

  using Multipliers = std::pair<std::vector<std::vector<double>>, std::vector<std::vector<double>>>;
  Multipliers multipliers() const { return {lu_, lv_}; }
  void restore(Multipliers m) {
    lu_ = std::move(m.first);
    lv_ = std::move(m.second);
    recompute_potentials();
  }

  // Per group, the strategy of least potential (ties: the first).
  std::vector<int32_t> least_potential_choice() const {
    std::vector<int32_t> choice;
    for (const std::vector<double>& p : phi_)
      choice.push_back(static_cast<int32_t>(std::min_element(p.begin(), p.end()) - p.begin()));
    return choice;
  }

 private:
  const std::vector<double>& node_costs(size_t g) const {
    return costs_ ? costs_->nodes[g] : r_.nodes[g].costs;
  }
  const std::vector<double>& edge_costs(size_t k) const {
    return costs_ ? costs_->edges[k] : r_.edges[k].class_costs;
  }

  static void add_to(std::vector<double>& phi, const std::vector<int32_t>& cls, const std::vector<double>& l,
                     double sign) {
    for (size_t i = 0; i < phi.size(); ++i) phi[i] += sign * l[sz(cls[i])];
  }
  static void class_minima(const std::vector<double>& phi, const std::vector<int32_t>& cls, int32_t classes,
                           std::vector<double>& out) {
    out.assign(sz(classes), kInf);
    for (size_t i = 0; i < phi.size(); ++i) out[sz(cls[i])] = std::min(out[sz(cls[i])], phi[i]);
  }

  const ReducedProblem& r_;
  const PenalizedCosts* costs_ = nullptr;
  std::vector<std::vector<double>> lu_, lv_;
  std::vector<std::vector<double>> phi_;
  std::vector<double> mu_, mv_;
};

// Sweeps (forward, then backward over the edges) until one raises D by at
// most relative_tolerance * |D| or `max_sweeps` more have run; out.bound is
// D at the multipliers reached (D never falls under a sweep).
void ascend(Ascent& ascent, size_t edges, int32_t max_sweeps, double relative_tolerance, DualBound& out) {
  out.bound = ascent.bound();
  out.converged = edges == 0;
  for (int32_t done = 0; !out.converged && done < max_sweeps; ++done) {
    for (size_t k = 0; k < edges; ++k) ascent.update(k);
    for (size_t k = edges; k-- > 0;) ascent.update(k);
    ++out.sweeps;
    const double last = out.bound;
    out.bound = ascent.bound();
    out.converged = out.bound - last <= relative_tolerance * std::max(1.0, std::abs(out.bound));
  }
}

// The problem's costs with row t's bytes priced at mu[t] seconds a byte, and
// the constant sum_t mu[t] (bytes no choice avoids - budget).
void price_rows(const ReducedProblem& r, const std::vector<double>& mu, PenalizedCosts& out) {
  out.nodes.resize(r.nodes.size());
  for (size_t g = 0; g < r.nodes.size(); ++g) out.nodes[g] = r.nodes[g].costs;
  out.edges.resize(r.edges.size());
  for (size_t k = 0; k < r.edges.size(); ++k) out.edges[k] = r.edges[k].class_costs;
  out.constant = 0;
  double static_price = 0;
  for (size_t t = 0; t < r.memory_rows.size(); ++t) {
    if (mu[t] <= 0) continue;
    const MemoryRow& row = r.memory_rows[t];
    out.constant += mu[t] * (row.ilp_constant - row.budget);
    for (const MemoryTerm& term : row.terms)
      for (size_t i = 0; i < term.coef().size(); ++i) out.nodes[sz(term.group)][i] += mu[t] * term.coef()[i];
    for (const EdgeMemoryTerm& term : row.edge_terms)
      for (size_t ab = 0; ab < term.coef().size(); ++ab) out.edges[sz(term.edge)][ab] += mu[t] * term.coef()[ab];
    if (row.shared_static) static_price += mu[t];
  }
  if (static_price > 0)
    for (const MemoryTerm& term : r.static_terms)
      for (size_t i = 0; i < term.coef().size(); ++i) out.nodes[sz(term.group)][i] += static_price * term.coef()[i];
}

// Keeps the ascent's least-potential choice in out.fitting_choice when it
// fits and is cheaper than the one kept.
void offer_choice(const ReducedProblem& r, const Ascent& ascent, DualBound& out, double& kept_cost) {
  std::vector<int32_t> choice = ascent.least_potential_choice();
  const double cost = choice_cost(r, choice);
  if (!(cost < kept_cost) || !memory_rows_hold(r, choice)) return;
  kept_cost = cost;
  out.fitting_choice = std::move(choice);
}

}  // namespace

DualBound pairwise_dual_bound(const ReducedProblem& r, int32_t max_sweeps, double relative_tolerance,
                              const EdgeMultipliers* start) {
  Ascent ascent(r);
  if (start != nullptr) ascent.restore({start->u, start->v});
  DualBound out;
  // slack() reads the potentials bound() recomputed last.
  ascend(ascent, r.edges.size(), max_sweeps, relative_tolerance, out);
  out.slack = ascent.slack();
  out.edge_slack = ascent.edge_slack();
  double kept_cost = kInf;
  offer_choice(r, ascent, out, kept_cost);
  auto [u, v] = ascent.multipliers();
  out.multipliers = {std::move(u), std::move(v)};
  return out;
}

DualBound memory_dual_bound(const ReducedProblem& r, double target, const MemoryDualOptions& o) {
  Ascent ascent(r);
  DualBound out;
  ascend(ascent, r.edges.size(), o.first_sweeps, o.relative_tolerance, out);
  double kept_cost = kInf;
  offer_choice(r, ascent, out, kept_cost);
  const size_t rows = r.memory_rows.size();
  std::vector<double> mu(rows, 0.0), best_mu = mu;
  Ascent::Multipliers best_l = ascent.multipliers();
  double best = out.bound, current = out.bound, theta = 1.0;
  int32_t since_best = 0;
  PenalizedCosts priced;
  for (; out.memory_rounds < o.rounds; ++out.memory_rounds) {
    // A subgradient of the Lagrangian at mu: the rows' excess at the
    // choice of least potential (projected: a row at mu 0 with room left
    // cannot move).
    const std::vector<int32_t> choice = ascent.least_potential_choice();
    std::vector<double> excess(rows, 0.0);
    double norm2 = 0;
    for (size_t t = 0; t < rows; ++t) {
      const MemoryRow& row = r.memory_rows[t];
      excess[t] = memory_row_value(r, row, choice) - row.budget;
      if (mu[t] <= 0 && excess[t] < 0) excess[t] = 0;
      norm2 += excess[t] * excess[t];
    }
    // Polyak's step toward the target (an incumbent's cost, else 1% above).
    const double aim = target < kInf ? target : best + 0.01 * std::max(std::abs(best), 1e-12);
    if (norm2 <= 0 || aim <= current) break;
    const double step = theta * (aim - current) / norm2;
    for (size_t t = 0; t < rows; ++t) mu[t] = std::max(0.0, mu[t] + step * excess[t]);
    price_rows(r, mu, priced);
    ascent.set_costs(&priced);
    DualBound round;
    ascend(ascent, r.edges.size(), o.sweeps_per_round, o.relative_tolerance, round);
    out.sweeps += round.sweeps;
    current = round.bound;
    offer_choice(r, ascent, out, kept_cost);
    if (current > best) {
      best = current, best_mu = mu, best_l = ascent.multipliers(), since_best = 0;
    } else if (++since_best >= o.patience) {
      theta *= 0.5, since_best = 0;
      if (theta < o.least_step) break;
    }
  }
  // The best prices and multipliers found, their bound recomputed from
  // scratch (valid for any prices >= 0 and multipliers), and their slack.
  price_rows(r, best_mu, priced);
  ascent.set_costs(&priced);
  ascent.restore(std::move(best_l));
  out.bound = ascent.bound();
  out.slack = ascent.slack();
  out.edge_slack = ascent.edge_slack();
  return out;
}

}  // namespace autopar::planner
