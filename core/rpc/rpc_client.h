// RpcClient: synchronous request/response calls over SEND/RECV.
//
// One outstanding call at a time per client (a client is one actor). The
// request is built in place in a registered send buffer; the response is
// returned as a view into a receive buffer, valid until the next call.
// Responses to calls that already timed out are recognised by their request
// id and dropped. It is its endpoint's kMessages receiver (endpoint.h):
// create it before any other receiver of the endpoint.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "core/common/aligned_buffer.h"
#include "core/common/status.h"
#include "core/rpc/caller.h"
#include "core/rpc/message.h"
#include "core/transport/endpoint.h"

namespace locus::rpc {

struct RpcClientOptions {
  uint32_t max_message_bytes = 16 * 1024;  // header included
  uint32_t recv_buffers = 4;               // absorbs late responses
};

struct RpcClientStats {
  uint64_t calls = 0;
  uint64_t error_responses = 0;
  uint64_t stale_responses = 0;
  uint64_t timeouts = 0;
};

class RpcClient final : public Caller {
 public:
  static StatusOr<std::unique_ptr<RpcClient>> create(Endpoint& endpoint,
                                                     const RpcClientOptions& options = {});
  ~RpcClient() override;
  RpcClient(const RpcClient&) = delete;
  RpcClient& operator=(const RpcClient&) = delete;

  // Where to build the next request's payload.
  std::span<std::byte> payload_buffer() override {
    return {send_buf_ + kHeaderBytes, options_.max_message_bytes - kHeaderBytes};
  }
  // Sends the first payload_bytes of payload_buffer() as a `type` request to
  // `server` and waits for the response. An error response becomes its
  // Status (code and message from the server); the OK payload is returned.
  StatusOr<std::span<const std::byte>> call(NodeId server, uint16_t type, size_t payload_bytes) override;
  // Convenience: copies `payload` into the buffer first.
  StatusOr<std::span<const std::byte>> call(NodeId server, uint16_t type,
                                            std::span<const std::byte> payload);

  const RpcClientStats& stats() const { return stats_; }

 private:
  RpcClient(Endpoint& endpoint, const RpcClientOptions& options);
  Status init();

  Endpoint& endpoint_;
  RpcClientOptions options_;
  AlignedBuffer memory_;
  Region region_;
  bool registered_ = false;
  bool receiving_ = false;  // registered as the endpoint's receiver
  std::byte* send_buf_ = nullptr;
  uint64_t lent_buffer_ = 0;  // receive buffer lent to the caller by the last call; 0: none
  uint64_t next_request_id_ = 1;
  RpcClientStats stats_;
};

}  // namespace locus::rpc
