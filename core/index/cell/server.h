// CellServer: one Cell server. It owns the Store, registers its node and
// extents regions with the least rights clients need (remote READ only: all
// writes are the server's), answers client operations and the split steps
// other servers' split workers send, and queues the meganode splits its
// Store asks for, for this server's split worker to drive (split_worker.h).
//
// Threading: the handlers run on the server's one RPC actor and are the
// only code touching the Store, which is how Sagiv's one-node locks are
// realised (see store.h). To run several worker actors per server, the
// Store would need per-node lock words taken through Env mutexes or CAS;
// until then a server uses more cores by running more servers (as the
// paper's prototype does, one process per core). The split queue is shared
// with the split worker actor and guarded by an Env mutex, never held
// across a wait.
//
// Costs: with a cost model (SimGrid) each request charges request_ns plus
// node_visit_ns per node visited to the server CPU; defaults follow the
// Cell testbed (6.3 us per server-side search with messaging, 2.6 us of it
// for a 5-level local search).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/common/short_mutex.h"
#include "core/index/cell/protocol.h"
#include "core/index/cell/store.h"
#include "core/log/durable_log.h"
#include "core/rpc/rpc_server.h"
#include "core/transport/env.h"

namespace locus::cell {

struct ServerCosts {
  Nanos request_ns = 3700;
  Nanos node_visit_ns = 520;
};

struct ServerOptions {
  StoreOptions store;
  ServerCosts costs;
  uint32_t max_message_bytes = 16 * 1024;  // must match the RPC server's and clients'
  // Shared by the tree's servers and their split workers, never sent to a
  // client: what kInternal requests must carry (protocol.h).
  uint64_t tree_key = 0;
  // Per-region logs (server_log.cc): the server of node region r logs
  // under log_dir/region<r>; empty: nothing logged, nothing survives.
  std::string log_dir;
  log::LogOptions log;
  Files* log_files = nullptr;  // null: Env::files (tests pass a MemFiles)
  // Checkpoints bound a store's log (server_log.cc), as Redis rewrites its
  // append-only file: once the log has grown by checkpoint_min_bytes and by
  // checkpoint_percentage of the last checkpoint's size, the store writes a
  // checkpoint and its log starts again. UINT64_MAX bytes: never.
  uint64_t checkpoint_min_bytes = 64ull << 20;
  uint32_t checkpoint_percentage = 100;

  Status validate() const;
};

class CellServer final : public SplitScheduler {
 public:
  // Region ids first_region (nodes) and first_region + 1 (extents).
  static StatusOr<std::unique_ptr<CellServer>> create(Env env, CellRegionId first_region, const ServerOptions& options);
  ~CellServer() override;

  NodeId node_id() const { return env_.transport->node_id(); }
  RegionInfo node_region() const { return {RegionKind::kNodes, node_id(), node_region_.remote()}; }
  RegionInfo extent_region() const { return {RegionKind::kExtents, node_id(), extent_region_.remote()}; }
  // The cluster's region table; every server gets it before serving, and
  // again when a takeover moves regions (from another actor: a copy under
  // a lock).
  void set_layout(Layout layout);
  Layout layout() const;
  const ServerOptions& options() const { return options_; }

  // Registers the Cell request types with `rpc`: the clients' ones, and
  // kInternal for the tree's own servers.
  Status attach(rpc::RpcServer& rpc);
  // The same for an endpoint whose server comes later (a survivor's spare
  // endpoint, given a dead server's regions by a takeover): requests go to
  // `target()`, UNAVAILABLE while it is null.
  static Status attach_to(rpc::RpcServer& rpc, std::function<CellServer*()> target);
  // This server's process died (fault injection, where its actors live on
  // in the same process): no record is written after fence() returns, so
  // the survivor replaying its log is the log's only writer. Waits (on
  // `clock`) for an append under way.
  void fence(Clock& clock);
  // Serves one client request (types 1-4; kOp without kInsertChild).
  Status handle(uint16_t type, rpc::Reader& request, rpc::Writer& response);
  // Serves one request of the tree's own (any type): what a kInternal
  // request with the tree's key carries, and what in-process callers
  // (set-up loading, single-threaded tests) use directly.
  Status handle_internal(uint16_t type, rpc::Reader& request, rpc::Writer& response);

  Store& store() { return *store_; }
  // Names the splits of this server's meganodes (every driver of them draws here).
  SplitIds& split_ids() { return split_ids_; }

  // SplitScheduler (called by the Store on the server actor).
  void request_split(uint32_t meganode) override;
  // The split worker's side: the next meganode to split, waiting up to
  // `timeout`; false if none.
  bool take_split(Nanos timeout, uint32_t* meganode);
  bool try_take_split(uint32_t* meganode);

