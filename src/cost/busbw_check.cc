// Parsing published nccl-tests figures and predicting them (busbw_check.h).
#include "cost/busbw_check.h"

#include <charconv>

#include <fmt/format.h>

namespace autopar {
namespace {

constexpr std::string_view kHeader =
    "profile,collective,group_size,per_node,run,compare,size_bytes,busbw_gbps,source";
constexpr size_t kFieldCount = 9;

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    size_t comma = line.find(',', start);
    fields.push_back(line.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) return fields;
    start = comma + 1;
  }
}

template <typename T>
std::optional<T> parse_number(std::string_view text) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<CollAlgorithm> parse_algorithm(std::string_view name) {
  for (CollAlgorithm a : {CollAlgorithm::kRing, CollAlgorithm::kTree, CollAlgorithm::kNvls}) {
    if (coll_algorithm_name(a) == name) return a;
  }
  return std::nullopt;
}

Expected<PublishedBusBw> parse_row(std::string_view line, int line_no) {
  std::vector<std::string_view> f = split_fields(line);
  if (f.size() != kFieldCount) {
    return make_error("published busBw line {}: {} fields, expected {} ({})", line_no, f.size(),
                      kFieldCount, kHeader);
  }
  PublishedBusBw row;
  row.profile = std::string(f[0]);
  std::optional<Collective> collective = parse_collective(f[1]);
  std::optional<int64_t> size = parse_number<int64_t>(f[2]);
  std::optional<int64_t> per_node = parse_number<int64_t>(f[3]);
  std::optional<double> bytes = parse_number<double>(f[6]);
  std::optional<double> busbw = parse_number<double>(f[7]);
  if (!collective || *collective == Collective::kLocalSlice) {
    return make_error("published busBw line {}: '{}' is not a collective", line_no, f[1]);
  }
  if (!size || !per_node || *size < 2 || *per_node < 1 || *per_node > *size || *size % *per_node) {
    return make_error("published busBw line {}: group_size '{}' and per_node '{}' must be "
                      "integers with 1 <= per_node <= group_size, group_size >= 2, dividing it",
                      line_no, f[2], f[3]);
  }
  if (!bytes || !busbw || *bytes <= 0 || *busbw <= 0) {
    return make_error("published busBw line {}: size '{}' and busBw '{}' must be positive numbers",
                      line_no, f[6], f[7]);
  }
  if (f[5] != "auto") {
    row.algorithm = parse_algorithm(f[5]);
    if (!row.algorithm) {
      return make_error("published busBw line {}: compare '{}' is not auto, ring, tree or nvls",
                        line_no, f[5]);
    }
  }
  row.run = std::string(f[4]);
  row.collective = *collective;
  row.group_size = *size;
  row.per_node = *per_node;
  row.size_bytes = *bytes;
  row.busbw_bytes_per_s = *busbw * 1e9;
  row.source = std::string(f[8]);
  return row;
}

}  // namespace

Expected<std::vector<PublishedBusBw>> parse_published_busbw(std::string_view csv) {
  std::vector<PublishedBusBw> rows;
  bool header_seen = false;
  int line_no = 0;
  size_t start = 0;
  while (start < csv.size()) {
    size_t end = csv.find('\n', start);
    if (end == std::string_view::npos) end = csv.size();
    std::string_view line = csv.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (line.empty() || line.front() == '#') continue;
    if (!header_seen) {
      if (line != kHeader) {
        return make_error("published busBw line {}: header '{}', expected '{}'", line_no, line,
                          kHeader);
      }
      header_seen = true;
      continue;
    }
    Expected<PublishedBusBw> row = parse_row(line, line_no);
    if (!row) return row.error();
    rows.push_back(std::move(*row));
  }
  if (rows.empty()) return make_error("published busBw table has no rows");
  return rows;
}

Expected<BusBwPrediction> predict_busbw(const PublishedBusBw& figure, const HardwareProfile& hw) {
  CollectiveGroup group{figure.group_size, figure.per_node, hw.intra_node, hw.inter_node};
  std::optional<CollectiveChoice> choice =
      figure.algorithm ? collective_with(figure.collective, group, figure.size_bytes, *figure.algorithm)
                       : choose_collective(figure.collective, group, figure.size_bytes);
  if (!choice) {
    return make_error("profile {} offers no {} for {} on {} ranks ({} per node)", hw.name,
                      coll_algorithm_name(*figure.algorithm), collective_name(figure.collective),
                      figure.group_size, figure.per_node);
  }
  BusBwPrediction out;
  out.choice = *choice;
  out.busbw_bytes_per_s =
      bus_bandwidth(figure.collective, figure.group_size, figure.size_bytes, choice->time_s);
  out.relative_error = out.busbw_bytes_per_s / figure.busbw_bytes_per_s - 1;
  return out;
}

}  // namespace autopar
