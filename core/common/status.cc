// Status names and formatting.
#include "core/common/status.h"

#include <ostream>

namespace locus {

std::string_view status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case StatusCode::kNotFound: return "NOT_FOUND";
    case StatusCode::kAlreadyExists: return "ALREADY_EXISTS";
    case StatusCode::kOutOfRange: return "OUT_OF_RANGE";
    case StatusCode::kPermissionDenied: return "PERMISSION_DENIED";
    case StatusCode::kResourceExhausted: return "RESOURCE_EXHAUSTED";
    case StatusCode::kUnavailable: return "UNAVAILABLE";
    case StatusCode::kTimeout: return "TIMEOUT";
    case StatusCode::kCorruption: return "CORRUPTION";
    case StatusCode::kRemoteAccessError: return "REMOTE_ACCESS_ERROR";
    case StatusCode::kRemoteOperationError: return "REMOTE_OPERATION_ERROR";
    case StatusCode::kRetryExceeded: return "RETRY_EXCEEDED";
    case StatusCode::kFlushed: return "FLUSHED";
    case StatusCode::kAborted: return "ABORTED";
    case StatusCode::kUnimplemented: return "UNIMPLEMENTED";
    case StatusCode::kInternal: return "INTERNAL";
  }
  return "UNKNOWN";
}

std::ostream& operator<<(std::ostream& os, StatusCode code) { return os << status_code_name(code); }

std::string Status::to_string() const {
  if (is_ok()) return "OK";
  std::string s(status_code_name(code_));
  s += ": ";
  s += message_;
  return s;
}

}  // namespace locus
