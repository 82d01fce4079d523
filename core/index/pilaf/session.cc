// Pilaf's client session: see pilaf_session.h.
#include "core/index/pilaf/session.h"

#include <algorithm>
#include <string>
#include <utility>

namespace locus::pilaf {

uint32_t pilaf_shard_of(uint64_t keynum, size_t servers) {
  uint64_t x = keynum * 0x9E3779B97F4A7C15ULL;
  x ^= x >> 32;
  return static_cast<uint32_t>(x % servers);
}

PilafSession::PilafSession(Endpoint& endpoint, rpc::RpcClient& rpc, std::shared_ptr<const std::vector<NodeId>> servers,
                           const ClientOptions& options)
    : context_(endpoint, rpc, options), servers_(std::move(servers)) {}

StatusOr<pilaf::PilafClient*> PilafSession::client_of(uint32_t shard) {
  auto it = std::lower_bound(clients_.begin(), clients_.end(), shard,
                             [](const auto& entry, uint32_t s) { return entry.first < s; });
  if (it != clients_.end() && it->first == shard) return it->second.get();
  LOCUS_ASSIGN_OR_RETURN(std::unique_ptr<pilaf::PilafClient> client,
                         pilaf::PilafClient::connect(context_, (*servers_)[shard]));
  return clients_.emplace(it, shard, std::move(client))->second.get();
}

Status PilafSession::execute(const workload::Op& op, std::string_view key, std::string_view value,
                             std::string_view* as) {
  auto client = client_of(pilaf_shard_of(op.keynum, servers_->size()));
  if (!client.is_ok()) {
    *as = workload::op_kind_name(op.kind);
    return client.status();
  }
  return design::execute_key_value(
      **client, op, key, value, as,
      [](std::string_view, uint32_t, std::vector<std::string>*) { return unimplemented("pilaf has no scans"); },
      recording_, &get_misses_);
}

void PilafSession::report(metrics::OpStats& stats) const {
  const pilaf::ClientStats sum = client_stats();
  design::add_counters(stats, {{"get_misses", get_misses_},
                               {"pilaf.retries", sum.retries()},
                               {"pilaf.entry_retries", sum.entry_retries},
                               {"pilaf.extent_retries", sum.extent_retries},
                               {"pilaf.miss_rechecks", sum.miss_rechecks},
                               {"pilaf.fallbacks", sum.fallbacks},
                               {"pilaf.rdma_reads", sum.entry_reads + sum.extent_reads},
                               {"pilaf.rdma_gets", sum.rdma_gets},
                               {"pilaf.entry_reads", sum.entry_reads}});
}

pilaf::ClientStats PilafSession::client_stats() const { return context_.stats; }

}  // namespace locus::pilaf
