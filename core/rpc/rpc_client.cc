// RpcClient: see rpc_client.h.
#include "core/rpc/rpc_client.h"

#include <cstring>
#include <string>

namespace locus::rpc {

StatusOr<std::unique_ptr<RpcClient>> RpcClient::create(Endpoint& endpoint,
                                                       const RpcClientOptions& options) {
  if (options.max_message_bytes <= kHeaderBytes || options.recv_buffers == 0) {
    return invalid_argument("rpc client: max_message_bytes must exceed the header and "
                            "recv_buffers must be positive");
  }
  std::unique_ptr<RpcClient> client(new RpcClient(endpoint, options));
  LOCUS_RETURN_IF_ERROR(client->init());
  return client;
}

RpcClient::RpcClient(Endpoint& endpoint, const RpcClientOptions& options)
    : endpoint_(endpoint), options_(options) {}

RpcClient::~RpcClient() {
  if (lent_buffer_ != 0) (void)endpoint_.release(lent_buffer_);
  if (receiving_) endpoint_.remove_receiver(RecvKind::kMessages);
  if (registered_) (void)endpoint_.transport().deregister_memory(region_);
}

Status RpcClient::init() {
  const uint64_t bytes = options_.max_message_bytes;
  memory_ = AlignedBuffer(bytes);
  if (!memory_.valid()) return resource_exhausted("rpc: cannot allocate " + std::to_string(bytes) + " bytes of buffers");
  LOCUS_ASSIGN_OR_RETURN(region_,
                         endpoint_.transport().register_memory(memory_.data(), bytes, kLocalOnly));
  registered_ = true;
  send_buf_ = memory_.data();
  LOCUS_RETURN_IF_ERROR(endpoint_.add_receiver(RecvKind::kMessages, "rpc client", options_.recv_buffers,
                                              options_.max_message_bytes));
  receiving_ = true;
  return Status();
}

StatusOr<std::span<const std::byte>> RpcClient::call(NodeId server, uint16_t type,
                                                     std::span<const std::byte> payload) {
  std::span<std::byte> buf = payload_buffer();
  if (payload.size() > buf.size()) {
    return invalid_argument("rpc request of " + std::to_string(payload.size()) +
                            " bytes exceeds the " + std::to_string(buf.size()) + "-byte limit");
  }
  if (!payload.empty()) std::memcpy(buf.data(), payload.data(), payload.size());
  return call(server, type, payload.size());
}

StatusOr<std::span<const std::byte>> RpcClient::call(NodeId server, uint16_t type,
                                                     size_t payload_bytes) {
  if (payload_bytes > options_.max_message_bytes - kHeaderBytes) {
    return invalid_argument("rpc request of " + std::to_string(payload_bytes) +
                            " bytes exceeds the message limit");
  }
  if (lent_buffer_ != 0) {
    LOCUS_RETURN_IF_ERROR(endpoint_.release(lent_buffer_));
    lent_buffer_ = 0;
  }
  ++stats_.calls;
  MessageHeader h;
  h.type = type;
  h.kind = kKindRequest;
  h.payload_bytes = static_cast<uint32_t>(payload_bytes);
  h.request_id = next_request_id_++;
  write_header(send_buf_, h);

  WorkRequest wr;
  wr.wr_id = endpoint_.next_wr_id();
  wr.op = Opcode::kSend;
  wr.remote.node = server;
  wr.local = {send_buf_, static_cast<uint32_t>(kHeaderBytes + payload_bytes), region_.lkey};
  LOCUS_RETURN_IF_ERROR(endpoint_.transport().post(std::span<const WorkRequest>(&wr, 1)));
  auto sent = endpoint_.await(wr.wr_id, server);
  if (!sent.is_ok()) return sent.status();
  if (!sent->ok()) return completion_error(*sent);

  while (true) {
    auto rc = endpoint_.await_recv(RecvKind::kMessages);
    if (!rc.is_ok()) {
      ++stats_.timeouts;
      return Status(rc.status().code(), "rpc type " + std::to_string(type) + " to node " +
                                            std::to_string(server) + ": " + rc.status().message());
    }
    const std::span<const std::byte> got = rc->data;
    const bool usable = rc->completion.ok() && got.size() >= kHeaderBytes;
    const MessageHeader rh = usable ? read_header(got.data()) : MessageHeader{};
    if (!usable || rh.magic != kMagic || rh.kind != kKindResponse || rh.request_id != h.request_id ||
        rh.payload_bytes != got.size() - kHeaderBytes || rc->completion.peer != server) {
      ++stats_.stale_responses;
      LOCUS_RETURN_IF_ERROR(endpoint_.release(rc->buffer));
      continue;
    }
    lent_buffer_ = rc->buffer;
    std::span<const std::byte> body = got.subspan(kHeaderBytes, rh.payload_bytes);
    if (rh.status != static_cast<uint8_t>(StatusCode::kOk)) {
      ++stats_.error_responses;
      const StatusCode code = rh.status <= static_cast<uint8_t>(StatusCode::kInternal)
                                  ? static_cast<StatusCode>(rh.status)
                                  : StatusCode::kInternal;
      return Status(code,
                    std::string(reinterpret_cast<const char*>(body.data()), body.size()));
    }
    return body;
  }
}

}  // namespace locus::rpc
