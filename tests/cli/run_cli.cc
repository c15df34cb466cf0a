#include "run_cli.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace autopar::testing {

namespace {

std::string make_temp_dir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "autopar-cli-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed: " + pattern);
  return pattern;
}

}  // namespace

TempDir::TempDir() : path_(make_temp_dir()) {}

TempDir::~TempDir() {
  std::error_code ignored;  // a test's leftovers must not fail it
  std::filesystem::remove_all(path_, ignored);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

CliResult run_autopar(const std::string& args) {
  // stderr goes to a file so that the two streams stay apart.
  const std::string dir = make_temp_dir();
  const std::string err_path = dir + "/stderr.txt";
  const std::string command = std::string("'") + AUTOPAR_CLI + "' " + args + " 2>'" + err_path + "'";
  CliResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed: " + command);
  std::array<char, 4096> buffer{};
  size_t read = 0;
  while ((read = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.out.append(buffer.data(), read);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.err = read_file(err_path);
  std::filesystem::remove_all(dir);
  return result;
}

}  // namespace autopar::testing
