// PilafSession: a Pilaf client's YCSB operations (core/design/
// client_session.h), opened by the driver (driver.cc). Keys are sharded
// over one PilafClient per server by key number (pilaf_shard_of: a
// client-side partitioning, as the paper's single-server design scales
// out). The PilafClients share the session's ClientContext (one read
// buffer, one set of counters), so what a session keeps per server it has
// used is that server's layout, and nothing for a server it has not: the
// server list is shared by every session of a run, and the clients are
// kept in a sorted vector of the shards used (a session's own copy of the
// list and a vector indexed by shard cost 12 bytes per server: 590 MB for
// 48,000 sessions of 1024 servers before any was used). Reads are gets,
// updates and inserts puts of the whole record, read-modify-writes a get
// then a put; Pilaf cannot scan.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "core/design/client_session.h"
#include "core/index/pilaf/client.h"

namespace locus::pilaf {

// The server (of `servers`) that holds key number `keynum`.
uint32_t pilaf_shard_of(uint64_t keynum, size_t servers);

class PilafSession final : public design::ClientSession {
 public:
  // A client of each of `servers` (in shard order), through `rpc` (which
  // shares `endpoint`), each connected when its shard is first used: a
  // client touches only the servers its keys live on, and a thousand
  // clients starting at once do not all ask every server for its layout
  // first. A failed connect fails that operation (and is tried again by
  // the next one for the shard).
  PilafSession(Endpoint& endpoint, rpc::RpcClient& rpc, std::shared_ptr<const std::vector<NodeId>> servers,
               const ClientOptions& options);

  Status execute(const workload::Op& op, std::string_view key, std::string_view value,
                 std::string_view* measured_as) override;
  // "pilaf.retries" and "pilaf.rdma_reads".
  void report(metrics::OpStats& stats) const override;
  bool can_record() const override { return true; }

  // The clients' counters, summed.
  pilaf::ClientStats client_stats() const;

 private:
  // Declared first: the clients use it until they are destroyed.
  pilaf::ClientContext context_;
  // The client of `shard`, connected first if it is not yet.
  StatusOr<pilaf::PilafClient*> client_of(uint32_t shard);

  std::shared_ptr<const std::vector<NodeId>> servers_;
  // The shards used so far, ascending, each with its connected client.
  std::vector<std::pair<uint32_t, std::unique_ptr<pilaf::PilafClient>>> clients_;
  uint64_t get_misses_ = 0;  // gets answered NOT_FOUND
};

}  // namespace locus::pilaf
