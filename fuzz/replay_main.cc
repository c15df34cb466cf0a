// Replays fuzz inputs without libFuzzer: calls the target's
// LLVMFuzzerTestOneInput on every file under each directory given, in name
// order, so the normal (g++) test suite re-runs the seed corpus and every input
// that once crashed a loader. A crash, a sanitizer report or an abort in the
// target fails the test as it would fail the fuzzer.
//
//   <name>_fuzz_replay DIR...   (a DIR that does not exist is skipped: a target
//                                with no regressions yet has no folder)
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<std::filesystem::path> files_under(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " DIR...  (replays every file as a fuzz input)\n";
    return 2;
  }
  size_t replayed = 0;
  for (int i = 1; i < argc; ++i) {
    std::filesystem::path dir(argv[i]);
    if (!std::filesystem::is_directory(dir)) {
      std::cout << "skipped " << dir.string() << " (no such folder)\n";
      continue;
    }
    for (const std::filesystem::path& file : files_under(dir)) {
      std::ifstream in(file, std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (!in.good() && !in.eof()) {
        std::cerr << "cannot read " << file.string() << "\n";
        return 1;
      }
      std::cout << "replaying " << file.string() << " (" << bytes.size() << " bytes)\n" << std::flush;
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      ++replayed;
    }
  }
  if (replayed == 0) {
    std::cerr << "no input files found under the folders given\n";
    return 1;
  }
  std::cout << replayed << " inputs replayed\n";
  return 0;
}
