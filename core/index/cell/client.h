// CellClient: one client's view of a Cell tree spread over servers.
//
// Every operation walks the tree one meganode at a time and, at each
// meganode, asks its Selector which way to do that step:
//  * server-side: one RPC to the meganode's server, which traverses as far
//    as its own memory goes and returns either the result or the pointer to
//    continue at (a meganode on another server);
//  * client-side: RDMA READs of the meganode's nodes one by one. A node is
//    used only if its two versions match and are even (else it is re-read),
//    it is valid (else the search restarts from the root: it was freed by a
//    meganode split) and its min key is not above the key (else restart: it
//    was reused elsewhere); a key at or above its max follows the right
//    link, as in any B-link search. A get fetches the extent with one more
//    READ and checks its CRC64 against the leaf's pointer (re-reading the
//    leaf on a mismatch).
// Writes (put, delete) always go to the server: after a client-side
// search, to the leaf's server with the leaf as the starting point.
//
// The selector learns from every server-side step's latency, every node
// READ's latency and the READs each client-side meganode took.
//
// Caches: an LRU of fetched nodes, bounded in bytes, for nodes at least
// cache_min_distance levels above the leaves (known from each node's local
// and meganode level along the path the traversal took; leaves are never
// cached); following a right link drops the cached parent that pointed too
// far left, and a restart drops the cached nodes the failed attempt used
// and bypasses the caches for the retry. And the path cache of leaf
// meganodes (path_cache.h). Stale entries cost hops or restarts, never a
// wrong answer: a stale inner node only leads to nodes whose own checks
// (valid, min, max) hold at the time they are read.
//
// One client is one actor: not thread-safe. Values returned are views
// valid until the next call on the client.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/aligned_buffer.h"
#include "core/common/torn_read.h"
#include "core/index/cell/node_cache.h"
#include "core/index/cell/path_cache.h"
#include "core/index/cell/protocol.h"
#include "core/rpc/rpc_client.h"
#include "core/selector/selector.h"
#include "core/transport/endpoint.h"

namespace locus::cell {

struct ClientOptions {
  uint64_t node_cache_bytes = 128ull << 20;
  uint32_t cache_min_distance = 4;      // cache nodes at least this many levels above the leaves
  uint32_t path_cache_entries = 4096;
  uint32_t max_restarts = 10'000;       // per operation, then kCorruption
  // Torn copies of one node (or the superblock) in a row, and the pauses
  // between them; then that meganode's step is asked of the server.
  TornReadPolicy torn;
  Nanos busy_backoff_min_ns = 20 * kMicrosecond;
  Nanos busy_backoff_max_ns = 1 * kMillisecond;
  Nanos busy_timeout_ns = 30 * kSecond;  // a write blocked this long fails kUnavailable
  Nanos cpu_node_ns = 0;                 // client CPU charged per node examined (cost models)
};

struct ClientStats {
  uint64_t ops = 0;
  uint64_t server_steps = 0;     // RPC steps the selector chose
  uint64_t client_steps = 0;     // meganodes traversed with RDMA
  uint64_t write_rpcs = 0;       // writes sent after a client-side search
  uint64_t node_reads = 0;
  uint64_t torn_reads = 0;       // version mismatch or odd: re-read
  uint64_t torn_fallbacks = 0;   // meganodes left to the server after torn.max_attempts torn copies of a node
  uint64_t node_cache_hits = 0;
  uint64_t path_cache_hits = 0;
  uint64_t extent_reads = 0;
  uint64_t extent_retries = 0;   // CRC mismatch
  uint64_t restarts = 0;
  uint64_t redirects = 0;
  uint64_t busy_retries = 0;
  uint64_t layout_refreshes = 0;  // layouts fetched again after a failed operation (a takeover)

  ClientStats& operator+=(const ClientStats& o) {
    ops += o.ops;
    server_steps += o.server_steps;
    client_steps += o.client_steps;
    write_rpcs += o.write_rpcs;
    node_reads += o.node_reads;
    torn_reads += o.torn_reads;
    torn_fallbacks += o.torn_fallbacks;
    node_cache_hits += o.node_cache_hits;
    path_cache_hits += o.path_cache_hits;
    extent_reads += o.extent_reads;
    extent_retries += o.extent_retries;
    restarts += o.restarts;
    redirects += o.redirects;
    busy_retries += o.busy_retries;
    layout_refreshes += o.layout_refreshes;
    return *this;
  }
};
static_assert(sizeof(ClientStats) == 15 * sizeof(uint64_t), "operator+= must add every counter");

// Receives range results in key order; return false to stop early.
class RangeSink {
 public:
  virtual ~RangeSink() = default;
  virtual bool accept(std::string_view key, std::string_view value) = 0;
};

class CellClient {
 public:
  // Fetches the layout from `bootstrap` (any server) through `rpc`, which
  // shares `endpoint`. `selector` must outlive the client.
  static StatusOr<std::unique_ptr<CellClient>> connect(Endpoint& endpoint, rpc::RpcClient& rpc,
                                                       NodeId bootstrap, selector::Selector& selector,
                                                       const ClientOptions& options = {});
  ~CellClient();

