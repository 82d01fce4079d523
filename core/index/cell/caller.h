// Caller: "send this request to that server and give me the response
// payload". Actors use RpcCaller (the RPC client over the transport); set-up
// code and single-threaded tests use DirectCaller, which runs the target
// CellServer's handler in place. The split driver and the loader are
// written once against it, so the protocol steps are the same code in both.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "core/common/status.h"
#include "core/index/cell/protocol.h"
#include "core/rpc/rpc_client.h"
#include "core/transport/types.h"

namespace locus::cell {

class CellServer;

class Caller {
 public:
  virtual ~Caller() = default;
  // Where to build the next request's payload.
  virtual std::span<std::byte> payload_buffer() = 0;
  // The response payload, valid until the next call.
  virtual StatusOr<std::span<const std::byte>> call(NodeId server, uint16_t type, size_t payload_bytes) = 0;
};

// Over RPC, as a server of the tree: every request goes as kInternal with
// the tree's key (protocol.h).
class RpcCaller final : public Caller {
 public:
  RpcCaller(rpc::RpcClient& rpc, uint64_t tree_key) : rpc_(rpc), tree_key_(tree_key) {}
  std::span<std::byte> payload_buffer() override { return rpc_.payload_buffer().subspan(kInternalHeaderBytes); }
  StatusOr<std::span<const std::byte>> call(NodeId server, uint16_t type, size_t payload_bytes) override;

 private:
  rpc::RpcClient& rpc_;
  uint64_t tree_key_;
};

// Not thread-safe, and only for when no actor is serving the same servers.
class DirectCaller final : public Caller {
 public:
  explicit DirectCaller(uint32_t max_message_bytes);
  void add(CellServer* server);
  std::span<std::byte> payload_buffer() override { return request_; }
  StatusOr<std::span<const std::byte>> call(NodeId server, uint16_t type, size_t payload_bytes) override;

 private:
  std::vector<CellServer*> servers_;
  std::vector<std::byte> request_;
  std::vector<std::byte> response_;
};

}  // namespace locus::cell
