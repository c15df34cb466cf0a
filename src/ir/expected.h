// Expected<T>: a value or a user-facing error message.
//
// Everything a user or the environment can get wrong (bad JSON, an unknown op, a
// shape that disagrees with an op's rule) is reported through this type, never by
// an assert or an exception crossing a library boundary. Messages say what, where
// and the values involved.
//
// Every Error has a kind, which the CLI maps to its exit code (docs/cli.md's
// table). Most errors are about what the user gave, so make_error's kind is
// kInput; code that knows better says so with make_error_of.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include <fmt/format.h>

namespace autopar {

// Why something failed, from the user's side.
enum class ErrorKind {
  kInput,       // a file, model, graph or value given is malformed, unknown or inconsistent
  kUsage,       // the command line: an unknown option, a value out of range, a missing argument
  kInfeasible,  // well-formed, but no answer exists (no plan fits the memory budget)
  kRuntime,     // the run failed: a rank died or failed, a check disagreed, a file could not be written
  kInternal,    // a bug in autopar (an invariant broke)
};

// "input", "usage", "infeasible", "runtime", "internal".
constexpr const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInput: return "input";
    case ErrorKind::kUsage: return "usage";
    case ErrorKind::kInfeasible: return "infeasible";
    case ErrorKind::kRuntime: return "runtime";
    case ErrorKind::kInternal: return "internal";
  }
  return "internal";
}

// The process exit code of each kind: `autopar` exits with it, and a rank that
// ends an MPI job passes it to MPI_Abort. docs/cli.md's "Exit codes" is this table.
inline constexpr int kExitOk = 0;
inline constexpr int kExitInput = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInfeasible = 3;
inline constexpr int kExitRuntime = 4;
inline constexpr int kExitInternal = 5;

constexpr int exit_code(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInput: return kExitInput;
    case ErrorKind::kUsage: return kExitUsage;
    case ErrorKind::kInfeasible: return kExitInfeasible;
    case ErrorKind::kRuntime: return kExitRuntime;
    case ErrorKind::kInternal: return kExitInternal;
  }
  return kExitInternal;
}

struct Error {
  std::string message;
  ErrorKind kind = ErrorKind::kInput;
};

template <typename... Args>
Error make_error(fmt::format_string<Args...> format, Args&&... args) {
  return Error{fmt::format(format, std::forward<Args>(args)...)};
}

template <typename... Args>
Error make_error_of(ErrorKind kind, fmt::format_string<Args...> format, Args&&... args) {
  return Error{fmt::format(format, std::forward<Args>(args)...), kind};
}

// A new message for an error caused by `cause` (usually quoting it): the
// cause's kind is kept, so context added on the way up never turns a failed
// run or an unmet budget into an input error.
template <typename... Args>
Error make_error_like(const Error& cause, fmt::format_string<Args...> format, Args&&... args) {
  return Error{fmt::format(format, std::forward<Args>(args)...), cause.kind};
}

template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : state_(std::move(value)) {}  // NOLINT: implicit by design
  Expected(Error error) : state_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, Error> state_;
};

// Expected<void>: success or an error.
struct Ok {};
using Status = Expected<Ok>;
inline Status ok_status() { return Ok{}; }

}  // namespace autopar
