// A NAM compute server's client: the index's four operations, by RPC to
// the memory servers that own the keys (coarse-grained, CoarseClient),
// one-sidedly over the one global tree (fine-grained, FineClient in
// fine_client.h), or both (hybrid, HybridClient in hybrid_client.h).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/index/nam/layout.h"
#include "core/index/nam/protocol.h"
#include "core/index/nam/tree.h"
#include "core/rpc/caller.h"

namespace locus::nam {

// A one-sided client's counters (a run reports them: session.cc).
struct RemoteStats {
  uint64_t reads = 0;
  uint64_t locked_copies = 0;   // the lock bit was set: re-read
  uint64_t torn_copies = 0;     // unlocked but inconsistent: re-read
  uint64_t broken_locks = 0;    // leases that ran out, taken over
  uint64_t lease_give_ups = 0;  // installs given up for want of lease
  uint64_t fences = 0;          // holders fenced before their lock was broken
  uint64_t fenced = 0;          // times this client found itself fenced (and rejoined)
  uint64_t read_batches = 0;    // head-node prefetches: one post each
  uint64_t batched_reads = 0;   // READs in them
};

class NamClient {
 public:
  virtual ~NamClient() = default;
  // Every live payload of `key`, ascending.
  virtual Status lookup(uint64_t key, std::vector<uint64_t>* payloads) = 0;
  // Live pairs >= from with key <= to_key, ascending, at most `limit` (0: all).
  virtual Status range(Pair from, uint64_t to_key, uint32_t limit, std::vector<Pair>* out) = 0;
  virtual Status insert(Pair x) = 0;
  virtual StatusOr<bool> remove(Pair x) = 0;
  virtual TreeStats tree_stats() const { return {}; }
  // A garbage-collection pass from this compute server (fine-grained: the
  // global tree's removal and merges; hybrid: the removal of deleted
  // entries from every partition's leaves). Coarse-grained: the memory
  // servers collect their own trees.
  virtual Status collect_garbage() {
    return unimplemented("nam: the coarse-grained memory servers collect their own trees");
  }
  // One-sided node access and its leased locks (fine-grained, hybrid).
  virtual RemoteStats remote_stats() const { return {}; }
  // Fine-grained reclamation across compute servers (remote_epochs.h).
  virtual EpochStats epoch_stats() const { return {}; }
  // The client is done (its session closes): gives back what it holds on
  // the memory servers (fine-grained: its epoch slot).
  virtual Status close() { return Status(); }
};

// A range over trees partitioned by `partitioner`: `share(server, limit)`
// appends that server's pairs of the range (at most `limit`, 0: all); the
// servers go in key order (range partitioning, stopping at the limit) or
// all of them, merged (hash partitioning).
Status partitioned_range(const Partitioner& partitioner, Pair from, uint32_t limit, std::vector<Pair>* out,
                         const std::function<Status(uint32_t server, uint32_t limit)>& share);

class CoarseClient final : public NamClient {
 public:
  // `rpc`: SEND/RECV's RpcClient or the mailboxes (config.h, rpc_transport).
  CoarseClient(rpc::Caller& rpc, std::span<const NodeId> servers, Partitioner partitioner)
      : rpc_(rpc), servers_(servers.begin(), servers.end()), partitioner_(partitioner) {}
  Status lookup(uint64_t key, std::vector<uint64_t>* payloads) override;
  Status range(Pair from, uint64_t to_key, uint32_t limit, std::vector<Pair>* out) override;
  Status insert(Pair x) override;
  StatusOr<bool> remove(Pair x) override;

 private:
  // One server's share of a range, over as many responses as it takes.
  Status server_range(uint32_t server, Pair from, uint64_t to_key, uint32_t limit, std::vector<Pair>* out);
  StatusOr<std::span<const std::byte>> call_pair(uint16_t type, Pair x);

  rpc::Caller& rpc_;
  std::vector<NodeId> servers_;
  Partitioner partitioner_;
  std::vector<Pair> merge_;
};

}  // namespace locus::nam
