// Expected<T>: a value or a user-facing error message.
//
// Everything a user or the environment can get wrong (bad JSON, an unknown op, a
// shape that disagrees with an op's rule) is reported through this type, never by
// an assert or an exception crossing a library boundary. Messages say what, where
// and the values involved.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include <fmt/format.h>

namespace autopar {

struct Error {
  std::string message;
};

template <typename... Args>
Error make_error(fmt::format_string<Args...> format, Args&&... args) {
  return Error{fmt::format(format, std::forward<Args>(args)...)};
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
