// The fine-grained client (section 4.2): the B-link tree algorithm run on
// the compute server over one-sided RDMA (remote_access.h). It learns the
// memory servers' arenas with one layout RPC each when it connects; after
// that no memory server's CPU takes part.
#pragma once

#include <memory>
#include <span>

#include "core/index/nam/client.h"
#include "core/index/nam/config.h"
#include "core/index/nam/remote_access.h"
#include "core/index/nam/remote_epochs.h"

namespace locus::nam {

class FineClient final : public NamClient {
 public:
  static StatusOr<std::unique_ptr<FineClient>> connect(Endpoint& ep, rpc::RpcClient& rpc,
                                                       std::span<const NodeId> servers, const NamConfig& config);
  Status lookup(uint64_t key, std::vector<uint64_t>* payloads) override { return tree_->lookup(key, payloads); }
  Status range(Pair from, uint64_t to_key, uint32_t limit, std::vector<Pair>* out) override {
    return tree_->range(from, to_key, limit, out);
  }
  Status insert(Pair x) override { return tree_->insert(x); }
  StatusOr<bool> remove(Pair x) override { return tree_->remove(x); }
  Status collect_garbage() override { return tree_->collect_garbage(); }
  TreeStats tree_stats() const override { return tree_->stats(); }
  RemoteStats remote_stats() const override { return access_->stats(); }
  Status close() override { return epochs_ != nullptr ? epochs_->release() : Status(); }
  EpochStats epoch_stats() const override { return epochs_ != nullptr ? epochs_->stats() : EpochStats{}; }
  // Null when memory server 0 keeps no epoch slots (index.gc_epoch_slots).
  const RemoteEpochs* epochs() const { return epochs_.get(); }
  // For tests that interpose on node access (a stalling holder).
  RemoteAccess& access() { return *access_; }
  // The tree, for its garbage collection (tree.h): a compute server runs
  // the pass with the same one-sided locks; every client's tree has a
  // RemoteEpochs (remote_epochs.h) that frees merged pages once no
  // client, on any compute server, can hold them.
  BlinkTree& tree() { return *tree_; }

 private:
  std::unique_ptr<RemoteAccess> access_;
  std::unique_ptr<RemoteEpochs> epochs_;  // before tree_: outlives it
  std::unique_ptr<BlinkTree> tree_;
};

// The options a compute server's tree takes from the index's config (head
// nodes, atomic ranges), set here for the fine-grained and hybrid clients
// alike so that neither misses one.
void set_tree_options(BlinkTree& tree, const NamConfig& config);

// The arenas of `servers` by layout RPC, indexed by memory-server id.
StatusOr<std::vector<RemoteRegion>> fetch_layout(rpc::RpcClient& rpc, std::span<const NodeId> servers,
                                                 uint32_t page_bytes);

}  // namespace locus::nam
