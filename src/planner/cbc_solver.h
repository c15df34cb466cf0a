// The CBC adapter: presolve, build the ILP of problem.h, hand it to CBC
// through its C API (which drives CbcMain like the command-line solver, ~10x
// faster than a bare branch-and-bound), and map the answer back to nodes.
#pragma once

#include <string>
#include <vector>

#include "ir/expected.h"
#include "planner/cbc_run.h"
#include "planner/ilp_model.h"
#include "planner/problem.h"
#include "planner/solver.h"

namespace autopar::planner {

// Errors only for a malformed problem; infeasibility is a SolveStatus, with
// a MemoryShortfall when the memory budget is what cannot be met. `start`, a
// feasible assignment of the whole problem (or empty), is CBC's first
// incumbent when branch and bound runs.
Expected<Solution> solve_with_cbc(const Problem& problem, const SolverOptions& options = {},
                                  const Assignment& start = {});

// solve_with_cbc for a problem that validate() (problem.h) has passed, which
// it does not check again: for callers that validated it once and then
// change only pins they build from its own strategies (the mesh-dim sweeps'
// steps; on llama3-405b 8x8x8 each validation reads 35 k edge matrices).
Expected<Solution> solve_validated_with_cbc(const Problem& problem, const SolverOptions& options = {},
                                            const Assignment& start = {});

// Writes the ILP CBC would solve: LP format when the path ends in ".lp",
// MPS otherwise. Columns and rows are named as in ilp_model.h.
Status dump_ilp(const Problem& problem, const std::string& path);

}  // namespace autopar::planner
