// RpcServer: the server side of locus RPC. It keeps a pool of receive
// buffers posted, dispatches each request to the handler registered for
// its type, and answers every request, including the malformed ones: a
// truncated, oversized, garbled or unknown request gets an error response
// (when there is anyone to answer) and is counted, and the server goes on
// serving everyone else. A client that dies only costs a failed SEND.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/common/aligned_buffer.h"
#include "core/common/status.h"
#include "core/rpc/message.h"
#include "core/transport/env.h"

namespace locus::rpc {

struct RpcServerOptions {
  uint32_t max_message_bytes = 16 * 1024;  // header included; larger requests are rejected
  uint32_t recv_buffers = 256;
  uint32_t send_buffers = 64;
  uint32_t max_handler_types = 64;
};

struct RpcServerStats {
  uint64_t requests = 0;        // well-formed requests dispatched to a handler
  uint64_t handler_errors = 0;  // handlers that returned an error (answered as such)
  uint64_t malformed = 0;       // bad magic, bad kind, length mismatch
  uint64_t truncated = 0;       // shorter than a header
  uint64_t oversized = 0;       // longer than a receive buffer
  uint64_t unknown_type = 0;
  uint64_t send_failures = 0;   // responses that could not be delivered (dead client)

  uint64_t rejected() const { return malformed + truncated + oversized + unknown_type; }
};

struct RequestContext {
  NodeId client = kInvalidNode;
  uint16_t type = 0;
  uint64_t request_id = 0;
};

// A handler reads its request and writes its response payload. Returning an
// error sends an error response carrying the Status; the Writer's content
// is then discarded.
using Handler = std::function<Status(const RequestContext&, Reader& request, Writer& response)>;

class RpcServer {
 public:
  static StatusOr<std::unique_ptr<RpcServer>> create(Env env, const RpcServerOptions& options = {});
  ~RpcServer();
  RpcServer(const RpcServer&) = delete;
  RpcServer& operator=(const RpcServer&) = delete;

  // Register before serving; `name` is used in stats and error messages.
  Status handle(uint16_t type, std::string name, Handler handler);

  // Serves until env.stop_requested().
  void serve();
  // Handles whatever arrives within `timeout`; returns the number handled.
  size_t serve_once(Nanos timeout);

  RpcServerStats stats() const;

 private:
  struct Slot {
    std::string name;
    Handler handler;
  };
  RpcServer(Env env, const RpcServerOptions& options);
  Status init();
  Status post_recv_buffer(uint32_t index);
  void on_completion(const Completion& c);
  void on_request(const Completion& c);
  // Blocks (bounded) until a send buffer is free; receives seen meanwhile go to backlog_.
  int64_t acquire_send_buffer();
  void respond(NodeId client, uint16_t type, uint64_t request_id, const Status& status,
               int64_t send_index, size_t payload_bytes);
  void respond_error(NodeId client, uint16_t type, uint64_t request_id, const Status& status);
  std::byte* send_buf(uint32_t i) { return send_bufs_ + uint64_t{i} * options_.max_message_bytes; }
  std::byte* recv_buf(uint32_t i) { return recv_bufs_ + uint64_t{i} * options_.max_message_bytes; }

  Env env_;
  RpcServerOptions options_;
  std::vector<Slot> handlers_;
  AlignedBuffer memory_;
  Region region_;
  bool registered_ = false;
  std::byte* send_bufs_ = nullptr;
  std::byte* recv_bufs_ = nullptr;
  std::vector<uint32_t> free_send_;
  std::vector<Completion> backlog_;  // receives parked while waiting for a send buffer
  std::vector<Completion> scratch_;

  struct Counters {
    std::atomic<uint64_t> requests{0}, handler_errors{0}, malformed{0}, truncated{0},
        oversized{0}, unknown_type{0}, send_failures{0};
  } counters_;
};

}  // namespace locus::rpc
