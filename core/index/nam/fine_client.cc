// The fine-grained client's connection (fine_client.h).
#include "core/index/nam/fine_client.h"

#include <string>

namespace locus::nam {

StatusOr<std::vector<RemoteRegion>> fetch_layout(rpc::RpcClient& rpc, std::span<const NodeId> servers,
                                                 uint32_t page_bytes) {
  std::vector<RemoteRegion> regions(servers.size());
  for (size_t i = 0; i < servers.size(); ++i) {
    LOCUS_ASSIGN_OR_RETURN(auto body, rpc.call(servers[i], kLayoutRpc, 0));
    rpc::Reader r(body);
    uint32_t id = 0, page = 0;
    RemoteRegion region;
    if (!r.get(&id) || !r.get(&page) || !rpc::get_region(r, &region)) {
      return corruption("nam: bad layout from memory server " + std::to_string(i));
    }
    if (id != i || page != page_bytes) {
      return invalid_argument("nam: memory server " + std::to_string(i) + " says it is server " + std::to_string(id) +
                              " with " + std::to_string(page) +
                              "-byte pages; this client has index.page_bytes = " + std::to_string(page_bytes));
    }
    regions[i] = region;
  }
  return regions;
}

StatusOr<std::unique_ptr<FineClient>> FineClient::connect(Endpoint& ep, rpc::RpcClient& rpc,
                                                          std::span<const NodeId> servers, const NamConfig& config) {
  LOCUS_ASSIGN_OR_RETURN(auto regions, fetch_layout(rpc, servers, config.page_bytes));
  std::unique_ptr<FineClient> c(new FineClient());
  const auto lease_ns = static_cast<Nanos>(config.lease_ms * 1e6);
  LOCUS_ASSIGN_OR_RETURN(c->access_, RemoteAccess::create(ep, rpc, std::move(regions), config.page_bytes, lease_ns));
  LOCUS_RETURN_IF_ERROR(c->access_->enable_prefetch(config.head_node_interval));
  c->tree_ = std::make_unique<BlinkTree>(*c->access_);
  LOCUS_ASSIGN_OR_RETURN(c->epochs_, RemoteEpochs::attach_tree(*c->access_, *c->tree_, config));
  set_tree_options(*c->tree_, config);
  return c;
}

void set_tree_options(BlinkTree& tree, const NamConfig& config) {
  tree.set_head_interval(config.head_node_interval);
  tree.set_atomic_ranges(config.atomic_ranges);
}

}  // namespace locus::nam
