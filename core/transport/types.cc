// Names and Status conversion for transport value types.
#include "core/transport/types.h"

#include <string>

namespace locus {

std::string_view opcode_name(Opcode op) {
  switch (op) {
    case Opcode::kRead: return "READ";
    case Opcode::kWrite: return "WRITE";
    case Opcode::kWriteWithImm: return "WRITE_WITH_IMM";
    case Opcode::kCas: return "CAS";
    case Opcode::kFaa: return "FAA";
    case Opcode::kSend: return "SEND";
    case Opcode::kRecv: return "RECV";
  }
  return "?";
}

std::string_view wc_status_name(WcStatus s) {
  switch (s) {
    case WcStatus::kSuccess: return "success";
    case WcStatus::kRemoteAccessError: return "remote access error";
    case WcStatus::kRemoteOperationError: return "remote operation error";
    case WcStatus::kLocalLengthError: return "local length error";
    case WcStatus::kRetryExceeded: return "transport retry exceeded";
    case WcStatus::kRnrRetryExceeded: return "RNR retry exceeded";
    case WcStatus::kFlushed: return "flushed";
  }
  return "?";
}

Status completion_error(const Completion& c) {
  StatusCode code = StatusCode::kInternal;
  switch (c.status) {
    case WcStatus::kSuccess: return Status();
    case WcStatus::kRemoteAccessError: code = StatusCode::kRemoteAccessError; break;
    case WcStatus::kRemoteOperationError: code = StatusCode::kRemoteOperationError; break;
    case WcStatus::kLocalLengthError: code = StatusCode::kRemoteOperationError; break;
    case WcStatus::kRetryExceeded: code = StatusCode::kRetryExceeded; break;
    case WcStatus::kRnrRetryExceeded: code = StatusCode::kRetryExceeded; break;
    case WcStatus::kFlushed: code = StatusCode::kFlushed; break;
  }
  std::string msg(opcode_name(c.op));
  msg += " with peer node ";
  msg += std::to_string(c.peer);
  msg += " failed: ";
  msg += wc_status_name(c.status);
  return Status(code, std::move(msg));
}

}  // namespace locus
