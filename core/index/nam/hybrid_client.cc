// The hybrid client (hybrid_client.h): RPCs for the inner levels, the
// fine-grained node access for the leaves.
#include "core/index/nam/hybrid_client.h"

#include <string>

#include "core/index/nam/arena.h"
#include "core/index/nam/fine_client.h"

namespace locus::nam {

StatusOr<RemotePtr> HybridClient::RpcUpper::find_leaf(Pair x) {
  rpc::Writer w(rpc_.payload_buffer());
  w.put(x.key);
  w.put(x.payload);
  LOCUS_ASSIGN_OR_RETURN(auto body, rpc_.call(servers_[server], kLeafRpc, w.size()));
  rpc::Reader r(body);
  RemotePtr leaf;
  if (!r.get(&leaf.raw) || leaf.null()) {
    return corruption("nam: memory server " + std::to_string(server) + " named no leaf");
  }
  return leaf;
}

Status HybridClient::RpcUpper::add_separator(Pair sep, RemotePtr right) {
  rpc::Writer w(rpc_.payload_buffer());
  w.put(sep.key);
  w.put(sep.payload);
  w.put(right.raw);
  return rpc_.call(servers_[server], kSeparatorRpc, w.size()).status();
}

StatusOr<bool> HybridClient::RpcUpper::join_leaves(Pair high, RemotePtr left, RemotePtr right) {
  rpc::Writer w(rpc_.payload_buffer());
  w.put(high.key);
  w.put(high.payload);
  w.put(left.raw);
  w.put(right.raw);
  LOCUS_ASSIGN_OR_RETURN(auto body, rpc_.call(servers_[server], kJoinRpc, w.size()));
  rpc::Reader r(body);
  uint8_t joined = 0;
  if (!r.get(&joined)) return corruption("nam: memory server " + std::to_string(server) + " gave no join answer");
  return joined != 0;
}

StatusOr<std::unique_ptr<HybridClient>> HybridClient::connect(Endpoint& ep, rpc::RpcClient& rpc, rpc::Caller& index_rpc,
                                                              std::span<const NodeId> servers, const NamConfig& config,
                                                              Partitioner partitioner) {
  LOCUS_ASSIGN_OR_RETURN(auto regions, fetch_layout(rpc, servers, config.page_bytes));
  std::unique_ptr<HybridClient> c(new HybridClient(index_rpc, servers, partitioner));
  const auto lease_ns = static_cast<Nanos>(config.lease_ms * 1e6);
  LOCUS_ASSIGN_OR_RETURN(c->access_,
                         RemoteAccess::create(ep, rpc, std::move(regions), config.page_bytes, lease_ns, kLeafCursorOffset));
  LOCUS_RETURN_IF_ERROR(c->access_->enable_prefetch(config.head_node_interval));
  c->tree_ = std::make_unique<BlinkTree>(*c->access_, &c->upper_);
  LOCUS_ASSIGN_OR_RETURN(c->epochs_, RemoteEpochs::attach_tree(*c->access_, *c->tree_, config));
  set_tree_options(*c->tree_, config);
  return c;
}

Status HybridClient::lookup(uint64_t key, std::vector<uint64_t>* payloads) {
  upper_.server = partitioner_.server_of(key);
  return tree_->lookup(key, payloads);
}

Status HybridClient::range(Pair from, uint64_t to_key, uint32_t limit, std::vector<Pair>* out) {
  return partitioned_range(partitioner_, from, limit, out, [&](uint32_t server, uint32_t share_limit) {
    upper_.server = server;
    return tree_->range(from, to_key, share_limit, out);
  });
}

Status HybridClient::insert(Pair x) {
  upper_.server = partitioner_.server_of(x.key);
  return tree_->insert(x);
}

Status HybridClient::collect_garbage() {
  Status first;
  for (uint32_t s = 0; s < upper_.servers(); ++s) {
    upper_.server = s;
    Status pass = tree_->collect_garbage();
    if (first.is_ok()) first = pass;
  }
  return first;
}

StatusOr<bool> HybridClient::remove(Pair x) {
  upper_.server = partitioner_.server_of(x.key);
  return tree_->remove(x);
}

}  // namespace locus::nam
