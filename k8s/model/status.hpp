#pragma once
// Status and Result<T>: the error type at module boundaries (after RocksDB's include/rocksdb/status.h).
// Exceptions from third-party parsers are caught where they arise and turned into a Status.

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace kai::model {

/// Outcome of an operation that can fail with a message a user can read.
class [[nodiscard]] Status {
 public:
  static Status ok() { return Status{}; }
  static Status error(std::string message) { return Status{std::move(message)}; }

  bool is_ok() const { return !message_.has_value(); }
  explicit operator bool() const { return is_ok(); }
  /// The error message; empty for ok().
  const std::string& message() const {
    static const std::string kEmpty;
    return message_ ? *message_ : kEmpty;
  }

 private:
  Status() = default;
  explicit Status(std::string message) : message_(std::move(message)) {}
  std::optional<std::string> message_;
};

/// A value or an error Status.
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  bool is_ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return is_ok(); }
  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }
  /// The error message; empty when a value is held.
  const std::string& message() const {
    static const std::string kEmpty;
    return is_ok() ? kEmpty : std::get<Status>(v_).message();
  }
  Status status() const { return is_ok() ? Status::ok() : std::get<Status>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace kai::model
