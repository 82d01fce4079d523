// DirectCaller: see caller.h.
#include "core/index/cell/caller.h"

#include "core/index/cell/server.h"
#include "core/rpc/message.h"

namespace locus::cell {

DirectCaller::DirectCaller(uint32_t max_message_bytes)
    : request_(max_message_bytes - rpc::kHeaderBytes), response_(max_message_bytes - rpc::kHeaderBytes) {}

void DirectCaller::add(CellServer* server) { servers_.push_back(server); }

StatusOr<std::span<const std::byte>> RpcCaller::call(NodeId server, uint16_t type, size_t payload_bytes) {
  rpc::Writer header(rpc_.payload_buffer().first(kInternalHeaderBytes));
  header.put(tree_key_);
  header.put(type);
  return rpc_.call(server, kInternal, kInternalHeaderBytes + payload_bytes);
}

StatusOr<std::span<const std::byte>> DirectCaller::call(NodeId server, uint16_t type, size_t payload_bytes) {
  for (CellServer* s : servers_) {
    if (s->node_id() != server) continue;
    rpc::Reader r(std::span<const std::byte>(request_.data(), payload_bytes));
    rpc::Writer w(response_);
    LOCUS_RETURN_IF_ERROR(s->handle_internal(type, r, w));  // in process: one of the tree's own
    if (!w.ok()) return internal_error("cell: response exceeds the message limit");
    return std::span<const std::byte>(response_.data(), w.size());
  }
  return unavailable("cell: no server " + std::to_string(server) + " in this process");
}

}  // namespace locus::cell
