// Deployment: a Cell tree over several servers on any Runtime. It adds one
// node per server (its RpcServer and CellServer) and one per split worker,
// registers every region, gives all servers the region table (region 2i
// holds server i's nodes, 2i+1 its extents; region 0 the superblock),
// plants the first tree (one empty leaf meganode on server 0) and spawns
// the daemons. Tests use it.
//
// load() inserts directly into the servers' memory before any actor runs,
// performing the meganode splits it causes in place (direct_tree.h), so a
// test starts from a populated, already spread tree. The scenario driver
// (driver.cc) deploys Cell through the runner instead; this class serves
// the tests that drive servers and clients by hand.
//
// Lifetime: destroy the Deployment before its Runtime (it deregisters
// memory through the runtime's transports).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/index/cell/caller.h"
#include "core/index/cell/client.h"
#include "core/index/cell/direct_tree.h"
#include "core/index/cell/server.h"
#include "core/index/cell/split_driver.h"
#include "core/index/cell/split_worker.h"
#include "core/rpc/rpc_client.h"
#include "core/rpc/rpc_server.h"
#include "core/transport/runtime.h"

namespace locus::cell {

struct DeploymentOptions {
  uint32_t servers = 1;
  ServerOptions server;
  SplitDriverOptions split;
  uint32_t rpc_recv_buffers = 256;
  uint32_t rpc_send_buffers = 64;
  Nanos serve_poll_ns = 5 * kMillisecond;
};

struct DeploymentStats {
  StoreStats store;  // summed over servers
  uint64_t splits = 0;
  uint64_t remote_placements = 0;
  uint64_t new_roots = 0;
  uint64_t parents_abandoned = 0;
  uint64_t split_failures = 0;
  std::string first_split_error;
  uint64_t rpc_requests = 0;
  uint64_t rpc_rejected = 0;
  uint32_t root_level = 0;
};

class Deployment {
 public:
  static StatusOr<std::unique_ptr<Deployment>> create(Runtime& runtime, const DeploymentOptions& options);
  ~Deployment();

  // Set-up only (no actor running): insert or update one record.
  Status load(std::string_view key, std::string_view value);
  // Set-up and single-threaded tests only: one operation (or range) run to
  // completion in place, server-side, with any splits it causes. Views in
  // the response stay valid until the next direct call.
  StatusOr<OpResponse> direct_op(OpKind op, std::string_view key, std::string_view value = {});
  StatusOr<uint64_t> direct_range(std::string_view start, std::optional<std::string_view> end, uint32_t limit,
                                  RangeSink& sink);
  // Adds the server loops and split workers; call before each Runtime::run().
  Status spawn_daemons();

  NodeId bootstrap() const { return layout_.bootstrap(); }
  const Layout& layout() const { return layout_; }
  size_t server_count() const { return servers_.size(); }
  CellServer& server(size_t i) { return *servers_[i]; }
  rpc::RpcServer& rpc_server(size_t i) { return *rpc_[i]; }
  // RPC client options matching the servers' message size.
  rpc::RpcClientOptions client_rpc_options() const;
  DeploymentStats stats() const;
  // Every server's Store invariants (tests; no actor may be running).
  Status check_invariants() const;

 private:
  Deployment(Runtime& runtime, const DeploymentOptions& options);
  Status init();
  // Ends the meganode splits a crash interrupted, once every server replayed its log.
  Status resolve_splits();

  Runtime& runtime_;
  DeploymentOptions options_;
  std::vector<NodeId> worker_nodes_;
  std::vector<std::unique_ptr<rpc::RpcServer>> rpc_;
  std::vector<std::unique_ptr<CellServer>> servers_;
  Layout layout_;
  SplitWorkerShared shared_;
  std::unique_ptr<DirectTree> direct_;  // set-up and single-threaded operations, in place
};

}  // namespace locus::cell
