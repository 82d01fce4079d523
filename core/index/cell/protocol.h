// Cell's RPC protocol: request types, the layout clients fetch on connect
// (geometry plus the region table mapping Cell region ids to servers and
// registered regions), and the encodings of the client operations and of
// the server-to-server meganode split steps. Everything is parsed with the
// bounds-checked rpc::Reader; decoders return false on anything malformed.
//
// Every split step is idempotent, so a split driver whose request got no
// reply (timeout, lost connection) sends it again: the steps carry the
// split's id, and a step the server already applied is answered as the
// first time (see each type below).
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/index/cell/layout.h"
#include "core/index/cell/store.h"
#include "core/rpc/message.h"
#include "core/transport/types.h"

namespace locus::cell {

enum RequestType : uint16_t {
  kGetLayout = 1,  // -> Layout
  kOp = 2,         // OpRequest -> OpResponse
  kRange = 3,      // RangeRequest -> RangeResponse, then (blob key, blob value)*
  kGetRoot = 4,    // -> u64 root, u32 level (region 0's server)
  // Source side, on X's server. A re-sent begin gets the same plan; a
  // re-sent finish is answered OK; an abort answers kAlreadyExists if the
  // split finished, which is how a driver learns an unanswered finish's fate.
  kSplitBegin = 10,   // u32 meganode, u64 split id -> SplitPlan
  kSplitScan = 11,    // u32 meganode, blob cursor, u8 exclusive, u32 budget -> u8 done, u8 has_last, blob last, entries
  kSplitFinish = 12,  // u32 meganode, u64 new root, u64 split id
  kSplitAbort = 13,   // u32 meganode, u64 split id
  // Target side: one meganode per split id; chunks numbered from 0, a
  // re-sent chunk skipped. Abandon frees a meganode only until the split
  // that built it declares it live, which it does right after linking it.
  kMeganodeCreate = 14,   // u64 split id, u8 level, bound min, bound max, u64 right -> u64 root
  kMeganodeAppend = 15,   // u64 root, u64 split id, u32 chunk, entries
  kMeganodeSeal = 16,     // u64 root, u64 split id
  kMeganodeAbandon = 17,  // u64 root, u64 split id
  kSetRoot = 18,          // u64 expected, u64 new root, u32 level -> u8 installed (1 again when re-sent)
  kMeganodeCount = 19,    // -> u32 in use, u32 capacity
  // The tree's own servers (split workers) wrap every request in this:
  // u64 tree key, u16 inner type, then the inner request. Types 10-19 and
  // kOp's kInsertChild are served only this way: a client, which never
  // learns the key, cannot reshape or free the tree (issue 16, defect 3).
  kInternal = 20,
  kMeganodeLive = 21,  // u64 root, u64 split id: linked into the tree, never to be abandoned
  // u64 split id, u64 root -> u8: 1 if this server, the split's source,
  // linked that meganode (finished the split, or the superblock names it
  // as root). Asked by a server recovering a region that holds the
  // meganode half built (server_log.cc). Changes nothing.
  kSplitStatus = 22,
  // u16 source region -> u32 n, (u64 root, u64 split id)*n: the meganodes
  // this server holds half built for splits driven by that region's store.
  // Asked by a server that took that store over, whose splits' drivers
  // died (orphans.h). Changes nothing.
  kPendingBuilds = 23,
};
constexpr size_t kInternalHeaderBytes = sizeof(uint64_t) + sizeof(uint16_t);

// Split ids: unique in the tree (the source's node region id above a
// count), increasing per region, so a store can also tell a late copy of
// an old begin from a new split. Never 0. A region id, not the server's
// node id: a region taken over by another server keeps its ids, so its
// log's records and other regions' pending builds still name it.
class SplitIds {
 public:
  explicit SplitIds(CellRegionId source) : base_(uint64_t{source} << 32) {}
  static CellRegionId source_of(uint64_t split_id) { return static_cast<CellRegionId>(split_id >> 32); }
  uint64_t next() { return base_ | next_.fetch_add(1, std::memory_order_relaxed); }
  // After recovery: later ids exceed `id` if it is one of this server's
  // (a store refuses a begin at or below the last one it began).
  void skip_past(uint64_t id) {
    if ((id >> 32) != (base_ >> 32)) return;
    const uint32_t low = static_cast<uint32_t>(id) + 1;
    uint32_t cur = next_.load(std::memory_order_relaxed);
    while (cur < low && !next_.compare_exchange_weak(cur, low, std::memory_order_relaxed)) {
    }
  }

 private:
  uint64_t base_;
  std::atomic<uint32_t> next_{1};
};

enum class OpKind : uint8_t { kContains = 0, kGet = 1, kPut = 2, kDelete = 3, kInsertChild = 4 };
bool is_write(OpKind op);

enum class RegionKind : uint8_t { kNodes = 0, kExtents = 1 };

struct RegionInfo {
  RegionKind kind = RegionKind::kNodes;
  NodeId server = kInvalidNode;
  RemoteRegion remote;
};

struct Layout {
  Geometry geometry;
  uint32_t max_kv_bytes = 0;
  std::vector<RegionInfo> regions;  // indexed by CellRegionId

  const RegionInfo* region(CellRegionId id) const { return id < regions.size() ? &regions[id] : nullptr; }
  // The server holding `ptr`; region 0's server (the bootstrap) for kNullPtr.
  NodeId server_of(uint64_t ptr) const;
  NodeId bootstrap() const { return regions.empty() ? kInvalidNode : regions[0].server; }
  // Every server, once, in region order.
  std::vector<NodeId> servers() const;
};

void encode_layout(const Layout& layout, rpc::Writer& w);
bool decode_layout(rpc::Reader& r, Layout* layout);

void put_bound(rpc::Writer& w, Bound b);
bool get_bound(rpc::Reader& r, Bound* b);

struct OpRequest {
  OpKind op = OpKind::kContains;
  uint8_t level = 0;  // kInsertChild: meganode level of the parent
  uint64_t start = kNullPtr;
  std::string_view key;
  std::string_view value;     // kPut
  uint64_t child = kNullPtr;  // kInsertChild
};
void encode_op_request(const OpRequest& q, rpc::Writer& w);
bool decode_op_request(rpc::Reader& r, OpRequest* q);

struct OpResponse {
  Outcome outcome = Outcome::kDone;
  uint64_t next = kNullPtr;
  bool found = false;
  std::string_view value;
  MeganodeInfo meganode;
  uint32_t nodes_visited = 0;
};
void encode_op_response(const OpResult& r, rpc::Writer& w);
bool decode_op_response(rpc::Reader& r, OpResponse* out);

struct RangeRequest {
  uint64_t start = kNullPtr;
  RangeQuery query;
};
void encode_range_request(const RangeRequest& q, rpc::Writer& w);
bool decode_range_request(rpc::Reader& r, RangeRequest* q);
// The header before the entries of a range response.
void encode_range_header(const RangeResult& r, rpc::Writer& w);
bool decode_range_header(rpc::Reader& r, RangeResult* out);

void encode_plan(const SplitPlan& p, rpc::Writer& w);
bool decode_plan(rpc::Reader& r, SplitPlan* p);

}  // namespace locus::cell
