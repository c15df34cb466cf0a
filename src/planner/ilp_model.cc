#include "planner/ilp_model.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace autopar::planner {
namespace {

size_t sz(int32_t i) { return static_cast<size_t>(i); }

class Builder {
 public:
  Builder(IlpModel& m, bool names) : m_(m), names_(names) {}

  int add_column(double obj, double upper, bool integer, std::string_view tag, int a = -1,
                 int b = -1, int c = -1) {
    m_.objective.push_back(obj);
    m_.upper.push_back(upper);
    m_.integer.push_back(integer ? 1 : 0);
    if (names_) m_.column_names.push_back(name(tag, a, b, c));
    return m_.columns() - 1;
  }

  void add_entry(int column, double value) {
    if (value == 0) return;
    m_.row_index.push_back(column);
    m_.row_value.push_back(value);
  }

  void end_row(double lower, double upper, std::string_view tag, int a = -1, int b = -1) {
    m_.row_lower.push_back(lower);
    m_.row_upper.push_back(upper);
    m_.row_start.push_back(static_cast<int>(m_.row_index.size()));
    if (names_) m_.row_names.push_back(name(tag, a, b, -1));
  }

 private:
  static std::string name(std::string_view tag, int a, int b, int c) {
    std::string out(tag);
    for (int part : {a, b, c})
      if (part >= 0) out += fmt::format("{}{}", out.size() == tag.size() ? "" : "_", part);
    return out;
  }
  IlpModel& m_;
  bool names_;
};

double objective_scale(const ReducedProblem& r) {
  double largest = 0;
  for (const ReducedNode& n : r.nodes)
    if (n.alive.size() > 1)
      for (double c : n.costs) largest = std::max(largest, std::abs(c));
  for (const ReducedEdge& e : r.edges)
    for (double c : e.class_costs)
      if (c < kInfiniteCost) largest = std::max(largest, std::abs(c));
  // Costs are seconds (often 1e-6); scale so CBC's absolute tolerances are small.
  return largest > 0 ? 1e3 / largest : 1.0;
}

// Terms with coefficient vectors (MemoryTerm, EdgeMemoryTerm): the sum of maxima.
template <typename Term>
double max_coef_sum(const std::vector<Term>& terms) {
  double sum = 0;
  for (const Term& t : terms) sum += *std::max_element(t.coef().begin(), t.coef().end());
  return sum;
}

double memory_scale(const ReducedProblem& r) {
  double largest = 0, static_max = max_coef_sum(r.static_terms);
  for (const MemoryRow& row : r.memory_rows) {
    double sum = row.ilp_constant + max_coef_sum(row.terms) + max_coef_sum(row.edge_terms) +
                 (row.shared_static ? static_max : 0);
    largest = std::max(largest, sum);
  }
  return largest > 0 ? 1.0 / largest : 1.0;
}

// Pair variables over class pairs (presolve.h): with classes A of u and B of
// v, sum_b e_ab = sum_{i in a} s_ui and sum_a e_ab = sum_{j in b} s_vj. Any
// fractional (s, e) of the unaggregated ILP sums to a feasible (s, e) here
// with equal cost, and e_ab * (s_ui / S_a) * (s_vj / T_b) maps back, so the
// LP relaxation and the integer optimum are unchanged. Returns each edge's
// column per class pair (-1: a forbidden pair, no column).
std::vector<std::vector<int>> add_edges(const ReducedProblem& r, IlpModel& m, Builder& b, bool cost) {
  std::vector<std::vector<int>> columns(r.edges.size());
  for (size_t k = 0; k < r.edges.size(); ++k) {
    const ReducedEdge& e = r.edges[k];
    size_t na = sz(e.u_classes), nb = sz(e.v_classes);
    std::vector<int>& col = columns[k];
    col.assign(na * nb, -1);
    int ki = static_cast<int>(k);
    for (size_t i = 0; i < na; ++i)
      for (size_t j = 0; j < nb; ++j)
        if (double c = e.class_costs[i * nb + j]; c < kInfiniteCost)
          col[i * nb + j] = b.add_column(cost ? c * m.objective_scale : 0.0, 1.0,
                                         /*integer=*/false, "e", ki, static_cast<int>(i),
                                         static_cast<int>(j));
    for (size_t i = 0; i < na; ++i) {  // sum_j e_ij = sum_{k in i} s_uk
      for (size_t j = 0; j < nb; ++j)
        if (col[i * nb + j] >= 0) b.add_entry(col[i * nb + j], 1.0);
      for (size_t s = 0; s < e.u_class.size(); ++s)
        if (sz(e.u_class[s]) == i) b.add_entry(m.first_column[sz(e.u)] + static_cast<int>(s), -1.0);
      b.end_row(0, 0, "u", ki, static_cast<int>(i));
    }
    for (size_t j = 0; j < nb; ++j) {  // sum_i e_ij = sum_{l in j} s_vl
      for (size_t i = 0; i < na; ++i)
        if (col[i * nb + j] >= 0) b.add_entry(col[i * nb + j], 1.0);
      for (size_t s = 0; s < e.v_class.size(); ++s)
        if (sz(e.v_class[s]) == j) b.add_entry(m.first_column[sz(e.v)] + static_cast<int>(s), -1.0);
      b.end_row(0, 0, "v", ki, static_cast<int>(j));
    }
  }
  return columns;
}

void add_terms(const std::vector<MemoryTerm>& terms, const IlpModel& m, Builder& b) {
  for (const MemoryTerm& t : terms)
    for (size_t k = 0; k < t.coef().size(); ++k)
      b.add_entry(m.first_column[sz(t.group)] + static_cast<int>(k), t.coef()[k] * m.memory_scale);
}

// Rows with shared_static count the static bytes through one column S defined
// by S = sum of static_terms (scaled like the rows): one copy of every
// parameter's coefficients instead of one per time point.
void add_memory_rows(const ReducedProblem& r, IlpModel& m, Builder& b, bool peak,
                     const std::vector<std::vector<int>>& edge_columns) {
  double scale = m.memory_scale;
  int shared = -1;
  bool any_shared = std::any_of(r.memory_rows.begin(), r.memory_rows.end(),
                                [](const MemoryRow& row) { return row.shared_static; });
  if (any_shared && !r.static_terms.empty()) {
    // S is at most the sum of the largest coefficients: a finite upper bound
    // (1 at most, as the scale makes it) keeps reduced-cost fixing's slack
    // finite when Clp leaves S a reduced cost of rounding size.
    double most = max_coef_sum(r.static_terms) * scale;
    shared = b.add_column(0.0, most * (1 + 1e-9) + 1e-12, /*integer=*/false, "S");
    m.static_sum_column = shared;
    add_terms(r.static_terms, m, b);
    b.add_entry(shared, -1.0);
    b.end_row(0, 0, "static_sum");
  }
  for (const MemoryRow& row : r.memory_rows) {
    add_terms(row.terms, m, b);
    for (const EdgeMemoryTerm& t : row.edge_terms) {
      const std::vector<int>& col = edge_columns[sz(t.edge)];
      for (size_t c = 0; c < t.coef().size(); ++c)
        if (col[c] >= 0) b.add_entry(col[c], t.coef()[c] * scale);
    }
    if (row.shared_static && shared >= 0) b.add_entry(shared, 1.0);
    if (peak) b.add_entry(m.peak_column, -1.0);
    double rhs = peak ? -row.ilp_constant * scale : (row.budget - row.ilp_constant) * scale;
    if (row.point >= 0) b.end_row(-kInfiniteCost, rhs, "mem", row.point);
    else b.end_row(-kInfiniteCost, rhs, "mem_static");
  }
}

}  // namespace