  // Region 0's server plants the first tree; a server that recovered one
  // from its log has it already.
  Status plant_tree();
  // After every server of the tree replayed its log: ends what a crash
  // left half done (server_log.cc). `finished(split_id, root)` says
  // whether the split's source (on any server) linked that meganode.
  // `is_tree_root(ptr)`: whether ptr is the tree's root (Store::queue_needed_splits).
  Status resolve_splits(const std::function<bool(uint64_t split_id, uint64_t root)>& finished,
                        const std::function<bool(uint64_t root)>& is_tree_root = {});
  // resolve_splits() on every server of a tree that replayed its logs,
  // `servers[0]` being region 0's (the superblock's): a meganode is linked
  // once the superblock names it as the root or its split's source
  // finished (a split's id names the source's node region, SplitIds).
  static Status resolve_replayed_splits(const std::vector<CellServer*>& servers);
  // Only the second half of it: for a region taken over while other
  // servers serve, whose builds are resolved by requests (takeover.h).
  Status abort_pending_splits(const std::function<bool(uint64_t root)>& is_tree_root = {});
  // kSplitStatus: whether this server linked `root` for split `split_id`
  // (it finished that split as its source, or its superblock names `root`).
  bool split_linked(uint64_t split_id, uint64_t root) const;
  const log::RecoveryReport& recovery() const { return recovery_; }
  // Writes a checkpoint now (tests, benchmarks). Exclusive use: on the
  // server's actor, or while nothing else serves the store.
  Status checkpoint();
  uint64_t checkpoints() const { return checkpoints_.load(std::memory_order_relaxed); }
  // Checkpoints the store tried on its own and could not write, and why the
  // last one failed (naming the store's region and the file): the store
  // serves on from the previous generation, so nothing else shows it.
  uint64_t checkpoint_failures() const { return checkpoint_failures_.load(std::memory_order_relaxed); }
  std::string last_checkpoint_error() const;
  uint64_t log_generation() const { return log_ == nullptr ? 0 : log_->generation(); }
  // log_fsync = interval: syncs what was written once the interval has
  // passed since the last sync (an idle server's last records are
  // otherwise synced only by its next batch). The driver's sync daemon
  // calls it; thread-safe against appends (the writer's lock).
  // The interval sync (log_fsync = "interval"): serialised with the
  // handlers' appends by log_mu_, as those append without the log's lock.
  Status tick() {
    if (log_ == nullptr) return Status();
    MutexLock lock(*log_mu_);
    return log_->tick();
  }
  bool logged() const { return log_ != nullptr; }
  // Requests refused because only the tree's own servers may send them.
  uint64_t refused_internal() const { return refused_internal_.load(std::memory_order_relaxed); }
  // Requests charged (operations and scan steps) and the nodes they
  // visited, since the last reset_charged() (the driver's, after the load,
  // which goes through the same handlers).
  uint64_t requests_charged() const { return requests_charged_.load(std::memory_order_relaxed); }
  uint64_t nodes_charged() const { return nodes_charged_.load(std::memory_order_relaxed); }
  void reset_charged() {
    requests_charged_.store(0, std::memory_order_relaxed);
    nodes_charged_.store(0, std::memory_order_relaxed);
  }

 private:
  std::atomic<uint64_t> refused_internal_{0};
  std::atomic<uint64_t> requests_charged_{0};
  std::atomic<uint64_t> nodes_charged_{0};
  CellServer(Env env, const ServerOptions& options, std::unique_ptr<Store> store);
  Status register_regions();
  Status on_op(rpc::Reader& r, rpc::Writer& w, bool internal);
  Status on_range(rpc::Reader& r, rpc::Writer& w);
  Status on_split_scan(rpc::Reader& r, rpc::Writer& w);
  Status on_split_step(uint16_t type, rpc::Reader& r, rpc::Writer& w);
  void charge(uint32_t nodes_visited);
  // server_log.cc
  Status open_log();
  Status apply_record(std::string_view record);
  // Logs a request that changes the store before it is applied (none: OK).
  Status log_if_write(uint16_t type, const rpc::Reader& request, bool internal);
  // Under log_mu_, before a record is added: a checkpoint if the log grew past the trigger.
  void maybe_checkpoint();
  Status checkpoint_locked();
  Status dispatch(uint16_t type, rpc::Reader& r, rpc::Writer& w);
  // One logged split step (kMeganodeLive/kMeganodeAbandon: root; kSplitAbort: meganode) applied here.
  Status local_step(uint16_t type, uint64_t a, uint64_t split_id);

  Env env_;
  ServerOptions options_;
  std::unique_ptr<Store> store_;
  Region node_region_, extent_region_;
  bool registered_ = false;
  mutable ShortMutex layout_mu_;
  Layout layout_;
  SplitIds split_ids_;
  std::vector<std::byte> entries_;  // range and scan entries, before their header goes out

  std::unique_ptr<log::DurableLog> log_;
  log::RecoveryReport recovery_;
  uint64_t checkpoint_retry_at_ = 0;  // after a failed checkpoint: log bytes before the next try
  std::atomic<uint64_t> checkpoints_{0};
  std::atomic<uint64_t> checkpoint_failures_{0};
  std::string last_checkpoint_error_;  // under log_mu_
  bool replaying_ = false;
  bool planted_ = false;
  std::string record_;
  // fence(): appends counted in before they look at fenced_ (both seq_cst),
  // so fence() sees every append that did not see it.
  std::atomic<bool> fenced_{false};
  std::atomic<uint32_t> appending_{0};

  std::unique_ptr<Mutex> queue_mu_;
  // Held by log_if_write around its append and by tick() around the sync.
  std::unique_ptr<Mutex> log_mu_;
  std::unique_ptr<CondVar> queue_cv_;
  std::vector<uint32_t> pending_;  // meganodes to split, each at most once (room for every meganode)
};

}  // namespace locus::cell
