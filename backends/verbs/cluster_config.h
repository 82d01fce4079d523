// The cluster configuration of the verbs backend: where each server listens
// and how the RDMA transport is tuned, loaded from a TOML file so that a real
// cluster is described once and every process (`locus serve`, `locus bench`)
// reads the same file. Nothing else is exchanged out of band: addresses of
// remote memory travel over the RPC channel after connecting.
//
//   [[server]]            # node 0: the first entry, node 1: the second ...
//   address = "10.0.0.1"  # an IP address of an RDMA-capable netdev (RoCE) or IPoIB
//   port = 7471           # rdma_cm port (its own port space, not TCP's)
//
//   [zookeeper]           # optional: servers from ZooKeeper (docs/membership.md)
//   connect = "10.0.0.5:2181/locus"  # HOST:PORT[,HOST:PORT...][/PATH]; then
//                         # [[server]] may be left out: clients learn each
//                         # server's address from what `locus serve
//                         # --zookeeper` announced there
//
//   [verbs]               # optional tuning, defaults below
//   rnr_retry_count = 6   # finite: 7 would mean "retry forever"
//
// NodeIds: server k of the file is NodeId k in every process. A process's
// client endpoints take the ids after the servers (servers.size() + i) and
// send that claim when connecting; a server honours it unless another live
// client already holds it, in which case it names the newcomer with a fresh
// id from kFirstRenamedClient on (the server's own view; the client is not
// affected, since clients are never addressed by other clients). All
// servers of one process share that naming: a client has the same id at
// each of them while it is connected to any (see Directory::name_client).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/common/time.h"
#include "core/transport/rc_retry.h"
#include "core/transport/types.h"

namespace locus::verbs {

constexpr NodeId kFirstRenamedClient = 0x40000000;

struct ServerAddress {
  std::string address;  // numeric IPv4/IPv6 address or host name
  uint16_t port = 0;    // 0: any free port (only for servers in this process)

  std::string to_string() const;
};

// The queue pairs' retry settings (ack_timeout, retry_count,
// rnr_retry_count, min_rnr_timer) are RcRetry's, defaults included.
struct VerbsTuning : RcRetry {
  // Outstanding one-sided READs/atomics per connection, both directions.
  uint8_t max_rd_atomic = 16;
  uint32_t connect_timeout_ms = 5000;
  // After a failed connect, requests to that peer fail at once for this long
  // instead of trying again on every post.
  uint32_t reconnect_holddown_ms = 1000;
  // Per endpoint: outstanding work requests, posted receives, largest SEND.
  uint32_t max_send_wr = 128;
  uint32_t max_recv_wr = 1024;
  uint32_t max_message_bytes = 1u << 20;
  // wait() polls this long before sleeping on the completion channel.
  uint32_t poll_spin_us = 50;
  // Per server endpoint: clients connected at once. One more is refused
  // (its connect is rejected with the reason) once connections whose queue
  // pair failed are let go, so a client that opens connection after
  // connection cannot take the NIC's queue-pair state (a few thousand
  // connections, calibration.md's Cell testbed) from the others.
  uint32_t max_connections = 1024;
};

struct ClusterConfig {
  std::string source = "<built-in>";  // file name, for messages
  std::vector<ServerAddress> servers;
  std::string zookeeper;  // [zookeeper] connect, validated; empty: none
  VerbsTuning verbs;
};

// Loads and validates a cluster file. Every error names the file, the line
// and the key: "cluster.toml:7: server[1].port: must be in [0, 65535]".
StatusOr<ClusterConfig> load_cluster_config(const std::string& path);
// An IPv4 or IPv6 address, or a syntactically valid host name.
bool valid_address(const std::string& address);
// Refuses a cluster file a client cannot connect with: a server whose port
// is 0 (any free port, which only the serving process can take).
Status check_connectable(const ClusterConfig& config);
// The same, from text (tests; `source` names it in messages).
StatusOr<ClusterConfig> parse_cluster_config(std::string_view text, const std::string& source);

}  // namespace locus::verbs
