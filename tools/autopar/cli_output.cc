#include "cli_output.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace autopar {

int report_error(ErrorKind kind, std::string_view message) {
  fmt::print(stderr, "autopar: error: {}\n", message);
  return exit_code(kind);
}

int report_error(const Error& error) { return report_error(error.kind, error.message); }

int report_usage_error(std::string_view message) { return report_error(ErrorKind::kUsage, message); }

void report_warning(std::string_view message) {
  fmt::print(stderr, "autopar: warning: {}\n", message);
}

Status write_output(const std::string& text, const std::string& path) {
  if (path.empty()) {
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
      return make_error_of(ErrorKind::kRuntime, "cannot write to stdout: {}", std::strerror(errno));
    }
    return ok_status();
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return make_error_of(ErrorKind::kRuntime, "cannot open '{}' for writing: {}", path, std::strerror(errno));
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) return make_error_of(ErrorKind::kRuntime, "cannot write '{}': {}", path, std::strerror(errno));
  return ok_status();
}

Expected<std::string> read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error("cannot read '{}': {}", path, std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return make_error("cannot read '{}': {}", path, std::strerror(errno));
  return text.str();
}

std::string with_thousands(int64_t value) {
  // Work on the magnitude as unsigned so INT64_MIN does not overflow.
  const bool negative = value < 0;
  uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  std::string digits = std::to_string(magnitude);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return negative ? "-" + out : out;
}

}  // namespace autopar
