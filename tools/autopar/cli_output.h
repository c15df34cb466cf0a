// Output helpers shared by the subcommands: one error format for the whole CLI
// and one way to write a result to stdout or to an --out file.
//
// Every failure a user can cause ends as `autopar: error: <message>` on stderr
// and a non-zero exit: 2 for usage errors (reported by main while parsing), 1 for
// failures while running a subcommand.
#pragma once

#include <string>
#include <string_view>

#include "ir/expected.h"

namespace autopar {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// Prints `autopar: error: <message>` to stderr and returns kExitFailure.
int report_error(std::string_view message);
// The same, for a value the user gave that cannot work: returns kExitUsage.
int report_usage_error(std::string_view message);

// Prints `autopar: warning: <message>` to stderr (the command goes on).
void report_warning(std::string_view message);

// Writes text to stdout when path is empty, else to the file at path
// (replacing it). Errors name the path and the system's reason.
Status write_output(const std::string& text, const std::string& path);

// Reads a whole file. Errors name the path and the system's reason.
Expected<std::string> read_text_file(const std::string& path);

// 8030261248 -> "8,030,261,248"; negative numbers keep their sign.
std::string with_thousands(int64_t value);

}  // namespace autopar
