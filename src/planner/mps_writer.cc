// Free-format MPS for --dump-ilp: rows, columns (integers between markers),
// right-hand sides and bounds, readable by CBC, GLPK and most other solvers.
// The NAME line says FREE: without it CBC's reader (CoinMpsIO) takes the
// BOUNDS section by fixed columns and finds no column in "UP bnd s0_0 1".
#include <fstream>

#include <fmt/format.h>

#include "planner/ilp_model.h"

namespace autopar::planner {
namespace {

char sense(const IlpModel& m, size_t r) {
  if (m.row_lower[r] == m.row_upper[r]) return 'E';
  return m.row_lower[r] == -kInfiniteCost ? 'L' : 'G';
}

double rhs(const IlpModel& m, size_t r) {
  return sense(m, r) == 'G' ? m.row_lower[r] : m.row_upper[r];
}

}  // namespace

Status write_mps(const IlpModel& m, const std::string& path) {
  if (m.column_names.size() != m.objective.size() || m.row_names.size() != m.row_lower.size())
    return make_error("planner: write_mps needs a model built with names");
  std::vector<int> start, index;
  std::vector<double> value;
  m.to_columns(start, index, value);
  std::string out = "NAME autopar FREE\nROWS\n N obj\n";
  for (size_t r = 0; r < m.row_names.size(); ++r)
    out += fmt::format(" {} {}\n", sense(m, r), m.row_names[r]);
  out += "COLUMNS\n";
  bool in_integers = false;
  for (size_t c = 0; c < m.column_names.size(); ++c) {
    if (static_cast<bool>(m.integer[c]) != in_integers) {
      in_integers = !in_integers;
      out += fmt::format(" MARKER 'MARKER' '{}'\n", in_integers ? "INTORG" : "INTEND");
    }
    const std::string& name = m.column_names[c];
    if (m.objective[c] != 0) out += fmt::format(" {} obj {}\n", name, m.objective[c]);
    for (int k = start[c]; k < start[c + 1]; ++k)
      out += fmt::format(" {} {} {}\n", name, m.row_names[static_cast<size_t>(index[static_cast<size_t>(k)])],
                         value[static_cast<size_t>(k)]);
  }
  if (in_integers) out += " MARKER 'MARKER' 'INTEND'\n";
  out += "RHS\n";
  for (size_t r = 0; r < m.row_names.size(); ++r)
    if (rhs(m, r) != 0) out += fmt::format(" rhs {} {}\n", m.row_names[r], rhs(m, r));
  out += "BOUNDS\n";
  for (size_t c = 0; c < m.column_names.size(); ++c)
    if (m.upper[c] < kInfiniteCost) out += fmt::format(" UP bnd {} {}\n", m.column_names[c], m.upper[c]);
    else out += fmt::format(" PL bnd {}\n", m.column_names[c]);
  out += "ENDATA\n";
  std::ofstream file(path);
  file << out;
  if (!file) return make_error_of(ErrorKind::kRuntime, "planner: cannot write the ILP to '{}'", path);
  return ok_status();
}

}  // namespace autopar::planner
