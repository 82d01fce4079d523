// The NAM index's driver: a MemoryServer per server endpoint (the memory
// servers), a NamSession per client (the compute servers' threads).
// Coarse-grained: each server loads and serves its own tree over its
// partition of the keys. Fine-grained: the load builds the one global
// tree over every server's arena, in this process, before any client runs.
// Hybrid: each server's inner levels take the load's leaf splits as they
// would a client's, the leaves spread over every server's arena.
// index.gc_interval_ms: a daemon per memory server (coarse) or the first
// client session (fine and hybrid, a compute server) runs a GC pass that
// often.
// index.rpc_transport = "mailbox": each memory server machine has, after
// the endpoint of its RpcServer (layout, fence, the mailbox set-up),
// index.mailbox_workers mailbox worker endpoints (one per core by
// default), each served by a daemon (core/messaging); a client connects to
// every memory server's mailboxes and sends its index RPCs there.
#include <algorithm>
#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "core/check/models.h"
#include "core/design/index_driver.h"
#include "core/design/record_loader.h"
#include "core/index/nam/client.h"
#include "core/index/nam/config.h"
#include "core/index/nam/fine_client.h"
#include "core/index/nam/hybrid_client.h"
#include "core/index/nam/server.h"
#include "core/index/nam/session.h"
#include "core/messaging/mailbox.h"
#include "core/messaging/wire.h"

namespace locus::nam {
namespace {

class NamDriver final : public design::IndexDriver {
 public:
  // `count_marked`: walk the trees for nam.deleted_entries_left after the
  // run; not with injected faults, after which a lock may be left held
  // (a lost unlock, a crashed client): the walk's reads would wait for it
  // forever, and on SimGrid outside an actor (fault_campaign nam-fine
  // aborted there).
  NamDriver(const NamConfig& config, const scenario::Scenario& s, bool count_marked)
      : config_(config),
        servers_count_(static_cast<uint32_t>(s.platform.servers)),
        partitioner_(config.partitioning, servers_count_, s.workload, config.key_skew),
        count_marked_(count_marked) {
    if (config.rpc_transport != RpcTransport::kMailbox) return;
    mailbox_workers_ = config.mailbox_workers != 0 ? config.mailbox_workers
                                                   : std::max<uint32_t>(1, s.platform.cores_per_server);
    // Payloads as large as SEND/RECV's, so a range response holds as many
    // pairs on either transport (protocol.h, pairs_per_response).
    const uint32_t payload = rpc_message_bytes() - rpc::kHeaderBytes;
    // Four of the largest message: one always fits after a wrap, and a
    // client's next request finds room before the head is published.
    const uint32_t ring = 4 * ring::message_bytes(payload);
    messaging::MessagingServerOptions& m = mailbox_server_;
    m.mode = config.mailbox_polling ? messaging::ServerMode::kPolling : messaging::ServerMode::kEvent;
    // Every client connects to every memory server once; slack for
    // reconnections while a dropped slot waits to be reclaimed.
    m.connections_per_worker = static_cast<uint32_t>(s.run.clients / mailbox_workers_) + 4;
    m.request_ring_bytes = ring;
    m.segment_bytes = ring::round_up8(payload);
    m.max_response_bytes = payload;
    m.heartbeat_interval_ns = 0;  // no selector reads them
    messaging::MessagingClientOptions& c = mailbox_client_;
    c.response_ring_bytes = ring;
    c.max_request_bytes = payload;
    c.max_response_bytes = payload;
    c.recv_buffers = 8;  // one response in flight; the rest for late ones
  }

  std::vector<design::EndpointSpec> server_endpoints() const override {
    std::vector<design::EndpointSpec> e{design::EndpointSpec{}};
    for (uint32_t w = 0; w < mailbox_workers_; ++w) e.push_back({".mailbox" + std::to_string(w), false});
    return e;
  }

