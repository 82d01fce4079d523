// Internals shared by the verbs backend's files: the connection hand-shake
// carried in rdma_cm private data, the encoding of verbs wr_ids, the mapping
// of verbs completion statuses onto the transport contract, and logging.
// Not part of the backend's interface (see verbs_runtime.h for that).
#pragma once

#include <infiniband/verbs.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>

#include "backends/verbs/cluster_config.h"
#include "core/transport/types.h"

namespace locus::verbs {

// Sent by a client in its connect request: who it claims to be and a token
// that tells its reconnects apart from a different client making the same
// claim (see cluster_config.h for the NodeId rules).
struct Hello {
  static constexpr uint32_t kMagic = 0x4C564831;  // "LVH1"
  uint32_t magic = kMagic;
  NodeId claimed = kInvalidNode;
  uint64_t token = 0;
  // kRejoin: the client acknowledges the server's fence (Transport::rejoin).
  static constexpr uint32_t kRejoin = 1;
  uint32_t flags = 0;
};
// How a server's refusal of a fenced client begins (the reject's text), so
// the client knows it must rejoin before it connects again.
inline constexpr const char* kFencedRefusal = "fenced:";
// The server's answer in its accept: the id it uses for the client.
struct Welcome {
  static constexpr uint32_t kMagic = 0x4C565731;  // "LVW1"
  uint32_t magic = kMagic;
  NodeId server = kInvalidNode;
  NodeId assigned = kInvalidNode;
  uint32_t reserved = 0;
};
// rdma_cm carries at most 56 bytes of private data in a connect request.
static_assert(sizeof(Hello) <= 56 && sizeof(Welcome) <= 56);

// verbs wr_ids are ours, not the caller's: they index a slot table that
// remembers the caller's wr_id, opcode and peer, because a failed completion
// reports neither opcode nor anything else reliable besides wr_id. The
// generation tells a late completion of a slot that was already retired
// (its connection was torn down) from the slot's current request.
constexpr uint64_t kRecvBit = 1ULL << 63;
// The generation bits a wr_id carries. A slot's own counter runs on past
// 2^31 uses, so it is compared through this mask (wr_id_of_generation):
// compared whole, every completion of a slot used 2^31 times would look
// stale and be dropped (requests time out, receives are never reposted).
constexpr uint32_t kGenerationMask = 0x7fffffffu;
inline uint64_t encode_wr_id(bool recv, uint32_t generation, uint32_t index) {
  return (recv ? kRecvBit : 0) | (uint64_t{generation & kGenerationMask} << 32) | index;
}
inline bool wr_id_is_recv(uint64_t id) { return (id & kRecvBit) != 0; }
inline uint32_t wr_id_generation(uint64_t id) { return static_cast<uint32_t>(id >> 32) & kGenerationMask; }
inline uint32_t wr_id_index(uint64_t id) { return static_cast<uint32_t>(id); }
// Whether a completion's wr_id is of the request a slot of `generation` holds now.
inline bool wr_id_of_generation(uint64_t id, uint32_t generation) {
  return wr_id_generation(id) == (generation & kGenerationMask);
}

// Maps a verbs completion status onto the contract's. `is_recv` matters:
// a receive too small for its message is reported differently by hardware
// (IBV_WC_LOC_LEN_ERR) and rdma_rxe; all are kLocalLengthError.
WcStatus map_wc_status(ibv_wc_status status, bool is_recv);

// The socket address of a configured server (getaddrinfo, so host names work).
Status resolve_host(const ServerAddress& address, sockaddr_storage* out);

// One line on stderr, prefixed "locus verbs: ".
void log_line(const std::string& line);
// strerror for errno values, thread-safe.
std::string errno_text(int err);

}  // namespace locus::verbs
