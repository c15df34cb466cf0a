#include "planner/dual_bound.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace autopar::planner {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

size_t sz(int32_t i) { return static_cast<size_t>(i); }

// The multipliers and the node potentials they make.
class Ascent {
 public:
  explicit Ascent(const ReducedProblem& r) : r_(r), lu_(r.edges.size()), lv_(r.edges.size()) {
    for (size_t k = 0; k < r.edges.size(); ++k) {
      lu_[k].assign(sz(r.edges[k].u_classes), 0.0);
      lv_[k].assign(sz(r.edges[k].v_classes), 0.0);
    }
    recompute_potentials();
  }

  void recompute_potentials() {
    phi_.clear();
    for (const ReducedNode& n : r_.nodes) phi_.push_back(n.costs);
    for (size_t k = 0; k < r_.edges.size(); ++k) {
      const ReducedEdge& e = r_.edges[k];
      add_to(phi_[sz(e.u)], e.u_class, lu_[k], 1);
      add_to(phi_[sz(e.v)], e.v_class, lv_[k], 1);
    }
  }

  // The MPLP update of edge k (dual_bound.h).
  void update(size_t k) {
    const ReducedEdge& e = r_.edges[k];
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
        const double c = e.class_costs[a * B + b];
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
    double d = r_.constant_cost;
    // A single-strategy group's cost is in constant_cost already (presolve.h).
    for (const std::vector<double>& p : phi_)
      if (p.size() > 1) d += *std::min_element(p.begin(), p.end());
    for (size_t k = 0; k < r_.edges.size(); ++k) {
      const ReducedEdge& e = r_.edges[k];
      const size_t B = sz(e.v_classes);
      double m = kInf;
      for (size_t a = 0; a < lu_[k].size(); ++a)
        for (size_t b = 0; b < B; ++b) m = std::min(m, e.class_costs[a * B + b] - lu_[k][a] - lv_[k][b]);
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

 private:
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
  std::vector<std::vector<double>> lu_, lv_;
  std::vector<std::vector<double>> phi_;
  std::vector<double> mu_, mv_;
};

}  // namespace

DualBound pairwise_dual_bound(const ReducedProblem& r, int32_t max_sweeps, double relative_tolerance) {
  Ascent ascent(r);
  DualBound out;
  // D never falls, so the last multipliers' bound is the best one, and
  // slack() reads the potentials bound() recomputed for them.
  out.bound = ascent.bound();
  const size_t n = r.edges.size();
  out.converged = n == 0;
  while (!out.converged && out.sweeps < max_sweeps) {
    for (size_t k = 0; k < n; ++k) ascent.update(k);
    for (size_t k = n; k-- > 0;) ascent.update(k);
    ++out.sweeps;
    const double last = out.bound;
    out.bound = ascent.bound();
    out.converged = out.bound - last <= relative_tolerance * std::max(1.0, std::abs(out.bound));
  }
  out.slack = ascent.slack();
  return out;
}

}  // namespace autopar::planner
