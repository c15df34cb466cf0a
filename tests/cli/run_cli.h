// Runs the built `autopar` binary in a shell and captures what it printed, for
// end-to-end tests of the command line (exit codes, stdout, stderr, files).
#pragma once

#include <string>

namespace autopar::testing {

struct CliResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// `args` is appended to the binary's path as shell text; quote paths yourself.
CliResult run_autopar(const std::string& args);

// A fresh, empty directory for one test's files, removed with what it holds
// when the object goes.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& text);

}  // namespace autopar::testing
