// The command line's use of ZooKeeper (docs/membership.md): `locus serve
// --zookeeper` announces each server it runs as member "server-K" (K its
// NodeId) at its rdma_cm address and, for Cell, publishes the region map
// and where the root pointer lives; `locus run --backend verbs` with a
// cluster file whose [zookeeper] replaces the [[server]] list fills that
// list from the members announced.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/verbs/cluster_config.h"
#include "backends/zookeeper/zookeeper_membership.h"
#include "core/membership/region_map.h"

namespace locus::cli {

// "server-K": the member name of NodeId K.
std::string member_name(size_t node);

// The value naming how many servers `locus serve` announced: written after
// all of them, so a client never mistakes a partial list for the whole.
inline constexpr const char* kServerCountKey = "server-count";

// Connects and registers server-K at addresses[K], then kServerCountKey;
// the returned session keeps them registered until it is destroyed (or
// the process dies and its session expires).
StatusOr<std::unique_ptr<zookeeper::ZooKeeperMembership>> announce_servers(const std::string& target,
                                                                           const std::vector<std::string>& addresses);

// Cell's regions: server K holds regions 2K (its nodes; region 0 also the
// superblock with the root pointer) and 2K+1 (its extents).
membership::RegionMap cell_region_map(size_t servers);

// Writes `map` over whatever is stored (a fresh deployment: its servers
// start empty), and the root pointer's home "REGION:OFFSET" (the superblock,
// region 0 offset 0): the root pointer itself stays in the superblock, where
// a root split swings it with one RDMA CAS and every search reads it.
Status publish_cell_layout(membership::Membership& membership, const membership::RegionMap& map);

// Waits up to timeout_ms until kServerCountKey is written and server-0 ..
// server-(count-1) are registered; returns their addresses in NodeId
// order. The error lists what is missing.
StatusOr<std::vector<verbs::ServerAddress>> resolve_servers(membership::Membership& membership, int timeout_ms);

// A cluster file with [zookeeper] and no [[server]]: fills its servers from
// ZooKeeper (resolve_servers). Other cluster files are left as they are.
Status resolve_cluster(verbs::ClusterConfig* cluster, int timeout_ms);

// "host:port" or "[v6]:port" (ServerAddress::to_string) back into parts.
StatusOr<verbs::ServerAddress> parse_server_address(const std::string& text);

}  // namespace locus::cli
