// The ILP of problem.h as plain sparse arrays, built from a presolved problem;
// the CBC adapter loads these and nothing else, so another solver could too.
//
// Columns: s_{g,k} (binary) for every reduced node with two or more
// strategies, then e_{k,ab} for every finite class pair of every reduced edge. The
// e columns are continuous in [0,1]: once both ends' s are integral the two
// marginal rows leave exactly one e non-zero, equal to 1, so integrality of e
// is implied and the branch-and-bound only branches on s.
#pragma once

#include <string>
#include <vector>

#include "ir/expected.h"
#include "planner/presolve.h"

namespace autopar::planner {

enum class IlpObjective {
  kCost,        // minimise cost subject to the memory rows' budgets
  kPeakMemory,  // minimise M >= every memory row (budgets ignored)
};

struct IlpModel {
  // Columns.
  std::vector<double> objective;
  std::vector<double> upper;  // lower bounds are all 0
  std::vector<char> integer;
  // Rows, compressed by row: row r is entries [row_start[r], row_start[r+1]).
  std::vector<double> row_lower, row_upper;
  std::vector<int> row_start{0};
  std::vector<int> row_index;
  std::vector<double> row_value;
  // Decoding: first s column of each reduced node (-1 with a single strategy).
  std::vector<int> first_column;
  // Each reduced edge's column per class pair, row-major (-1: forbidden pair).
  std::vector<std::vector<int>> edge_columns;
  int peak_column = -1;         // the M column with kPeakMemory
  // The S column (sum of the static terms, the last column) and its defining
  // row (just before the memory rows, the last rows); -1 without one.
  int static_sum_column = -1;
  double objective_scale = 1;   // ILP objective = scale * (cost - constant)
  double memory_scale = 1;      // memory rows are in bytes * memory_scale

  int columns() const { return static_cast<int>(objective.size()); }
  int rows() const { return static_cast<int>(row_lower.size()); }
  int integers() const;

  // Filled only when asked for (dumps): s<g>_<k>, e<edge>_<a>_<b>, M, S (shared
  // static bytes); one<g>, u<edge>_<a>, v<edge>_<b>, static_sum, mem<t> / mem_static.
  std::vector<std::string> column_names, row_names;

  // Compressed by column, for loaders that want it.
  void to_columns(std::vector<int>& start, std::vector<int>& index,
                  std::vector<double>& value) const;
};

IlpModel build_ilp(const ReducedProblem& reduced, IlpObjective objective,
                   bool with_names = false);

// build_ilp(reduced, IlpObjective::kCost).columns(), without building it.
int32_t cost_ilp_columns(const ReducedProblem& reduced);

// Free-format MPS of a model built with names (CBC's own writer gzips).
Status write_mps(const IlpModel& model, const std::string& path);

// Reads the reduced choice (index into alive) of every reduced node from a
// column solution.
std::vector<int32_t> decode_choice(const ReducedProblem& reduced, const IlpModel& model,
                                   const double* columns);

}  // namespace autopar::planner
