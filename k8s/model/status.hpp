#pragma once
// Status and Result<T>: the error type at module boundaries (after RocksDB's include/rocksdb/status.h).
// Exceptions from third-party parsers are caught where they arise and turned into a Status.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace kai::model {

/// What kind of failure a Status is, for callers that act on it (retry, back off, adopt a bound pod);
/// the message is for people and is never parsed (after absl::StatusCode and HTTP's classes).
enum class Code : uint8_t {
  kOk = 0,
  kUnknown,       ///< Not classified.
  kNotFound,      ///< The object is gone (HTTP 404).
  kConflict,      ///< A precondition or version conflict, or it exists already (HTTP 409).
  kInvalid,       ///< The request or object is malformed (HTTP 400, 422).
  kForbidden,     ///< Refused by authorization or admission (HTTP 401, 403).
  kTimedOut,      ///< Waited longer than allowed (a reservation pod that never reported, HTTP 408/504).
  kUnavailable,   ///< No answer, or a server error: worth retrying later (HTTP 0, 429, 5xx).
  kNoSpace,       ///< The disk is full.
  kInternal,      ///< A bug or a corrupt store.
};

/// "not found", "conflict", ... for messages and tests.
inline const char* to_string(Code c) {
  switch (c) {
    case Code::kOk: return "ok";
    case Code::kUnknown: return "unknown";
    case Code::kNotFound: return "not found";
    case Code::kConflict: return "conflict";
    case Code::kInvalid: return "invalid";
    case Code::kForbidden: return "forbidden";
    case Code::kTimedOut: return "timed out";
    case Code::kUnavailable: return "unavailable";
    case Code::kNoSpace: return "no space";
    case Code::kInternal: return "internal";
  }
  return "unknown";
}

/// Outcome of an operation that can fail with a message a user can read.
class [[nodiscard]] Status {
 public:
  static Status ok() { return Status{}; }
  static Status error(std::string message) { return Status{Code::kUnknown, std::move(message)}; }
  static Status error(Code code, std::string message) {
    return Status{code == Code::kOk ? Code::kUnknown : code, std::move(message)};
  }

  bool is_ok() const { return code_ == Code::kOk; }
  explicit operator bool() const { return is_ok(); }
  Code code() const { return code_; }
  /// The error message; empty for ok().
  const std::string& message() const { return message_; }
  /// The same failure with `context` in front of its message ("listing pods: ..."), code kept.
  Status with_context(const std::string& context) const {
    return is_ok() ? *this : Status{code_, context + ": " + message_};
  }

 private:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  Code code_ = Code::kOk;
  std::string message_;
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
