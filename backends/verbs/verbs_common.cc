// Status mapping and logging shared by the verbs backend (verbs_common.h).
#include "backends/verbs/verbs_common.h"

#include <netdb.h>

#include <cstdio>
#include <cstring>

namespace locus::verbs {

WcStatus map_wc_status(ibv_wc_status status, bool is_recv) {
  if (is_recv && status != IBV_WC_SUCCESS) {
    // A receive fails only because the message could not be placed in it
    // (hardware says IBV_WC_LOC_LEN_ERR; rdma_rxe says LOC_QP_OP_ERR or
    // REM_INV_REQ_ERR), or because its queue pair was flushed.
    return status == IBV_WC_WR_FLUSH_ERR ? WcStatus::kFlushed : WcStatus::kLocalLengthError;
  }
  switch (status) {
    case IBV_WC_SUCCESS: return WcStatus::kSuccess;
    case IBV_WC_REM_ACCESS_ERR: return WcStatus::kRemoteAccessError;
    case IBV_WC_LOC_LEN_ERR:
    case IBV_WC_REM_INV_REQ_ERR:
      // The target refused the request (an overlong SEND, a misaligned atomic).
      return WcStatus::kRemoteOperationError;
    case IBV_WC_REM_OP_ERR: return WcStatus::kRemoteOperationError;
    case IBV_WC_RETRY_EXC_ERR: return WcStatus::kRetryExceeded;
    case IBV_WC_RNR_RETRY_EXC_ERR: return WcStatus::kRnrRetryExceeded;
    case IBV_WC_WR_FLUSH_ERR: return WcStatus::kFlushed;
    default:
      // Local protection, QP operation or fatal errors: post() validates
      // what it can, so these mean a broken device or a deregistered buffer.
      return WcStatus::kRemoteOperationError;
  }
}

Status resolve_host(const ServerAddress& a, sockaddr_storage* out) {
  addrinfo hints{};
  hints.ai_flags = AI_NUMERICSERV;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const std::string port = std::to_string(a.port);
  if (int rc = getaddrinfo(a.address.c_str(), port.c_str(), &hints, &res); rc != 0) {
    return unavailable("cannot resolve '" + a.address + "': " + gai_strerror(rc));
  }
  std::memcpy(out, res->ai_addr, res->ai_addrlen);
  freeaddrinfo(res);
  return Status();
}

void log_line(const std::string& line) {
  // One fprintf per line keeps lines from concurrent threads whole.
  std::fprintf(stderr, "locus verbs: %s\n", line.c_str());
}

std::string errno_text(int err) {
  char buf[128];
  // GNU strerror_r returns the message (possibly not in buf).
  const char* s = strerror_r(err, buf, sizeof buf);
  return std::string(s) + " (errno " + std::to_string(err) + ")";
}

}  // namespace locus::verbs