  Status setup_server(uint32_t endpoint, Env env, rpc::RpcServer& rpc) override {
    const uint32_t m = endpoint / per_server(), k = endpoint % per_server();
    if (k == 0) {
      LOCUS_ASSIGN_OR_RETURN(auto server, MemoryServer::create(env, m, config_));
      LOCUS_RETURN_IF_ERROR(server->attach(rpc, rpc_message_bytes()));
      if (servers_.size() <= m) servers_.resize(m + 1);
      servers_[m] = std::move(server);
      mailbox_envs_.clear();
      clock_ = env.clock;
      return Status();
    }
    if (servers_.size() != m + 1) return internal_error("nam: a memory server's endpoints set up out of order");
    mailbox_envs_.push_back(env);
    if (k < mailbox_workers_) return Status();
    LOCUS_ASSIGN_OR_RETURN(auto mailbox, messaging::MessagingServer::create(mailbox_envs_, mailbox_server_));
    return servers_[m]->attach_mailbox(std::move(mailbox), rpc_message_bytes());
  }

  Status load(const workload::WorkloadSpec& spec, Random& rng) override {
    if (servers_.size() != servers_count_) return internal_error("nam load: not every memory server is set up");
    std::vector<std::unique_ptr<LocalAccess>> own;
    std::vector<std::unique_ptr<BlinkTree>> trees;
    std::vector<Arena*> arenas;
    for (auto& s : servers_) arenas.push_back(&s->arena());
    if (config_.distribution == Distribution::kFine) {
      own.push_back(std::make_unique<LocalAccess>(arenas, *clock_));
      LOCUS_RETURN_IF_ERROR(BlinkTree::create_empty(*own.back()));
      trees.push_back(std::make_unique<BlinkTree>(*own.back()));
    } else if (config_.distribution == Distribution::kHybrid) {
      own.push_back(std::make_unique<LocalAccess>(arenas, *clock_));
      for (auto& s : servers_) trees.push_back(std::make_unique<BlinkTree>(*own.back(), s.get()));
    } else {
      for (auto& s : servers_) trees.push_back(std::make_unique<BlinkTree>(s->local_access()));
    }
    LOCUS_RETURN_IF_ERROR(design::load_records(spec, rng, [&](std::string_view key, std::string_view value) -> Status {
      LOCUS_ASSIGN_OR_RETURN(uint64_t number, key_number(key));
      const uint64_t k = partitioner_.key_of(number);
      const uint32_t t = config_.distribution == Distribution::kFine ? 0 : partitioner_.server_of(k);
      ++loaded_;
      return trees[t]->insert({k, check::value_digest(value)});
    }));
    // The loaded leaf levels start with up-to-date head nodes; the
    // clients' scans rebuild them lazily after that (tree.h).
    if (config_.distribution == Distribution::kCoarse) return Status();
    for (auto& t : trees) {
      t->set_head_interval(config_.head_node_interval);
      LOCUS_RETURN_IF_ERROR(t->rebuild_head_nodes());
    }
    return Status();
  }

  std::vector<design::DaemonSpec> server_daemons(uint32_t endpoint) override {
    const uint32_t m = endpoint / per_server(), k = endpoint % per_server();
    MemoryServer* server = servers_[m].get();
    if (k > 0) {
      // The mailbox worker of this endpoint; polling ones busy-poll a core.
      return {{"server" + std::to_string(m) + ".mailbox" + std::to_string(k - 1), false,
               [server, k](Env& env) { server->serve_mailbox(k - 1, env); }, config_.mailbox_polling}};
    }
    if (config_.gc_interval_ms <= 0 || config_.distribution == Distribution::kFine) return {};
    // Coarse: the whole tree, by the bytes of the leaves walked; hybrid:
    // the inner levels, by the bytes of the inner nodes read.
    const bool coarse = config_.distribution == Distribution::kCoarse;
    const auto interval_ns = static_cast<Nanos>(config_.gc_interval_ms * 1e6);
    return {{"server" + std::to_string(m) + ".gc", false, [this, server, interval_ns, coarse](Env& env) {
               Nanos next_ns = env.clock->now() + interval_ns;
               while (!env.stop_requested()) {
                 const Nanos now = env.clock->now();
                 if (now < next_ns) {
                   // Wakes at least every 10 ms to see the run's end.
                   env.clock->sleep_for(std::min<Nanos>(next_ns - now, 10 * kMillisecond));
                   continue;
                 }
                 const WorkTimer timer(env);
                 auto walked = [&] {
                   return coarse ? server->gc_stats().gc_leaves_read : server->gc_stats().gc_inner_read;
                 };
                 const uint64_t before = walked();
                 if (!server->collect_garbage().is_ok()) gc_failures_.fetch_add(1, std::memory_order_relaxed);
                 // The pass's CPU, by the bytes of the nodes it walked (a
                 // pass costs what the tree's size makes it).
                 env.cpu->charge_work(coarse ? kGcWork : kInnerGcWork, timer.elapsed(),
                                      (walked() - before) * config_.page_bytes);
                 next_ns = env.clock->now() + interval_ns;
               }
             }}};
  }

