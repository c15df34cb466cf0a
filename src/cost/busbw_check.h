// The collective model (comm_cost.h) against published nccl-tests figures.
//
// A figure is one row of bench/collectives/published_busbw.csv: a profile, a
// collective on a group (its size and members per node), how the source ran
// NCCL, what the model is compared with (its own choice, or one algorithm), the
// size and the busBw the run printed. predict_busbw gives the model's busBw for
// the same call. The bench program
// collective_model_table prints the comparison and tests/cost holds every row
// to 10%; docs/collective-model.md names the sources.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cost/comm_cost.h"
#include "cost/hardware.h"
#include "ir/expected.h"

namespace autopar {

struct PublishedBusBw {
  std::string profile;  // built-in hardware profile name
  Collective collective = Collective::kAllReduce;
  int64_t group_size = 1;
  int64_t per_node = 1;
  std::string run;                         // how the source ran NCCL, e.g. "NCCL_ALGO=RING"
  std::optional<CollAlgorithm> algorithm;  // compared with; nullopt: the model's choice ("auto")
  double size_bytes = 0;
  double busbw_bytes_per_s = 0;
  std::string source;  // an id described in docs/collective-model.md
};

struct BusBwPrediction {
  CollectiveChoice choice;
  double busbw_bytes_per_s = 0;
  double relative_error = 0;  // predicted / published - 1
};

// The CSV text (header line, '#' comments). Errors name the line.
Expected<std::vector<PublishedBusBw>> parse_published_busbw(std::string_view csv);
// Fails when the profile's links offer no such algorithm for the collective.
Expected<BusBwPrediction> predict_busbw(const PublishedBusBw& figure, const HardwareProfile& hw);

}  // namespace autopar
