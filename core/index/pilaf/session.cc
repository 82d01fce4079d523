// Pilaf's client session: see pilaf_session.h.
#include "core/index/pilaf/session.h"

#include <string>

namespace locus::pilaf {

uint32_t pilaf_shard_of(uint64_t keynum, size_t servers) {
  uint64_t x = keynum * 0x9E3779B97F4A7C15ULL;
  x ^= x >> 32;
  return static_cast<uint32_t>(x % servers);
}

PilafSession::PilafSession(Endpoint& endpoint, rpc::RpcClient& rpc, std::vector<NodeId> servers,
                           const ClientOptions& options)
    : context_(endpoint, rpc, options), servers_(std::move(servers)), clients_(servers_.size()) {}

Status PilafSession::execute(const workload::Op& op, std::string_view key, std::string_view value,
                             std::string_view* as) {
  const uint32_t shard = pilaf_shard_of(op.keynum, clients_.size());
  std::unique_ptr<pilaf::PilafClient>& client = clients_[shard];
  if (client == nullptr) {
    auto connected = pilaf::PilafClient::connect(context_, servers_[shard]);
    if (!connected.is_ok()) {
      *as = workload::op_kind_name(op.kind);
      return connected.status();
    }
    client = std::move(*connected);
  }
  return design::execute_key_value(
      *client, op, key, value, as,
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
                               {"pilaf.rdma_reads", sum.entry_reads + sum.extent_reads}});
}

pilaf::ClientStats PilafSession::client_stats() const { return context_.stats; }

}  // namespace locus::pilaf
