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

Status check_work_request(const WorkRequest& wr, uint32_t max_message_bytes, bool local_ok,
                          std::string_view endpoint) {
  const bool atomic = wr.op == Opcode::kCas || wr.op == Opcode::kFaa;
  const bool bad_op = wr.op == Opcode::kRecv;
  const bool short_atomic = atomic && wr.local.length < 8;
  const bool oversized = wr.op == Opcode::kSend && wr.local.length > max_message_bytes;
  if (!bad_op && !short_atomic && !oversized && local_ok) return Status();
  std::string what = std::string(opcode_name(wr.op)) + " (wr_id " + std::to_string(wr.wr_id) +
                     ") on " + std::string(endpoint) + ": ";
  if (bad_op) return invalid_argument(what + "RECV is posted with post_recv");
  if (short_atomic) return invalid_argument(what + "atomics need an 8-byte local buffer");
  if (oversized) {
    return invalid_argument(what + "message of " + std::to_string(wr.local.length) +
                            " bytes exceeds max_message_bytes " + std::to_string(max_message_bytes));
  }
  return invalid_argument(what + "local buffer is not inside a registration with lkey " +
                          std::to_string(wr.local.lkey));
}

}  // namespace locus
