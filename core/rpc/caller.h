// Caller: what a client needs of an RPC transport, one call at a time:
// a buffer to build the request's payload in, and a call to a server that
// returns the response's payload. RpcClient (SEND/RECV) is one; the
// mailboxes of core/messaging (RDMA WRITE into per-connection rings) are
// another, so a design's client code is written once for both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/common/status.h"
#include "core/transport/types.h"

namespace locus::rpc {

class Caller {
 public:
  virtual ~Caller() = default;
  // Where to build the next request's payload.
  virtual std::span<std::byte> payload_buffer() = 0;
  // Sends the first payload_bytes of payload_buffer() as a `type` request
  // to `server` and waits for the response: its payload (valid until the
  // next call), or the server's error as a Status.
  virtual StatusOr<std::span<const std::byte>> call(NodeId server, uint16_t type, size_t payload_bytes) = 0;
};

}  // namespace locus::rpc
