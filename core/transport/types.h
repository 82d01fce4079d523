// Value types of the transport seam: node ids, access rights, local and
// remote regions, addresses, work requests and completions. They mirror the
// verbs model (RC queue pairs, lkey/rkey) closely enough that the verbs
// backend maps them one to one, and stay plain enough for the loopback and
// SimGrid backends to interpret directly.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/common/status.h"

namespace locus {

// One transport endpoint: a server, or one client (thread or actor).
using NodeId = uint32_t;
constexpr NodeId kInvalidNode = UINT32_MAX;

// A registration on one node; ids are never reused within a run, so an
// address that names a deregistered region can never reach a newer one.
using RegionId = uint32_t;
constexpr RegionId kInvalidRegion = UINT32_MAX;

// Access rights of a registered region, as verbs defines them. Local access
// is implied; a region that clients only read is registered kRemoteRead.
enum Access : uint32_t {
  kLocalOnly = 0,
  kRemoteRead = 1u << 0,
  kRemoteWrite = 1u << 1,
  kRemoteAtomic = 1u << 2,
};
constexpr Access operator|(Access a, Access b) {
  return static_cast<Access>(static_cast<uint32_t>(a) | static_cast<uint32_t>(b));
}

// What a remote peer needs to reach a region: exchanged over RPC after
// connecting. base_addr is the target's virtual address (used by verbs).
struct RemoteRegion {
  NodeId node = kInvalidNode;
  RegionId region = kInvalidRegion;
  uint32_t rkey = 0;
  uint64_t base_addr = 0;
  uint64_t length = 0;
};

// A byte in a remote region: (node, region, offset), plus the rkey that
// authorises it. The target checks region, rkey, bounds and rights.
struct RemoteAddr {
  NodeId node = kInvalidNode;
  RegionId region = kInvalidRegion;
  uint32_t rkey = 0;
  uint64_t base_addr = 0;
  uint64_t offset = 0;

  RemoteAddr plus(uint64_t delta) const {
    RemoteAddr a = *this;
    a.offset += delta;
    return a;
  }
};

inline RemoteAddr remote_at(const RemoteRegion& r, uint64_t offset) {
  return RemoteAddr{r.node, r.region, r.rkey, r.base_addr, offset};
}

// A region registered on this node. Keep it to deregister; publish
// remote() to peers that should reach it.
struct Region {
  NodeId node = kInvalidNode;
  RegionId id = kInvalidRegion;
  uint32_t lkey = 0;
  uint32_t rkey = 0;
  std::byte* base = nullptr;
  uint64_t length = 0;
  Access access = kLocalOnly;

  RemoteRegion remote() const {
    return RemoteRegion{node, id, rkey, reinterpret_cast<uint64_t>(base), length};
  }
  bool contains(const void* p, uint64_t len) const {
    auto* b = static_cast<const std::byte*>(p);
    return b >= base && len <= length && static_cast<uint64_t>(b - base) <= length - len;
  }
};

// A local buffer inside a registered region (source of WRITE/SEND,
// destination of READ and of the old value of CAS/FAA).
struct LocalBuf {
  void* addr = nullptr;
  uint32_t length = 0;
  uint32_t lkey = 0;
};

enum class Opcode : uint8_t {
  kRead,
  kWrite,
  kWriteWithImm,  // WRITE, then consumes a posted receive at the target carrying imm
  kCas,           // 8-byte compare-and-swap; local buffer receives the old value
  kFaa,           // 8-byte fetch-and-add; local buffer receives the old value
  kSend,          // consumes a posted receive at remote.node
  kRecv,          // only in completions
};
std::string_view opcode_name(Opcode op);

struct WorkRequest {
  uint64_t wr_id = 0;
  Opcode op = Opcode::kRead;
  RemoteAddr remote;       // target; for SEND only remote.node is used
  LocalBuf local;
  uint64_t compare_add = 0;  // CAS: expected value; FAA: addend
  uint64_t swap = 0;         // CAS: new value
  uint32_t imm = 0;          // WRITE_WITH_IMM (and SEND with has_imm)
  bool signaled = true;      // unsignaled requests produce a completion only on error
  // Starts only once every earlier READ and atomic of this endpoint's
  // queue to the same peer has completed (IBV_SEND_FENCE, ibv_post_send(3)).
  // Without it a NIC may serve a batch's READs in any order relative to
  // the target's memory writes. Loopback and SimGrid serve a queue's
  // requests one after another, which satisfies every fence (the simulator
  // charges no extra round trip for it).
  bool fence = false;
};

struct RecvRequest {
  uint64_t wr_id = 0;
  LocalBuf local;
};

enum class WcStatus : uint8_t {
  kSuccess,
  kRemoteAccessError,     // bounds, rkey or rights check failed at the target
  kRemoteOperationError,  // target could not execute (misaligned atomic, recv too small)
  kLocalLengthError,      // receive buffer too small for the incoming message
  kRetryExceeded,         // peer unreachable or dead
  kRnrRetryExceeded,      // no receive posted at the target within the RNR budget
  kFlushed,               // request flushed (endpoint shut down)
};
std::string_view wc_status_name(WcStatus s);

struct Completion {
  uint64_t wr_id = 0;
  Opcode op = Opcode::kRead;
  WcStatus status = WcStatus::kSuccess;
  NodeId peer = kInvalidNode;  // the other side of the operation
  uint32_t byte_len = 0;       // receives: bytes delivered
  uint32_t imm = 0;
  bool has_imm = false;

  bool ok() const { return status == WcStatus::kSuccess; }
};

// A Status describing a failed completion, naming the peer and operation.
Status completion_error(const Completion& c);

// The checks every backend makes at post time on one work request:
// opcode, atomic operand size, message size and (as `local_ok`, computed
// by the backend) whether the local buffer lies in a registration. The
// message names the endpoint and the request; nothing is built on success.
Status check_work_request(const WorkRequest& wr, uint32_t max_message_bytes, bool local_ok,
                          std::string_view endpoint);

// The right a one-sided request needs on its target region (kLocalOnly for
// messages, which need only a posted receive).
constexpr Access required_access(Opcode op) {
  switch (op) {
    case Opcode::kRead: return kRemoteRead;
    case Opcode::kWrite:
    case Opcode::kWriteWithImm: return kRemoteWrite;
    case Opcode::kCas:
    case Opcode::kFaa: return kRemoteAtomic;
    default: return kLocalOnly;
  }
}

// True if [offset, offset + length) lies within a region of region_length
// bytes, without overflow for any inputs.
constexpr bool range_within(uint64_t offset, uint64_t length, uint64_t region_length) {
  return length <= region_length && offset <= region_length - length;
}

}  // namespace locus