  StatusOr<std::unique_ptr<design::ClientSession>> connect(Env& env, Endpoint& ep, rpc::RpcClient& rpc,
                                                           std::span<const NodeId> endpoints) override {
    if (endpoints.size() != uint64_t{servers_count_} * per_server()) {
      return invalid_argument("nam: " + std::to_string(endpoints.size()) + " server endpoints reachable, " +
                              std::to_string(servers_count_) + " memory servers of " + std::to_string(per_server()) +
                              " configured");
    }
    // Each memory server's first endpoint: its RpcServer.
    std::vector<NodeId> servers;
    for (uint32_t m = 0; m < servers_count_; ++m) servers.push_back(endpoints[m * per_server()]);
    std::unique_ptr<messaging::MailboxCaller> mailboxes;
    rpc::Caller* index_rpc = &rpc;
    if (mailbox_workers_ > 0) {
      // The exchange runs again on a reconnection, long after this call:
      // it keeps its own copy of the servers (`rpc` is the session's).
      auto set_up = [&rpc, servers](uint32_t i, const messaging::ClientInfo& info, uint32_t replaces) {
        return exchange(rpc, servers[i], info, replaces);
      };
      LOCUS_ASSIGN_OR_RETURN(mailboxes, messaging::MailboxCaller::connect(ep, servers, mailbox_client_, set_up));
      index_rpc = mailboxes.get();
    }
    std::unique_ptr<NamClient> client;
    // Fine-grained and hybrid: one compute server's session collects (the
    // first to connect).
    const bool collects = config_.gc_interval_ms > 0 && config_.distribution != Distribution::kCoarse &&
                          !collector_taken_.exchange(true);
    if (config_.distribution == Distribution::kFine) {
      LOCUS_ASSIGN_OR_RETURN(client, FineClient::connect(ep, rpc, servers, config_));
    } else if (config_.distribution == Distribution::kHybrid) {
      LOCUS_ASSIGN_OR_RETURN(client, HybridClient::connect(ep, rpc, *index_rpc, servers, config_, partitioner_));
    } else {
      client = std::make_unique<CoarseClient>(*index_rpc, servers, partitioner_);
    }
    auto session = std::make_unique<NamSession>(std::move(client), &partitioner_, std::move(mailboxes));
    if (collects) session->collect_garbage_every(env.clock, static_cast<Nanos>(config_.gc_interval_ms * 1e6));
    return std::unique_ptr<design::ClientSession>(std::move(session));
  }

  void report_mechanism(const metrics::OpStats& clients, std::map<std::string, double>& extra) const override {
    // One-sided page READs per operation (fine-grained and hybrid leaves;
    // 0 for coarse-grained, whose traversals run on the memory servers).
    design::add_ratio(extra, "nam.page_reads_per_op", clients, "nam.page_reads", "nam.ops");
  }

