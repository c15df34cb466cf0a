// Output helpers shared by the subcommands: one error format for the whole CLI
// and one way to write a result to stdout or to an --out file.
//
// Every failure ends as `autopar: error: <message>` on stderr and a non-zero
// exit code that says which kind of failure it was (ErrorKind, ir/expected.h).
// The table is docs/cli.md's "Exit codes"; tests/cli/exit_code_test.cc holds
// one case per kind.
#pragma once

#include <string>
#include <string_view>

#include "ir/expected.h"

namespace autopar {

// Prints `autopar: error: <message>` to stderr and returns its kind's exit code.
int report_error(const Error& error);
int report_error(ErrorKind kind, std::string_view message);
// A value the user gave that cannot work: report_error(ErrorKind::kUsage, ...).
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
