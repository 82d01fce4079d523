// Announcing and finding servers in ZooKeeper; see zookeeper_cluster.h.
#include "apps/locus/zookeeper_cluster.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>

namespace locus::cli {

std::string member_name(size_t node) { return "server-" + std::to_string(node); }

StatusOr<std::unique_ptr<zookeeper::ZooKeeperMembership>> announce_servers(const std::string& target,
                                                                           const std::vector<std::string>& addresses) {
  LOCUS_ASSIGN_OR_RETURN(zookeeper::ZooKeeperTarget t, zookeeper::parse_zookeeper_target(target));
  LOCUS_ASSIGN_OR_RETURN(std::unique_ptr<zookeeper::ZooKeeperMembership> m,
                         zookeeper::ZooKeeperMembership::connect({.target = t}));
  for (size_t k = 0; k < addresses.size(); ++k) {
    LOCUS_RETURN_IF_ERROR(m->register_member({member_name(k), addresses[k]}));
  }
  LOCUS_ASSIGN_OR_RETURN(membership::Versioned count, m->get(kServerCountKey));
  LOCUS_RETURN_IF_ERROR(m->compare_and_set(kServerCountKey, std::to_string(addresses.size()), count.version).status());
  return m;
}

membership::RegionMap cell_region_map(size_t servers) {
  membership::RegionMap map;
  for (size_t k = 0; k < servers; ++k) {
    map[static_cast<uint32_t>(2 * k)] = member_name(k);
    map[static_cast<uint32_t>(2 * k + 1)] = member_name(k);
  }
  return map;
}

Status publish_cell_layout(membership::Membership& membership, const membership::RegionMap& map) {
  // Read-then-CAS: a concurrent writer makes this fail loudly rather than
  // be overwritten silently.
  LOCUS_ASSIGN_OR_RETURN(membership::VersionedRegionMap current, membership::read_region_map(membership));
  LOCUS_RETURN_IF_ERROR(membership::write_region_map(membership, map, current.version).status());
  LOCUS_ASSIGN_OR_RETURN(membership::Versioned root, membership.get(membership::kRootPointerKey));
  const std::string home = "0:0";
  if (root.value == home) return Status();
  return membership.compare_and_set(membership::kRootPointerKey, home, root.version).status();
}

StatusOr<std::vector<verbs::ServerAddress>> resolve_servers(membership::Membership& membership, int timeout_ms) {
  LOCUS_RETURN_IF_ERROR(membership.watch(kServerCountKey));
  std::mutex mu;
  std::condition_variable changed;
  uint64_t changes = 0;
  const int listener = membership.add_listener([&](const membership::Change&) {
    std::lock_guard lock(mu);
    ++changes;
    changed.notify_all();
  });
  struct Remove {
    membership::Membership& m;
    int id;
    ~Remove() { m.remove_listener(id); }
  } remove{membership, listener};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    uint64_t seen = 0;
    {
      std::lock_guard lock(mu);
      seen = changes;
    }
    LOCUS_ASSIGN_OR_RETURN(membership::Versioned count_value, membership.get(kServerCountKey));
    size_t count = 0;
    std::string missing = "(none announced: no " + std::string(kServerCountKey) + " yet)";
    if (count_value.version != membership::Versioned::kAbsent) {
      count = std::strtoul(count_value.value.c_str(), nullptr, 10);
      if (count == 0) return corruption(std::string(kServerCountKey) + ": '" + count_value.value + "'");
      missing.clear();
    }
    LOCUS_ASSIGN_OR_RETURN(std::vector<membership::Member> members, membership.members());
    std::vector<verbs::ServerAddress> out;
    for (size_t k = 0; k < count; ++k) {
      auto it = std::find_if(members.begin(), members.end(),
                             [&](const membership::Member& m) { return m.name == member_name(k); });
      if (it == members.end()) {
        missing += (missing.empty() ? "" : ", ") + member_name(k);
        continue;
      }
      LOCUS_ASSIGN_OR_RETURN(verbs::ServerAddress a, parse_server_address(it->address));
      out.push_back(std::move(a));
    }
    if (missing.empty()) return out;
    std::unique_lock lock(mu);
    if (!changed.wait_until(lock, deadline, [&] { return changes != seen; })) {
      return unavailable("ZooKeeper: after " + std::to_string(timeout_ms) + " ms, no server registered as " + missing +
                         " (is `locus serve --zookeeper` running with the same scenario and path?)");
    }
  }
}

Status resolve_cluster(verbs::ClusterConfig* cluster, int timeout_ms) {
  if (cluster->zookeeper.empty() || !cluster->servers.empty()) return Status();
  LOCUS_ASSIGN_OR_RETURN(zookeeper::ZooKeeperTarget t, zookeeper::parse_zookeeper_target(cluster->zookeeper));
  LOCUS_ASSIGN_OR_RETURN(std::unique_ptr<zookeeper::ZooKeeperMembership> m,
                         zookeeper::ZooKeeperMembership::connect({.target = t}));
  LOCUS_ASSIGN_OR_RETURN(cluster->servers, resolve_servers(*m, timeout_ms));
  return Status();
}

StatusOr<verbs::ServerAddress> parse_server_address(const std::string& text) {
  const size_t colon = text.rfind(':');
  const auto bad = [&] { return invalid_argument("'" + text + "' is not HOST:PORT or [IPV6]:PORT"); };
  if (colon == std::string::npos || colon == 0) return bad();
  std::string host = text.substr(0, colon);
  if (host.front() == '[') {
    if (host.back() != ']') return bad();
    host = host.substr(1, host.size() - 2);
  }
  const std::string port = text.substr(colon + 1);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) return bad();
  const int p = std::stoi(port);
  if (p <= 0 || p > 65535 || !verbs::valid_address(host)) return bad();
  return verbs::ServerAddress{host, static_cast<uint16_t>(p)};
}

}  // namespace locus::cli