  void report_servers(std::map<std::string, double>& extra) const override {
    if (auto levels = tree_levels(); levels.is_ok()) extra["nam.tree_levels"] = *levels;
    double used = 0, splits = 0, restarts = 0;
    for (const auto& s : servers_) {
      used += static_cast<double>(s->arena().used_bytes());
      const TreeStats t = s->tree_stats();
      splits += static_cast<double>(t.splits);
      restarts += static_cast<double>(t.restarts);
    }
    extra["nam.loaded_pairs"] = static_cast<double>(loaded_);
    extra["nam.arena_used_bytes"] = used;
    extra["nam.server_splits"] = splits;
    extra["nam.server_restarts"] = restarts;
    extra["nam.gc_failures"] = static_cast<double>(gc_failures_.load());
    double passes = 0, collected = 0, merges = 0;
    for (const auto& s : servers_) {
      if (config_.distribution == Distribution::kFine) break;
      passes += static_cast<double>(s->gc_stats().gc_passes);
      collected += static_cast<double>(s->gc_stats().entries_collected);
      merges += static_cast<double>(s->gc_stats().merges);
    }
    if (mailbox_workers_ > 0) {
      double requests = 0, dropped = 0, malformed = 0;
      for (const auto& s : servers_) {
        const messaging::MessagingServerStats m = s->mailbox_stats();
        requests += static_cast<double>(m.requests);
        dropped += static_cast<double>(m.dropped_connections);
        malformed += static_cast<double>(m.malformed + m.incomplete);
      }
      extra["nam.mailbox_requests"] = requests;
      extra["nam.mailbox_dropped_connections"] = dropped;
      extra["nam.mailbox_malformed"] = malformed;
    }
    extra["nam.server_gc_passes"] = passes;
    extra["nam.server_gc_entries_collected"] = collected;
    extra["nam.server_gc_merges"] = merges;
    if (auto marked = count_marked_ ? deleted_entries() : StatusOr<uint64_t>(unimplemented("")); marked.is_ok())
      extra["nam.deleted_entries_left"] = static_cast<double>(*marked);
  }

  // Levels of the tree (coarse-grained and hybrid: the tallest of the
  // memory servers' trees, the leaf level included), to set beside the
  // paper's (100 M keys in 1 KB pages: 5).
  StatusOr<uint32_t> tree_levels() const {
    if (clock_ == nullptr) return internal_error("nam: no memory server set up");
    if (config_.distribution != Distribution::kFine) {
      uint32_t most = 0;
      for (const auto& s : servers_) {
        BlinkTree t(s->local_access());
        LOCUS_ASSIGN_OR_RETURN(uint32_t n, t.levels());
        most = std::max(most, n);
      }
      return most;
    }
    std::vector<Arena*> arenas;
    for (const auto& s : servers_) arenas.push_back(&s->arena());
    LocalAccess global(arenas, *clock_);
    BlinkTree t(global);
    return t.levels();
  }

  // Entries still marked deleted in every tree after the run.
  StatusOr<uint64_t> deleted_entries() const {
    if (clock_ == nullptr) return internal_error("nam: no memory server set up");
    uint64_t marked = 0;
    if (config_.distribution == Distribution::kCoarse) {
      for (const auto& s : servers_) {
        BlinkTree t(s->local_access());
        LOCUS_ASSIGN_OR_RETURN(uint64_t n, t.count_deleted_entries());
        marked += n;
      }
      return marked;
    }
    std::vector<Arena*> arenas;
    for (const auto& s : servers_) arenas.push_back(&s->arena());
    LocalAccess global(arenas, *clock_);
    if (config_.distribution == Distribution::kHybrid) {
      // Each memory server's partition: its leaves (spread over every
      // arena) from the one its inner levels give the smallest pair.
      for (const auto& s : servers_) {
        BlinkTree t(global, s.get());
        LOCUS_ASSIGN_OR_RETURN(uint64_t n, t.count_deleted_entries());
        marked += n;
      }
      return marked;
    }
    BlinkTree t(global);
    return t.count_deleted_entries();
  }

