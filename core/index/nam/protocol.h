// The NAM index's wire protocol and key mapping: the coarse-grained RPCs
// a memory server answers (range, insert, remove over its own tree; layout
// for the fine-grained clients), the mapping of YCSB's "user<number>" keys
// to 8-byte keys, and the partitioning of keys over memory servers. The
// hybrid design's RPCs serve its inner levels only (section 5).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/index/nam/config.h"
#include "core/index/nam/layout.h"
#include "core/rpc/message.h"
#include "core/workload/workload_spec.h"

namespace locus::nam {

inline constexpr uint16_t kRangeRpc = 1;   // (from key, from payload, to key, limit) -> (more, count, pairs)
inline constexpr uint16_t kInsertRpc = 2;  // (key, payload) -> ()
inline constexpr uint16_t kRemoveRpc = 3;  // (key, payload) -> (found)
inline constexpr uint16_t kLayoutRpc = 4;  // () -> (server, page_bytes, arena region)
// Hybrid: the leaf a pair belongs to (or one left of it), and a leaf split.
inline constexpr uint16_t kLeafRpc = 5;       // (key, payload) -> (leaf pointer)
inline constexpr uint16_t kSeparatorRpc = 6;  // (separator key, payload, right leaf pointer) -> ()
// A lock breaker's request that the memory server fence the holder off
// its memory first (remote_access.h, "Leases").
inline constexpr uint16_t kFenceRpc = 7;  // (holder's NodeId) -> ()
// index.rpc_transport = "mailbox": a client's mailbox at this memory
// server (core/messaging/wire.h: ClientInfo -> ConnectionInfo).
inline constexpr uint16_t kMailboxRpc = 8;
// Hybrid garbage collection: a leaf merge's parent change
// (UpperLevels::join_leaves).
inline constexpr uint16_t kJoinRpc = 9;  // (left's high key, payload, left, right) -> (joined: u8)
inline constexpr const char* kRangeWork = "nam.range";
inline constexpr const char* kInsertWork = "nam.insert";
inline constexpr const char* kRemoveWork = "nam.remove";
inline constexpr const char* kLayoutWork = "nam.layout";
inline constexpr const char* kLeafWork = "nam.leaf";
inline constexpr const char* kSeparatorWork = "nam.separator";
inline constexpr const char* kFenceWork = "nam.fence";
inline constexpr const char* kMailboxWork = "nam.mailbox";
inline constexpr const char* kJoinWork = "nam.join";
// A coarse-grained memory server's garbage-collection pass, charged to its
// CPU by the bytes of the leaves it walked (not an RPC: the server's daemon).
inline constexpr const char* kGcWork = "nam.gc";
// A hybrid memory server's pass over its inner levels, charged by the
// bytes of the inner nodes its merges read.
inline constexpr const char* kInnerGcWork = "nam.inner_gc";

// Bytes of a range response before its pairs.
inline constexpr uint32_t kRangeResponseHead = 8;

// The pairs a range response of `message_bytes` (header included) holds.
inline uint32_t pairs_per_response(uint32_t message_bytes) {
  return (message_bytes - rpc::kHeaderBytes - kRangeResponseHead) / 16;
}

// "user<digits>" (YCSB's keys) -> the number; anything else is refused.
StatusOr<uint64_t> key_number(std::string_view key);

// The workload key naming index key k ("user<k>"): what histories record
// under index.key_skew, where workload keys may share an index key.
inline std::string index_key_name(uint64_t k) { return "user" + std::to_string(k); }

// index.key_skew's text, "0.8,0.12,0.05,0.03": shares in (0, 1] summing to 1.
StatusOr<std::vector<double>> parse_shares(std::string_view text);

// The memory servers a coarse-grained key or range goes to.
class Partitioner {
 public:
  // Range partitioning splits the workload's key numbers evenly: the
  // whole 64-bit space for hashed insert order, [0, recordcount) for
  // ordered (later inserts land on the last server). `key_skew`
  // (config.h), one share per server or empty, skews the keys.
  Partitioner(Partitioning how, uint32_t servers, const workload::WorkloadSpec& spec,
              std::vector<double> key_skew = {});
  // The index key of a workload key number (key_number): itself without
  // key_skew; with it, monotone, memory server i's range taking
  // key_skew[i] of the numbers.
  uint64_t key_of(uint64_t number) const;
  bool skewed() const { return !cumulative_.empty(); }
  // The name a history records for workload key `key`: itself, or with
  // key_skew the index key's (two workload keys may share one).
  StatusOr<std::string> history_key(std::string_view key) const;
  uint32_t server_of(uint64_t key) const;
  // The servers a range from `from` may touch, in key order (every server
  // for hash partitioning).
  std::vector<uint32_t> servers_from(uint64_t from) const;
  Partitioning how() const { return how_; }

 private:
  Partitioning how_;
  uint32_t servers_;
  uint64_t span_;  // keys per server (range partitioning)
  std::vector<double> cumulative_;  // key_skew's running sums, from 0; empty: no skew
};

// The next pair after x in pair order; false past the last one.
inline bool next_pair(Pair x, Pair* out) {
  if (x.payload != ~0ull) {
    *out = {x.key, x.payload + 1};
    return true;
  }
  if (x.key == ~0ull) return false;
  *out = {x.key + 1, 0};
  return true;
}

}  // namespace locus::nam
