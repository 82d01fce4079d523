// The hybrid client (section 5): the tree's inner levels stay on the
// memory servers, partitioned as in the coarse-grained design, and are
// asked by RPC for the leaf a pair belongs to; the leaf level is the
// fine-grained design's, spread over every memory server and read, locked
// and written one-sidedly (remote_access.h). The B-link algorithm is the
// same BlinkTree, run on the leaf level with the RPCs as its upper levels:
// a lookup or range READs the leaf it was given and follows siblings past
// its high key (splits the inner levels do not know of yet); an insert or
// delete locks, installs and unlocks the leaf, and a leaf split reports
// its separator and new leaf to the memory server by RPC. Merged leaves'
// pages are freed with the fine-grained design's epochs across compute
// servers (remote_epochs.h): a client holds leaf pointers the servers
// named, as a fine-grained one holds pointers it read.
#pragma once

#include <memory>
#include <span>

#include "core/index/nam/client.h"
#include "core/index/nam/config.h"
#include "core/index/nam/remote_access.h"
#include "core/index/nam/remote_epochs.h"
#include "core/rpc/rpc_client.h"

namespace locus::nam {

class HybridClient final : public NamClient {
 public:
  // `rpc` fetches the layout and fences lock holders; `index_rpc` (the
  // same RpcClient, or the mailboxes: config.h, rpc_transport) carries
  // the inner levels' RPCs.
  static StatusOr<std::unique_ptr<HybridClient>> connect(Endpoint& ep, rpc::RpcClient& rpc, rpc::Caller& index_rpc,
                                                         std::span<const NodeId> servers, const NamConfig& config,
                                                         Partitioner partitioner);
  Status lookup(uint64_t key, std::vector<uint64_t>* payloads) override;
  Status range(Pair from, uint64_t to_key, uint32_t limit, std::vector<Pair>* out) override;
  Status insert(Pair x) override;
  StatusOr<bool> remove(Pair x) override;
  // Each memory server's partition in turn: its leaves from the leftmost
  // (the leaf of the smallest pair, asked by RPC) along the siblings, each
  // leaf with deleted entries locked, compacted and installed one-sidedly,
  // as a fine-grained pass does (gc.cc); then along them again, a leaf and
  // its sibling that fit in half a leaf merged once the memory server has
  // joined their entries (nam.join; BlinkTree::merge_leaves). The merged
  // pages are freed after the pass's epoch (remote_epochs.h). The memory
  // servers' inner levels are not rebalanced.
  Status collect_garbage() override;
  TreeStats tree_stats() const override { return tree_->stats(); }
  RemoteStats remote_stats() const override { return access_->stats(); }
  Status close() override { return epochs_ != nullptr ? epochs_->release() : Status(); }
  EpochStats epoch_stats() const override { return epochs_ != nullptr ? epochs_->stats() : EpochStats{}; }

 private:
  // The inner levels of one memory server's tree, by RPC.
  class RpcUpper final : public UpperLevels {
   public:
    RpcUpper(rpc::Caller& rpc, std::span<const NodeId> servers)
        : rpc_(rpc), servers_(servers.begin(), servers.end()) {}
    StatusOr<RemotePtr> find_leaf(Pair x) override;
    Status add_separator(Pair sep, RemotePtr right) override;
    StatusOr<bool> join_leaves(Pair high, RemotePtr left, RemotePtr right) override;
    uint32_t servers() const { return static_cast<uint32_t>(servers_.size()); }
    uint32_t server = 0;  // whose tree the operation at hand is in

   private:
    rpc::Caller& rpc_;
    std::vector<NodeId> servers_;
  };

  HybridClient(rpc::Caller& rpc, std::span<const NodeId> servers, Partitioner partitioner)
      : upper_(rpc, servers), partitioner_(partitioner) {}

  RpcUpper upper_;
  Partitioner partitioner_;
  std::unique_ptr<RemoteAccess> access_;
  std::unique_ptr<RemoteEpochs> epochs_;  // before tree_: outlives it
  std::unique_ptr<BlinkTree> tree_;
};

}  // namespace locus::nam
