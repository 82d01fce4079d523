// PilafSession: a Pilaf client's YCSB operations (core/design/
// client_session.h), opened by the driver (driver.cc). Keys are sharded
// over one PilafClient per server by key number (pilaf_shard_of: a
// client-side partitioning, as the paper's single-server design scales
// out). The PilafClients share the session's ClientContext (one read
// buffer, one set of counters), so what a session keeps per server it has
// used is that server's layout. Reads are gets, updates and inserts puts of
// the whole record, read-modify-writes a get then a put; Pilaf cannot scan.
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
  PilafSession(Endpoint& endpoint, rpc::RpcClient& rpc, std::vector<NodeId> servers, const ClientOptions& options);

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
  std::vector<NodeId> servers_;
  std::vector<std::unique_ptr<pilaf::PilafClient>> clients_;  // by shard; null: not connected yet
  uint64_t get_misses_ = 0;  // gets answered NOT_FOUND
};

}  // namespace locus::pilaf
