// OffloadClient: Catfish's RDMA offloading search. The client walks the
// server's R*-tree itself with one-sided READs and never uses the server's
// CPU: it reads the header line for the root, then, level by level, READs
// every child whose MBR intersects the query in one multi-issued batch (the
// paper's multi-issue: no dependency between siblings, so their round trips
// overlap in the NICs and the link).
//
// Consistency, from layout.h: a copy whose line versions disagree is torn
// and read again (bounded); a search is accepted only if the header's move
// epoch was even and unchanged from before the traversal to after it, else
// it restarts (bounded), because entries may have moved between nodes
// under it. A node that is consistent but not what its parent promised (a
// freed or reused slot, a wrong level) means the same: restart.
//
// No allocation per node: the batch's buffers and work requests are fixed
// at connect, the pending stack and the caller's result vector are reused.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/common/aligned_buffer.h"
#include "core/common/status.h"
#include "core/common/torn_read.h"
#include "core/index/catfish/layout.h"
#include "core/index/catfish/store.h"
#include "core/transport/endpoint.h"

namespace locus::catfish {

// READs one batch multi-issues: each is one outstanding send work request,
// so it must fit the send queue of every backend (loopback and verbs keep
// at least this many; connect() checks the transport's limit).
constexpr uint32_t kMaxReadsPerBatch = 16;
// The named work (Cpu::charge_work) of examining a READ batch's nodes.
inline constexpr const char* kClientNodeWork = "catfish.client_node";
static_assert(kMaxReadsPerBatch >= 1 && kMaxReadsPerBatch <= 64, "a batch is a short burst of READs");

struct OffloadOptions {
  // READs of one node (or the header) that may all be torn before giving
  // up, and the pauses between them; the pauses also space out header
  // reads that keep finding the move epoch odd.
  TornReadPolicy torn;
  uint32_t max_restarts = 4096;   // traversals a search may restart because the tree moved
  // READs posted at once (up to kMaxReadsPerBatch): the paper's
  // multi-issue (section IV-C); 1 fetches one node at a time.
  uint32_t max_batch = kMaxReadsPerBatch;
};

struct OffloadStats {
  uint64_t searches = 0;
  uint64_t node_reads = 0;
  uint64_t batches = 0;
  uint64_t torn_reads = 0;
  uint64_t restarts = 0;

  OffloadStats& operator+=(const OffloadStats& o) {
    searches += o.searches;
    node_reads += o.node_reads;
    batches += o.batches;
    torn_reads += o.torn_reads;
    restarts += o.restarts;
    return *this;
  }
};
static_assert(sizeof(OffloadStats) == 5 * sizeof(uint64_t), "operator+= must add every counter");

class OffloadClient {
 public:
  // `region` is the server's node region (registered kRemoteRead); the
  // geometry comes from its header.
  static StatusOr<std::unique_ptr<OffloadClient>> connect(Endpoint& endpoint, const RemoteRegion& region,
                                                          OffloadOptions options = {});
  ~OffloadClient();
  OffloadClient(const OffloadClient&) = delete;
  OffloadClient& operator=(const OffloadClient&) = delete;
  const RemoteRegion& region() const { return remote_; }

  // Every stored entry intersecting `query`, into *out (cleared first).
  // kAborted if the tree kept moving for max_restarts traversals or a node
  // (or the header) stayed locked for torn.max_attempts READs in a row: both
  // are contention the server side resolves, so a caller can ask it
  // instead (CatfishClient does).
  Status search(const Rect& query, std::vector<Hit>* out);

  const OffloadStats& stats() const { return stats_; }
  const Geometry& geometry() const { return g_; }

 private:
  struct Pending {
    uint64_t off;
    uint32_t level;
    uint32_t torn;  // torn copies of this node so far
  };
  enum class Pass { kDone, kMoved };

  OffloadClient(Endpoint& endpoint, const RemoteRegion& region, OffloadOptions options);
  Status read_header(HeaderInfo* out);
  // One traversal from the root; kMoved if a node was not what its parent said.
  StatusOr<Pass> traverse(const Rect& query, const HeaderInfo& h, std::vector<Hit>* out);

  Endpoint& endpoint_;
  RemoteRegion remote_;
  OffloadOptions options_;
  Geometry g_;
  uint32_t batch_limit_ = kMaxReadsPerBatch;
  AlignedBuffer buffer_;  // header line, then kMaxReadsPerBatch node images
  Region region_;
  bool registered_ = false;
  std::array<WorkRequest, kMaxReadsPerBatch> wrs_;
  std::array<Pending, kMaxReadsPerBatch> inflight_;
  std::vector<Pending> pending_;  // a stack: depth first, so it stays small
  OffloadStats stats_;
};

}  // namespace locus::catfish
