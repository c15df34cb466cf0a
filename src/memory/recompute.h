// Recomputation (activation checkpointing): which forward activations may be
// dropped after the forward and computed again before the backward reads them.
//
// Positions are execution positions (node ids). The loss node L splits the
// step: nodes before it are the forward. A storage root v (liveness.h) that a
// forward node allocates may be recomputed when its storage is read both in
// the forward and after L. Its window: the storage is dropped after the last
// forward read of it (or of any view of it), `drop_after`, and v is run again
// right before the first read after L, `restore_at`, together with the views
// of v that the forward made and later nodes still read (`rerun`, in graph
// order, v first). Over the positions strictly between the two, v's storage
// is not held.
//
// One level only: every value a re-run reads (other than the re-run nodes
// themselves) must be a placeholder or be read at or after restore_at in the
// step without recomputation (a value is let go after its last reader), so a
// recomputation never extends another value's life.
// When such a value (or the storage it views) belongs to a candidate
// restored later than v, the two cannot both be recomputed: the pair is
// listed in `exclusive` (the planner forbids choosing both). Graph outputs,
// multi-output nodes and their getitems are never candidates.
//
// With recomputation chosen, the step holds v's storage (and the storage of a
// re-run view of a redistributed copy) over [start, drop_after] and
// [restore_at, end] (step_memory.h), and the re-runs cost their compute and
// their operands' redistributions once more.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace autopar {

// What the planner may do about recomputation (autopar plan --recompute).
enum class RecomputeMode : uint8_t { kNone, kAuto, kFull };
std::string_view recompute_mode_name(RecomputeMode mode);  // "none", "auto", "full"
bool parse_recompute_mode(std::string_view name, RecomputeMode& mode);

struct RecomputeWindow {
  int32_t drop_after = -1;  // last position the storage is held before it is dropped
  int32_t restore_at = -1;  // position whose node first reads the re-run value
  bool valid() const { return restore_at >= 0; }
};

struct RecomputeCandidates {
  std::vector<RecomputeWindow> window;      // per node; invalid unless a candidate root
  std::vector<std::vector<NodeId>> rerun;   // per candidate root: it, then its re-run views
  // Whole-layer candidates only (find_layer_recompute): per node, its layer's
  // index in `layers` (-1: none), and the layers' scopes ("layers.3").
  std::vector<int32_t> layer;
  std::vector<std::string> layers;
  // Pairs (operand's candidate, reader) that cannot both be recomputed (see
  // above), sorted.
  std::vector<std::pair<NodeId, NodeId>> exclusive;
  int32_t count = 0;

  bool is_candidate(NodeId v) const { return window[static_cast<size_t>(v)].valid(); }
};

RecomputeCandidates find_recompute_candidates(const Graph& graph);

// Whole-layer recomputation (--recompute full; torchtitan's full activation
// checkpointing). A layer is the forward nodes whose module scope shares the
// prefix up to its first integer component ("layers.3.attention" and
// "layers.3.ffn_norm" are layer "layers.3"; "h.0.mlp" is "h.0"). Its outputs
// (read by forward nodes outside it, or graph outputs) are kept, and so is
// every node of a storage (its views, a multi-output node's getitems) one of
// which is kept. The rest that the backward needs, with the layer's nodes
// that produce them, is re-run together, in graph order, right before the
// first node after the loss that reads any of it (the layer's restore_at),
// so chains re-run inside a layer. Each re-run node is its own candidate
// (rerun = {it}) with window {its storage's last forward read, restore_at}: a
// node the backward does not read is held at restore_at only. A node whose
// re-run would read a value already freed there (not a placeholder, last read
// before restore_at) is kept instead, until no re-run does. `exclusive` is
// empty: the layers' windows never overlap a re-run's operands.
RecomputeCandidates find_layer_recompute(const Graph& graph);

// A plan's recompute mark (Plan::recompute): 1 for a candidate of
// find_recompute_candidates, kLayerMark for one of find_layer_recompute.
inline constexpr char kLayerMark = 2;
// The candidates a plan's marks refer to (whole layers when any mark is kLayerMark).
RecomputeCandidates recompute_candidates_for(const Graph& graph, const std::vector<char>& marks);

// The position of the loss node, or -1 when the graph has no loss output.
NodeId loss_position(const Graph& graph);

}  // namespace autopar