  StatusOr<bool> contains(std::string_view key);
  // NOT_FOUND if absent.
  StatusOr<std::string_view> get(std::string_view key);
  Status put(std::string_view key, std::string_view value);
  // NOT_FOUND if absent.
  Status remove(std::string_view key);
  // Keys in [start, end) (no end: to the last key), at most `limit`, in
  // order; returns how many were delivered.
  StatusOr<uint64_t> range(std::string_view start, std::optional<std::string_view> end, uint32_t limit,
                           RangeSink& sink);

  const ClientStats& stats() const { return stats_; }
  const Layout& layout() const { return layout_; }
  const NodeCache& node_cache() const { return node_cache_; }
  const PathCache& path_cache() const { return path_cache_; }

 private:
  // kServer: a node (or the superblock) stayed torn for torn.max_attempts
  // READs (its writer descheduled mid-write, or writing it continuously);
  // the server, which sees its own memory consistently, takes the step.
  enum class StepKind { kLeaf, kNext, kRestart, kServer };
  struct Step {
    StepKind kind = StepKind::kRestart;
    uint64_t ptr = kNullPtr;           // kLeaf: the leaf; kNext: where to continue
    const std::byte* node = nullptr;   // kLeaf: its image
  };
  struct TrailEntry {
    uint64_t ptr;
    int32_t slot;            // trail buffer holding the fetched image, -1 if it came from the cache
    uint8_t local_level;
    uint8_t meganode_level;
    bool descended;          // the traversal went down from this node (else right, or it ended)
  };
  // Result of a point operation's final step.
  struct PointResult {
    bool found = false;
    std::string_view value;
  };

  CellClient(Endpoint& endpoint, rpc::RpcClient& rpc, NodeId bootstrap, selector::Selector& selector,
             const ClientOptions& options);
  Status init();

  // client.cc: the per-meganode loop and the server-side steps.
  Status point(OpKind op, std::string_view key, std::string_view value, PointResult* out);
  Status point_once(OpKind op, std::string_view key, std::string_view value, PointResult* out);
  // A failed operation: after a dead server or a moved region, fetch the
  // layout again from any server that answers. Returns `st`.
  Status after_failure(Status st);
  Status refresh_layout();
  StatusOr<uint64_t> range_once(std::string_view start, std::optional<std::string_view> end, uint32_t limit,
                                RangeSink& sink);
  StatusOr<OpResponse> server_step(OpKind op, std::string_view key, std::string_view value, uint64_t start,
                                   bool observe);
  uint64_t start_pointer(std::string_view key);
  Status restart(std::string_view key, uint64_t* ptr);
  Status busy_wait(Nanos* waited, Nanos* backoff);
  void learn_meganode(const MeganodeInfo& m);

  // The path of the next step: the server's after a kServer step, else
  // the selector's choice.
  bool server_takes_step(NodeId server);

  // client_rdma.cc: client-side steps.
  StatusOr<Step> traverse_meganode(std::string_view key, uint64_t ptr);
  StatusOr<const std::byte*> fetch(uint64_t ptr, bool* from_cache);
  StatusOr<uint64_t> read_root();
  // kNotFound absent, kAborted: re-read the leaf.
  Status read_value(std::string_view key, const std::byte* leaf, std::string_view* value);
  Status read_remote(uint64_t ptr, uint32_t bytes, std::byte* into, bool observe);
  void remember_trail();
  void forget_cached();

  // client_range.cc
  // Delivers the leaf's keys from resume_ on (fetching their extents in
  // batches); sets *retry on a CRC mismatch (re-read the leaf), *finished
  // when the range ends here, else *next for the following leaf.
  Status range_leaf_client(const std::byte* leaf, std::optional<std::string_view> end, uint32_t limit,
                           RangeSink& sink, uint64_t* delivered, bool* exclusive, bool* finished,
                           bool* retry, uint64_t* next);
  StatusOr<bool> range_server_step(uint64_t* ptr, bool* exclusive, std::optional<std::string_view> end,
                                   uint32_t limit, RangeSink& sink, uint64_t* delivered);

  Endpoint& endpoint_;
  rpc::RpcClient& rpc_;
  NodeId bootstrap_;
  selector::Selector& selector_;
  ClientOptions options_;
  Layout layout_;
  ClientStats stats_;
  NodeCache node_cache_;
  PathCache path_cache_;

  // Registered scratch: the superblock, trail node images, extents.
  AlignedBuffer buffer_;
  Region region_;
  bool registered_ = false;
  std::byte* superblock_buf_ = nullptr;
  std::byte* trail_buf_ = nullptr;
  std::byte* extent_buf_ = nullptr;
  uint32_t extent_slots_ = 0;

  // Per-operation state.
  std::vector<TrailEntry> trail_;          // capacity kMaxTrail
  std::vector<uint64_t> cached_used_;      // cached nodes this attempt used
  std::vector<WorkRequest> batch_;         // extent READs of one leaf
  std::vector<uint32_t> batch_index_;
  bool use_cache_ = true;
  bool used_path_cache_ = false;
  uint32_t restarts_ = 0;
  bool server_next_ = false;  // the next step goes to the server (a node stayed torn)
  uint64_t root_hint_ = kNullPtr;
  std::string resume_;
};

}  // namespace locus::cell
