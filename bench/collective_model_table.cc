// Prints the collective model against published nccl-tests bus bandwidths, one
// markdown row per figure of bench/collectives/published_busbw.csv (or FILE),
// and exits 1 when any prediction is more than 10% off.
//
//   collective_model_table [FILE]
//
// The model is deterministic, so the table does not depend on the machine.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "cost/busbw_check.h"

namespace {

constexpr double kTolerance = 0.10;

std::string size_text(double bytes) {
  constexpr double kMiB = 1 << 20;
  if (bytes >= 1024 * kMiB) return fmt::format("{:g} GiB", bytes / (1024 * kMiB));
  return fmt::format("{:g} MiB", bytes / kMiB);
}

std::string group_text(const autopar::PublishedBusBw& f) {
  if (f.per_node == f.group_size) return fmt::format("{} (1 node)", f.group_size);
  return fmt::format("{} ({} nodes x {})", f.group_size, f.group_size / f.per_node, f.per_node);
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = argc > 1 ? argv[1] : AUTOPAR_SOURCE_DIR "/bench/collectives/published_busbw.csv";
  std::ifstream in(path);
  if (!in) {
    fmt::print(stderr, "collective_model_table: cannot open '{}'\n", path);
    return 2;
  }
  std::ostringstream text;
  text << in.rdbuf();
  autopar::Expected<std::vector<autopar::PublishedBusBw>> figures =
      autopar::parse_published_busbw(text.str());
  if (!figures) {
    fmt::print(stderr, "collective_model_table: {}: {}\n", path, figures.error().message);
    return 2;
  }
  std::map<std::string, autopar::HardwareProfile> profiles;
  fmt::print("| profile | collective | ranks | source's run | model (compared with) | size | "
             "predicted busBw | published busBw | error | source |\n");
  fmt::print("| --- | --- | --- | --- | --- | ---: | ---: | ---: | ---: | --- |\n");
  double worst = 0;
  int off = 0;
  for (const autopar::PublishedBusBw& f : *figures) {
    if (!profiles.count(f.profile)) {
      autopar::Expected<autopar::HardwareProfile> hw = autopar::load_hardware(f.profile);
      if (!hw) {
        fmt::print(stderr, "collective_model_table: {}\n", hw.error().message);
        return 2;
      }
      profiles.emplace(f.profile, *hw);
    }
    autopar::Expected<autopar::BusBwPrediction> p = autopar::predict_busbw(f, profiles.at(f.profile));
    if (!p) {
      fmt::print(stderr, "collective_model_table: {}\n", p.error().message);
      return 2;
    }
    worst = std::max(worst, std::abs(p->relative_error));
    if (std::abs(p->relative_error) > kTolerance) ++off;
    fmt::print("| {} | {} | {} | {} | {}/{} ({}) | {} | {:.1f} GB/s | {:.1f} GB/s | {:+.1f}% | {} |\n",
               f.profile, autopar::collective_name(f.collective), group_text(f), f.run,
               autopar::coll_algorithm_name(p->choice.algorithm),
               autopar::coll_protocol_name(p->choice.protocol),
               f.algorithm ? autopar::coll_algorithm_name(*f.algorithm) : "auto", size_text(f.size_bytes),
               p->busbw_bytes_per_s / 1e9, f.busbw_bytes_per_s / 1e9, 100 * p->relative_error,
               f.source);
  }
  fmt::print("\n{} figures, worst error {:.1f}%, {} beyond {:.0f}%\n", figures->size(), 100 * worst,
             off, 100 * kTolerance);
  return off == 0 ? 0 : 1;
}
