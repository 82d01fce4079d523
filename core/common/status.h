// Status and StatusOr<T>: how every fallible call in locus reports failure.
//
// A Status is a code plus a human-readable message that names the problem
// (the peer, the operation, the offending key). Errors are values, never
// exceptions, on the data path; the CLI turns them into one-line messages.
#pragma once

#include <cassert>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace locus {

enum class StatusCode : uint8_t {
  kOk = 0,
  kInvalidArgument,     // caller passed something malformed
  kNotFound,            // key or object absent
  kAlreadyExists,
  kOutOfRange,          // offset/length outside a registered region
  kPermissionDenied,    // access right missing on a region
  kResourceExhausted,   // a bounded queue or region is full
  kUnavailable,         // peer unreachable or dead
  kTimeout,             // a wait expired
  kCorruption,          // checksum mismatch that did not resolve by retry
  kRemoteAccessError,   // one-sided op rejected by the target (bounds, rights, rkey)
  kRemoteOperationError,// target could not carry out the op (misaligned atomic, ...)
  kRetryExceeded,       // transport retries (or RNR retries) exhausted
  kFlushed,             // work request flushed by a connection in error
  kAborted,             // operation gave up (e.g. cuckoo kick chain too long)
  kUnimplemented,
  kInternal,
};

std::string_view status_code_name(StatusCode code);
std::ostream& operator<<(std::ostream& os, StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return Status(); }

  bool is_ok() const { return code_ == StatusCode::kOk; }
  explicit operator bool() const { return is_ok(); }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "CODE: message", for logs and the CLI.
  std::string to_string() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status invalid_argument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status not_found(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status out_of_range(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
inline Status resource_exhausted(std::string m) { return {StatusCode::kResourceExhausted, std::move(m)}; }
inline Status unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status timeout_error(std::string m) { return {StatusCode::kTimeout, std::move(m)}; }
inline Status corruption(std::string m) { return {StatusCode::kCorruption, std::move(m)}; }
inline Status internal_error(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
// Also a compare-and-set over a stale version (core/membership).
inline Status aborted_error(std::string m) { return {StatusCode::kAborted, std::move(m)}; }
inline Status unimplemented(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }

// The peer gave no answer (timed out, unreachable, retries exhausted, the
// queue flushed): a request it was sent may or may not have been applied.
inline bool is_unanswered(const Status& s) {
  switch (s.code()) {
    case StatusCode::kRetryExceeded:
    case StatusCode::kUnavailable:
    case StatusCode::kFlushed:
    case StatusCode::kTimeout: return true;
    default: return false;
  }
}

// Holds either a T or a non-OK Status.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  StatusOr(Status status) : v_(std::move(status)) {  // NOLINT
    assert(!std::get<Status>(v_).is_ok() && "StatusOr built from an OK status");
  }

  bool is_ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return is_ok(); }
  Status status() const { return is_ok() ? Status() : std::get<Status>(v_); }

  T& value() & { assert(is_ok()); return std::get<T>(v_); }
  const T& value() const& { assert(is_ok()); return std::get<T>(v_); }
  T&& value() && { assert(is_ok()); return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace locus

// Propagate a non-OK Status to the caller.
#define LOCUS_RETURN_IF_ERROR(expr)                 \
  do {                                              \
    ::locus::Status locus_status_ = (expr);         \
    if (!locus_status_.is_ok()) return locus_status_; \
  } while (0)

#define LOCUS_CONCAT_INNER(a, b) a##b
#define LOCUS_CONCAT(a, b) LOCUS_CONCAT_INNER(a, b)
// LOCUS_ASSIGN_OR_RETURN(auto x, call()): unwrap a StatusOr or return its error.
#define LOCUS_ASSIGN_OR_RETURN(lhs, expr) \
  LOCUS_ASSIGN_OR_RETURN_IMPL(LOCUS_CONCAT(locus_so_, __LINE__), lhs, expr)
#define LOCUS_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.is_ok()) return tmp.status();            \
  lhs = std::move(tmp).value()
