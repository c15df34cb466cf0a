// Random ops. bernoulli.p(self, p) draws 1 with probability p per element of
// self's shape (self's values are never read); dropout traces to it. Kernels
// draw from a counter-based generator indexed by the element's place in the
// full tensor (runtime/counter_rng.h), so a sharded run draws what the single
// process draws.
#include "ir/ops/rules.h"

namespace autopar::rules {

// Philox4x32-10 per element: 10 rounds of two 32-bit multiplies and xors, and
// a compare: about 40 operations.
double random_flops(const OpCall&, Metas outputs) { return 40.0 * out_numel(outputs); }

// Writes the output; reads nothing (the input gives only the shape).
double random_bytes(const OpCall&, Metas outputs) { return out_bytes(outputs); }

}  // namespace autopar::rules