  design::MemoryEstimate server_memory() const override {
    const uint64_t arenas = design::saturating_mul(servers_count_, config_.region_bytes);
    if (mailbox_workers_ == 0) return {arenas, "index.region_bytes x platform.servers"};
    // Mailboxes: a request ring (and its control words) per connection slot.
    const uint64_t slots = uint64_t{mailbox_workers_} * mailbox_server_.connections_per_worker;
    const uint64_t rings = design::saturating_mul(
        design::saturating_mul(servers_count_, slots), uint64_t{mailbox_server_.request_ring_bytes} + 64);
    return {design::saturating_add(arenas, rings),
            "index.region_bytes x platform.servers, and a mailbox per client and memory server "
            "(index.rpc_transport = \"mailbox\", run.clients)"};
  }
  design::MemoryEstimate client_memory() const override {
    // Scratch pages, plus a head node's prefetch (twice: the registered
    // buffer and the tree's copy).
    const uint64_t pages = (4 + 2 * uint64_t{config_.head_node_interval}) * config_.page_bytes;
    if (mailbox_workers_ == 0) return {pages, "index.page_bytes x (4 + 2 x index.head_node_interval)"};
    // A response ring (and control words) and a request's staging per memory server.
    const uint64_t rings = uint64_t{servers_count_} * (uint64_t{mailbox_client_.response_ring_bytes} + 64 +
                                                        2 * uint64_t{mailbox_client_.max_request_bytes});
    return {pages + rings, "index.page_bytes x (4 + 2 x index.head_node_interval), and a mailbox per memory server"};
  }

  Status loaded_history(const workload::WorkloadSpec& spec, Random rng, check::History* out) const override {
    return design::load_records(spec, rng, [this, out](std::string_view key, std::string_view value) -> Status {
      check::Operation op;
      op.kind = check::OpKind::kInsert;
      LOCUS_ASSIGN_OR_RETURN(op.key, partitioner_.history_key(key));
      op.value = check::value_digest(value);
      op.outcome = check::Outcome::kOk;
      op.invoke_ns = -2;  // before the run's clock starts
      op.response_ns = -1;
      out->push_back(std::move(op));
      return Status();
    });
  }
  StatusOr<check::CheckResult> check_history(const check::History& history,
                                             const check::CheckOptions& options) const override {
    return check::check_history(check::MultimapModel(), history, options);
  }

 private:
  uint32_t per_server() const { return 1 + mailbox_workers_; }
  // The mailbox set-up RPC to memory server `server` (its RpcServer).
  static StatusOr<messaging::ConnectionInfo> exchange(rpc::RpcClient& rpc, NodeId server,
                                                      const messaging::ClientInfo& info, uint32_t replaces) {
    rpc::Writer w(rpc.payload_buffer());
    messaging::put_setup_request(info, replaces, w);
    if (!w.ok()) return internal_error("nam.mailbox: the request exceeds the RPC message limit");
    LOCUS_ASSIGN_OR_RETURN(auto body, rpc.call(server, kMailboxRpc, w.size()));
    rpc::Reader r(body);
    LOCUS_ASSIGN_OR_RETURN(messaging::ConnectionInfo conn, messaging::get_connection_info(r, "nam.mailbox answer"));
    if (!r.at_end()) return corruption("nam.mailbox answer: trailing bytes after the connection");
    return conn;
  }

  NamConfig config_;
  uint32_t servers_count_;
  uint32_t mailbox_workers_ = 0;  // per memory server; 0: SEND/RECV
  messaging::MessagingServerOptions mailbox_server_;
  messaging::MessagingClientOptions mailbox_client_;
  std::vector<Env> mailbox_envs_;  // the memory server being set up's mailbox workers
  Partitioner partitioner_;
  std::vector<std::unique_ptr<MemoryServer>> servers_;
  Clock* clock_ = nullptr;
  uint64_t loaded_ = 0;
  std::atomic<uint64_t> gc_failures_{0};
  std::atomic<bool> collector_taken_{false};
  bool count_marked_;
};

}  // namespace

StatusOr<std::unique_ptr<design::IndexDriver>> make_driver(const scenario::Scenario& s, const design::Placement&) {
  const NamConfig& config = *s.index.get<NamConfig>();
  if (s.platform.servers == 0 || s.platform.servers > RemotePtr::kMaxServers) {
    return setting_error(s, "platform.servers", "the NAM index takes 1 to 128 memory servers");
  }
  if (!config.key_skew.empty() && config.key_skew.size() != s.platform.servers) {
    return setting_error(s, "index.key_skew",
                         "has " + std::to_string(config.key_skew.size()) + " shares, one per memory server: "
                         "platform.servers is " + std::to_string(s.platform.servers));
  }
  return std::unique_ptr<design::IndexDriver>(new NamDriver(config, s, !s.faults.any()));
}

}  // namespace locus::nam
