// A warm start for the dual ascent (dual_bound.h) of an untied problem, from
// the ascent of the same problem with copies tied together.
//
// Layer sharing ties every repeated layer's node to its representative (a
// follow with the identity map, so the tied problem's optimum is at or above
// the untied one's). Proving the tied answer optimal for the untied problem
// needs a bound on the untied one, whose ascent from zero creeps along the
// chain of layers (llama3-8b b32 s8192 on 8x8: 500 sweeps, 7.7 s, still
// 3.7e-4 below the optimum; 8000 sweeps, 88 s, 1.3e-5 below). The tied
// problem's multipliers nearly close its own gap in milliseconds, and they
// carry over: a tied edge stands for n untied copies of one edge, each of
// which takes 1/n of its multipliers. Copies that see the same edges then
// give the tied bound back exactly (tied_multipliers_test.cc). Two things
// lose, and the untied ascent's sweeps win them back:
// - presolve sums parallel edges between two groups, so the edge inside a
//   layer from node a to node b and the edge from b of one layer to a of the
//   next become one tied edge of 2L - 1 copies with two different matrices;
// - the copies at the chain's ends see other edges (the first layer's input
//   comes from the embedding).
// On llama3-8b 8x8 the spread starts the untied ascent at 0.1334 against the
// tied 0.2158; 100 sweeps reach 0.215822, 2.8e-5 below the optimum, which
// zero multipliers reach only after thousands. Keeping the two edge families
// apart (tried: edges keyed also by their layer distance) made the start
// better (0.1495 with no sweep) but the end worse (0.21575 after 100 sweeps):
// the copies next to the chain's ends then take unequal shares.
// Any multipliers give a valid bound (dual_bound.h): the spread is a
// question of speed only.
#pragma once

#include "planner/dual_bound.h"
#include "planner/presolve.h"

namespace autopar::planner {

// `tied` and `untied` are presolved from problems over the same nodes with
// the same strategies (the tied one adding identity follows); `tied_l` are
// multipliers of `tied`. Untied edges whose ends fall into one tied group, or
// whose classes have no alive strategy in the tied group, start at zero.
EdgeMultipliers spread_tied_multipliers(const ReducedProblem& tied, const EdgeMultipliers& tied_l,
                                        const ReducedProblem& untied);

}  // namespace autopar::planner
