// CatfishServer: one Catfish R-tree server (paper sections III-IV). The
// R*-tree Store lives in one region registered for remote READs, so
// offloading clients can walk it; a MessagingServer answers fast-messaging
// requests over RDMA WRITE ring buffers: searches (every intersecting
// rectangle; a large answer goes back as CONT ... END segments), inserts
// and deletes. Writes are always done here, by the server's CPU: the
// Store's versioned node writes and move epoch keep the offloaded readers
// consistent, and a reader-writer lock keeps the server's own searches
// off a tree that one of its workers is changing. The messaging layer
// writes the heartbeats (CPU utilisation every Inv into each client's
// slot) that the clients' back-off selectors read.
//
// Connecting: in-process through accept() (tests, the scenario driver),
// or over RPC through serve_connects() (connect_rpc.h), which a client in
// another process or on another node uses. The connect RPC is served on
// an RpcServer of a node of its own, not on a worker's: a worker's
// completion queue belongs to its messaging loop.
//
// On verbs every worker is a server node of the cluster file, as is the
// connect node: `locus serve --index catfish --workers W` serves nodes
// 0 (connect RPC) and 1..W (workers, the tree's region on node 1) from
// one process. A worker must be a listening node because clients WRITE
// into its rings and it WRITEs back over the queue pairs they opened to
// it; one endpoint per worker gives each its own completion queue, as on
// the other backends (where workers are endpoints sharing one machine).
// All server nodes of the process name a client alike, so the connect
// node's name for a client is the one every worker WRITEs to.
//
// CPU accounting: each handler is charged by the messaging layer under its
// name ("catfish.search", "catfish.insert", "catfish.delete"); a search
// additionally charges result_ns per rectangle it returns (a no-op on real
// backends, where the work itself takes the time), since on the simulator
// a fixed per-name cost cannot tell a 0-hit query from a 5,000-hit one.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/common/short_mutex.h"
#include "core/common/status.h"
#include "core/index/catfish/messaging.h"
#include "core/index/catfish/store.h"
#include "core/rpc/rpc_server.h"

namespace locus::catfish {

// Request types on the messaging layer.
constexpr uint16_t kSearchRequest = 1;
constexpr uint16_t kInsertRequest = 2;
constexpr uint16_t kDeleteRequest = 3;

// Wire sizes: a rectangle is four doubles; a hit adds its 64-bit id.
constexpr uint32_t kRectWireBytes = 32;
constexpr uint32_t kHitWireBytes = kRectWireBytes + 8;

struct CatfishServerOptions {
  StoreOptions store;
  MessagingServerOptions messaging;
  Nanos result_ns = 0;  // simulated CPU per returned rectangle, beyond the handler's cost
};

struct CatfishServerStats {
  uint64_t searches = 0;
  uint64_t hits_returned = 0;
  uint64_t inserts = 0;
  uint64_t deletes = 0;
  uint64_t delete_misses = 0;
  uint64_t truncated = 0;  // searches whose answer did not fit max_response_bytes
  uint64_t connects = 0;            // connect RPCs answered with a connection
  uint64_t connects_refused = 0;    // malformed or hostile requests, or no free slot
};

class CatfishServer {
 public:
  // One messaging worker per Env (each a distinct endpoint); the tree's
  // region is registered on the first worker's transport.
  static StatusOr<std::unique_ptr<CatfishServer>> create(std::vector<Env> worker_envs,
                                                         const CatfishServerOptions& options);
  ~CatfishServer();
  CatfishServer(const CatfishServer&) = delete;
  CatfishServer& operator=(const CatfishServer&) = delete;

  // Bulk load before serving (no messaging, no CPU charge).
  Status load(const Rect& rect, uint64_t id);
  // Connects a client in-process (thread safe).
  StatusOr<ConnectionInfo> accept(const ClientInfo& client) { return messaging_->accept(client); }
  // Answers the connect RPC (kConnectRpc) on `rpc`, a server on a node that
  // no worker uses; `rpc` must not outlive this server.
  Status serve_connects(rpc::RpcServer& rpc);
  // The tree for offloading clients (OffloadClient::connect).
  const RemoteRegion& tree_region() const { return tree_remote_; }
  // Runs worker `worker` until env.stop_requested() (its actor's Env).
  void serve(uint32_t worker, const Env& env) { messaging_->serve(worker, env); }

  uint32_t workers() const { return messaging_->workers(); }
  MessagingServer& messaging() { return *messaging_; }
  CatfishServerStats stats() const;
  StoreStats store_stats() const;
  // Structure check; takes the writer lock (tests, after a run).
  Status check_invariants() const;

 private:
  friend class CatfishServerTestPeer;  // tests reach the store to hold a node locked

  struct Counters {
    std::atomic<uint64_t> searches{0}, hits{0}, inserts{0}, deletes{0}, delete_misses{0}, truncated{0}, connects{0},
        connects_refused{0};
  };
  CatfishServer(const CatfishServerOptions& options, Env setup_env);
  Status init(std::vector<Env> worker_envs);
  Status register_handlers();

  Status search(const MessageContext& ctx, rpc::Reader& request, rpc::Writer& response);
  Status connect(const rpc::RequestContext& ctx, rpc::Reader& request, rpc::Writer& response);
  // Insert or delete (by `type`), under the writer lock.
  Status mutate(uint16_t type, rpc::Reader& request);

  CatfishServerOptions options_;
  Env setup_env_;
  std::unique_ptr<Store> store_;
  Region tree_region_;
  RemoteRegion tree_remote_;
  bool registered_ = false;
  std::unique_ptr<MessagingServer> messaging_;
  // Searches share, mutations exclude; never held across a wait (handlers
  // do not wait, and the per-hit charge happens after unlocking).
  mutable ShortSharedMutex tree_mu_;  // held for in-place tree work only, never across a wait
  std::vector<std::vector<Hit>> scratch_;  // per worker
  std::vector<Env> worker_envs_;
  Counters counters_;
};

// Encodes / decodes a rectangle on the wire.
void put_rect(rpc::Writer& w, const Rect& r);
bool get_rect(rpc::Reader& r, Rect* out);

}  // namespace locus::catfish
