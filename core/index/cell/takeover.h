// Takeover: when a Cell server machine dies, the surviving machines divide
// its regions and each recovers its share in parallel from those regions'
// logs, then serves them (Cell paper, section 2.6). No pointer changes: a
// pointer names a region id and an offset, replay puts every node and
// extent back at its offset (server_log.cc), and only the region map and
// the layout (region id -> endpoint and remote key) are rewritten; clients
// fetch the layout again when a server stops answering (client.cc).
//
// The unit that moves is a store: node region 2p with its extents region
// 2p+1, whose leaves point into it, logged together under
// log_dir/region<2p>. A machine holds `stores` of them, each its own
// endpoint, and `spares` spare endpoints that serve nothing until a
// takeover gives them a store. The region map (region id -> machine,
// "server-M") is kept in a Membership (the static one in a run;
// ZooKeeper's in a deployment, docs/membership.md) and rewritten by
// membership::take_over(), which deals the dead machine's stores
// round-robin to the survivors; each survivor's spare recovers its store
// on the spare's own daemon, so the survivors replay at the same time.
//
// A dead machine is fenced first (CellServer::fence): where the "dead"
// server's actors live on in this process (fault injection), nothing
// reaches its log once the survivor reads it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/common/short_mutex.h"
#include "core/index/cell/server.h"
#include "core/index/cell/split_worker.h"
#include "core/membership/static_membership.h"

namespace locus::cell {

struct TakeoverStats {
  uint32_t machines_died = 0;
  uint32_t stores_recovered = 0;
  uint32_t stores_unplaced = 0;  // no spare endpoint left on the survivor the map chose
  uint64_t records_replayed = 0;
  Nanos longest_recovery_ns = 0;   // from the machine's death to its store serving again
  uint64_t orphans_abandoned = 0;  // half-built meganodes of the dead stores' splits freed on live servers
  std::string first_error;
};

class Takeover {
 public:
  Takeover(uint32_t machines, const ServerOptions& options, const SplitDriverOptions& split, SplitWorkerShared& shared);

  // Set-up, in machine order: a store's server, a spare endpoint (the
  // returned target is what its RpcServer serves: attach_to), the layout.
  void add_store(uint32_t machine, CellServer* server);
  std::function<CellServer*()> add_spare(uint32_t machine, Env env);
  Status set_layout(const Layout& layout);  // writes the region map too

  // The fault actor, once machine `machine`'s nodes crashed: fence it,
  // rewrite the map, hand each of its stores to a spare of the survivor
  // the map names.
  Status machine_died(Env& env, uint32_t machine);
  // Spare `spare`'s daemon (on an endpoint of its own on the spare's
  // machine): waits for a store, recovers it, serves it, then is its split
  // worker. Returns after env.stop_requested().
  void run_spare(Env& env, uint32_t spare);
  uint32_t spare_count() const { return static_cast<uint32_t>(spares_.size()); }

  // Every server that serves now (stores of live machines, recovered ones).
  std::vector<CellServer*> serving() const;
  TakeoverStats stats() const;

 private:
  struct Spare {
    uint32_t machine = 0;
    Env env;  // the spare endpoint's: its transport registers the store
    std::atomic<CellServer*> server{nullptr};
    std::atomic<int64_t> store{-1};  // node region id assigned, -1: none
    Nanos died_at_ns = 0;
    std::unique_ptr<CellServer> owned;
  };
  struct Hosted {
    uint32_t machine;
    CellServer* server;
  };
  static std::string member(uint32_t machine) { return "server-" + std::to_string(machine); }
  Status recover(Env& env, Spare& spare, CellRegionId region);
  // The builds a crash left on the recovered store: live if the split's
  // source (or the superblock) linked them, else abandoned; by requests,
  // as the source may be on any server and this store already serves.
  // Then the builds the store's own splits left on the other servers
  // (orphans.h), before this store splits anything itself.
  Status resolve_builds(Caller& caller, NodeId self, CellRegionId region,
                        const std::vector<Store::PendingBuild>& builds, Env& env);
  void fail(const Status& st);

  uint32_t machines_;
  ServerOptions options_;
  SplitDriverOptions split_;
  SplitWorkerShared& shared_;
  std::unique_ptr<membership::StaticMembership> membership_;
  std::vector<std::unique_ptr<Spare>> spares_;

  mutable ShortMutex mu_;  // never held across a wait
  Layout layout_;
  std::vector<Hosted> hosted_;
  std::vector<bool> dead_;
  TakeoverStats stats_;
};

}  // namespace locus::cell
