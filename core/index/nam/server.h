// A NAM memory server: its arena (arena.h) and, for the coarse-grained
// distribution, its own B-link tree served by RPC (section 3.2): each
// request runs the tree algorithm on the server's CPU with optimistic lock
// coupling (local_access.h). The fine-grained distribution only asks it for
// its arena's layout; compute servers do the rest one-sidedly. The hybrid
// one (section 5) keeps its tree's inner levels here and its leaves
// wherever the compute servers placed them: the server names the leaf a
// pair belongs to, inserts the separators of leaf splits and joins the
// entries of leaf merges it is told of, and never touches a leaf (their
// locks are RDMA atomics).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <vector>

#include "core/common/short_mutex.h"
#include "core/index/nam/arena.h"
#include "core/index/nam/config.h"
#include "core/index/nam/local_access.h"
#include "core/index/nam/tree.h"
#include "core/messaging/messaging.h"
#include "core/rpc/rpc_server.h"

namespace locus::nam {

class MemoryServer final : public UpperLevels {
 public:
  static StatusOr<std::unique_ptr<MemoryServer>> create(Env env, uint32_t server, const NamConfig& config);

  // Registers the handlers: layout and fence; then range, insert and
  // remove (coarse-grained) or leaf, separator and join (hybrid), here with
  // index.rpc_transport = "send_recv", else the mailbox RPC that sets up
  // a client's connection to the mailbox server (attach_mailbox).
  Status attach(rpc::RpcServer& rpc, uint32_t message_bytes);
  // index.rpc_transport = "mailbox": the index's handlers on `mailbox`
  // (its workers are the memory server's mailbox endpoints, each served
  // by a daemon: serve_mailbox). Clients connect once it is attached.
  Status attach_mailbox(std::unique_ptr<messaging::MessagingServer> mailbox, uint32_t message_bytes);
  void serve_mailbox(uint32_t worker, const Env& env) { mailbox_.load(std::memory_order_acquire)->serve(worker, env); }
  // Zero without mailboxes.
  messaging::MessagingServerStats mailbox_stats() const;

  // Hybrid: the inner levels' side of the tree (the RPCs', and the
  // loader's before any client runs).
  StatusOr<RemotePtr> find_leaf(Pair x) override;
  Status add_separator(Pair sep, RemotePtr right) override;
  StatusOr<bool> join_leaves(Pair high, RemotePtr left, RemotePtr right) override;

  Arena& arena() { return *arena_; }
  // The coarse-grained tree's access, for the loader (before any actor).
  LocalAccess& local_access() { return *access_; }
  TreeStats tree_stats() const;
  // One garbage-collection pass over this server's tree (tree.h), on its
  // CPU with the local locks the requests use; the requests' tree objects
  // share the reclaimer that frees merged pages. Coarse-grained: the whole
  // tree. Hybrid: the inner levels only (collect_inner_garbage; the
  // leaves are one-sided, a compute server's pass merges them).
  // kUnimplemented for fine-grained (its GC runs on a compute server).
  Status collect_garbage();
  const TreeStats& gc_stats() const { return gc_->stats(); }

 private:
  MemoryServer(Env env, const NamConfig& config) : env_(env), config_(config) {}
  // A tree object (its scratch pages) for one request: the runner's worker
  // actors serve requests concurrently.
  BlinkTree* acquire();
  void release(BlinkTree* t);
  // Where the index's own RPCs are registered: the RpcServer or the mailboxes.
  using Register = std::function<Status(uint16_t type, const char* work, rpc::Handler handler)>;
  Status attach_index(const Register& add, uint32_t message_bytes);
  Status attach_hybrid(const Register& add);

  Env env_;
  NamConfig config_;
  std::unique_ptr<Arena> arena_;
  std::unique_ptr<LocalAccess> access_;
  mutable ShortMutex mu_;
  std::vector<std::unique_ptr<BlinkTree>> trees_;
  std::vector<BlinkTree*> free_;
  // Slots for request trees (one per concurrent request) and the collector.
  static constexpr uint32_t kEpochSlots = 1024;
  std::unique_ptr<LocalReclaimer> reclaimer_ = std::make_unique<LocalReclaimer>(kEpochSlots);
  std::unique_ptr<BlinkTree> gc_;
  ShortMutex gc_mu_;  // one pass at a time
  std::unique_ptr<messaging::MessagingServer> mailbox_owned_;
  std::atomic<messaging::MessagingServer*> mailbox_{nullptr};  // set once its handlers are in
};

}  // namespace locus::nam