int32_t cost_ilp_columns(const ReducedProblem& r) {
  int64_t columns = 0;
  for (const ReducedNode& n : r.nodes)
    if (n.alive.size() > 1) columns += static_cast<int64_t>(n.alive.size());
  for (const ReducedEdge& e : r.edges)
    for (double c : e.class_costs) columns += c < kInfiniteCost ? 1 : 0;
  bool any_shared = std::any_of(r.memory_rows.begin(), r.memory_rows.end(),
                                [](const MemoryRow& row) { return row.shared_static; });
  if (any_shared && !r.static_terms.empty()) ++columns;  // S
  return static_cast<int32_t>(columns);
}

int IlpModel::integers() const {
  return static_cast<int>(std::count(integer.begin(), integer.end(), 1));
}

IlpModel build_ilp(const ReducedProblem& r, IlpObjective objective, bool with_names) {
  IlpModel m;
  Builder b(m, with_names);
  bool cost = objective == IlpObjective::kCost;
  m.objective_scale = objective_scale(r);
  m.memory_scale = memory_scale(r);
  m.first_column.assign(r.nodes.size(), -1);
  for (size_t g = 0; g < r.nodes.size(); ++g) {
    const ReducedNode& n = r.nodes[g];
    if (n.alive.size() < 2) continue;
    int gi = static_cast<int>(g);
    for (size_t k = 0; k < n.alive.size(); ++k) {
      int c = b.add_column(cost ? n.costs[k] * m.objective_scale : 0.0, 1.0,
                           /*integer=*/true, "s", gi, static_cast<int>(k));
      if (k == 0) m.first_column[g] = c;
      b.add_entry(c, 1.0);
    }
    b.end_row(1, 1, "one", gi);  // sum_k s_gk = 1
  }
  if (!cost) m.peak_column = b.add_column(1.0, kInfiniteCost, /*integer=*/false, "M");
  m.edge_columns = add_edges(r, m, b, cost);
  add_memory_rows(r, m, b, !cost, m.edge_columns);
  return m;
}

void IlpModel::to_columns(std::vector<int>& start, std::vector<int>& index,
                          std::vector<double>& value) const {
  start.assign(sz(columns()) + 1, 0);
  for (int c : row_index) ++start[sz(c) + 1];
  for (size_t c = 0; c < sz(columns()); ++c) start[c + 1] += start[c];
  std::vector<int> fill(start.begin(), start.end() - 1);
  index.resize(row_index.size());
  value.resize(row_index.size());
  for (int r = 0; r < rows(); ++r)
    for (int p = row_start[sz(r)]; p < row_start[sz(r) + 1]; ++p) {
      int at = fill[sz(row_index[sz(p)])]++;
      index[sz(at)] = r;
      value[sz(at)] = row_value[sz(p)];
    }
}

std::vector<int32_t> decode_choice(const ReducedProblem& r, const IlpModel& m,
                                   const double* columns) {
  std::vector<int32_t> choice(r.nodes.size(), 0);
  for (size_t g = 0; g < r.nodes.size(); ++g) {
    if (m.first_column[g] < 0) continue;
    const double* s = columns + m.first_column[g];
    choice[g] = static_cast<int32_t>(std::max_element(s, s + r.nodes[g].alive.size()) - s);
  }
  return choice;
}

}  // namespace autopar::planner
