// CatfishClient: one client's connection to a Catfish server. Per search a
// Selector picks the path: server-side (fast messaging: the request goes
// into the server's ring by RDMA WRITE, the server walks the tree) or
// client-side (offloading: the client walks the tree itself with
// multi-issued RDMA READs). Inserts and deletes always go by messaging:
// only the server's CPU changes the tree.
//
// Feedback: every selector is handed the connection's heartbeat slot at
// connect (attach_server_feedback; the server writes its CPU utilisation
// there every Inv) and sees observe() with, for a server search, its round
// trip, and for an offloaded one the latency per multi-issue round (a round
// is the client-side step the selector compares with a request) plus the
// rounds via observe_client_step_cost. Not thread-safe: one per client actor.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/common/status.h"
#include "core/index/catfish/catfish_server.h"
#include "core/index/catfish/client_offload.h"
#include "core/index/catfish/connect_rpc.h"
#include "core/index/catfish/messaging.h"
#include "core/messaging/reconnect_backoff.h"
#include "core/rpc/rpc_client.h"
#include "core/selector/selector.h"

namespace locus::catfish {

struct CatfishClientOptions {
  MessagingClientOptions messaging;
  OffloadOptions offload;
  // A broken messaging connection (a request whose fate is unknown, the
  // server's goodbye) is opened again by the next call; a failed attempt
  // waits before the next one, from the first wait doubling up to the last.
  Nanos reconnect_wait_min_ns = 100 * kMicrosecond;
  Nanos reconnect_wait_max_ns = 100 * kMillisecond;
};

struct CatfishClientStats {
  uint64_t server_searches = 0;  // by fast messaging
  uint64_t client_searches = 0;  // by offloading (fallbacks included)
  uint64_t fallbacks = 0;        // offloaded searches given up on contention, then asked of the server
  uint64_t inserts = 0;
  uint64_t deletes = 0;
  uint64_t failures = 0;         // calls that returned an error (NOT_FOUND deletes excluded)
  uint64_t hits = 0;
  uint64_t reconnects = 0;        // broken messaging connections opened again
  uint64_t reconnect_failures = 0;

  CatfishClientStats& operator+=(const CatfishClientStats& o) {
    server_searches += o.server_searches;
    client_searches += o.client_searches;
    fallbacks += o.fallbacks;
    inserts += o.inserts;
    deletes += o.deletes;
    failures += o.failures;
    hits += o.hits;
    reconnects += o.reconnects;
    reconnect_failures += o.reconnect_failures;
    return *this;
  }
};
static_assert(sizeof(CatfishClientStats) == 9 * sizeof(uint64_t), "operator+= must add every counter");

class CatfishClient {
 public:
  // Connects in-process through `server.accept` (the messaging ring) and
  // its tree region (offloading). `selector` must outlive the client, and
  // `server` too (a reconnect asks it again).
  static StatusOr<std::unique_ptr<CatfishClient>> connect(Endpoint& endpoint, CatfishServer& server,
                                                          selector::Selector& selector,
                                                          const CatfishClientOptions& options = {});
  // Connects through the connect RPC (connect_rpc.h) of the server whose
  // connect node is `bootstrap`, in this process or another; `rpc` is this
  // endpoint's and must outlive the client (a reconnect uses it again).
  static StatusOr<std::unique_ptr<CatfishClient>> connect(Endpoint& endpoint, rpc::RpcClient& rpc,
                                                          NodeId bootstrap, selector::Selector& selector,
                                                          const CatfishClientOptions& options = {});

  // Every stored rectangle intersecting `query`, into *out (cleared first),
  // by the path the selector picks. An offloaded search the server's
  // writers keep tearing (OffloadClient's kAborted) is asked of the server
  // instead, which sees its own tree consistently.
  Status search(const Rect& query, std::vector<Hit>* out);
  // The same by a fixed path, bypassing the selector (tests).
  Status search_by(selector::Path path, const Rect& query, std::vector<Hit>* out);
  Status insert(const Rect& rect, uint64_t id);
  // kNotFound if no entry has exactly this rectangle and id.
  Status remove(const Rect& rect, uint64_t id);

  const CatfishClientStats& stats() const { return stats_; }
  const OffloadStats& offload_stats() const { return offload_->stats(); }
  const MessagingClientStats& messaging_stats() const { return messaging_->stats(); }
  selector::Selector& selector() { return selector_; }
  // The node the selector knows the server by (the connection's worker).
  NodeId server_node() const { return messaging_->connection().server; }
  // What the server gave this client: its messaging connection (request
  // ring, id) and the tree's region. The verbs abuse test writes and READs
  // there as a hostile client would.
  const ConnectionInfo& connection() const { return messaging_->connection(); }
  const RemoteRegion& tree_region() const { return offload_->region(); }

 private:
  CatfishClient(Endpoint& endpoint, selector::Selector& selector, const CatfishClientOptions& options)
      : endpoint_(endpoint),
        selector_(selector),
        options_(options),
        reconnect_backoff_(options.reconnect_wait_min_ns, options.reconnect_wait_max_ns) {}
  // Both connects: `exchange` hands the server this client's ClientInfo and
  // returns the connection and the tree's region.
  using Exchange = std::function<StatusOr<ConnectAnswer>(const ClientInfo&)>;
  static StatusOr<std::unique_ptr<CatfishClient>> open(Endpoint& endpoint, selector::Selector& selector,
                                                       const CatfishClientOptions& options, const Exchange& exchange);
  // Opens a broken messaging connection again (reconnect_wait_* between
  // failed attempts); OK when it is not broken.
  Status ensure_connected();
  Status search_server(const Rect& query, std::vector<Hit>* out);
  // The server-path request itself (search_server counts it as chosen).
  Status ask_server(const Rect& query, std::vector<Hit>* out);
  Status search_client(const Rect& query, std::vector<Hit>* out);
  Status write(uint16_t type, const Rect& rect, uint64_t id);

  Endpoint& endpoint_;
  selector::Selector& selector_;
  CatfishClientOptions options_;
  std::unique_ptr<MessagingClient> messaging_;
  std::unique_ptr<OffloadClient> offload_;
  Exchange exchange_;
  messaging::ReconnectBackoff reconnect_backoff_;
  CatfishClientStats stats_;
};

}  // namespace locus::catfish
