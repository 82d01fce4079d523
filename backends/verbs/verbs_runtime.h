// The verbs backend: the Transport seam on rdma-core (libibverbs for queue
// pairs, memory and completions; librdmacm for connections), for InfiniBand
// and RoCE v2 hardware and for Soft-RoCE (rdma_rxe) in CI.
//
// A VerbsRuntime is one process's share of a cluster described by a
// ClusterConfig (see cluster_config.h for the file and the NodeId rules).
// Server endpoints listen on their entry's address; client endpoints
// connect to a server the first time they post to it, and again after an
// error completion broke the connection (the queue pair of an RC
// connection is unusable after any error). Remote memory is described by
// Region/RemoteRegion values that the core exchanges over its RPC channel
// after connecting; nothing is agreed out of band.
//
// Actors are OS threads, as on loopback. Servers and clients may share one
// process (tests, `locus bench --micro read` against a local server) or
// live in different processes and hosts (`locus serve` + `locus bench`).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "backends/verbs/cluster_config.h"
#include "core/transport/runtime.h"

namespace locus::verbs {

struct VerbsRuntimeOptions {
  uint64_t seed = 1;
  bool log_connections = false;  // one stderr line per connect, accept and disconnect
  // `locus serve --node K`: only server entries [listen_first, listen_end)
  // listen here; add_node of another server entry makes a shadow
  // (shadow_transport.h) with that entry's NodeId, holding the memory the
  // scenario's load lays out for a server another process serves.
  uint32_t listen_first = 0;
  uint32_t listen_end = UINT32_MAX;
  // Servers refuse connections until accept_connections() (`locus serve
  // --node`: a peer is up once it is loaded, not once it listens).
  bool hold_connections = false;
  // This process's client endpoints claim ids from server_count() +
  // client_id_base: `locus serve --node K --with-clients` gives each node
  // its own range, so two nodes' clients never claim the same id at a
  // server (which would rename one, and a server answering by a claimed id
  // in its requests would answer the other).
  uint32_t client_id_base = 0;
};

class VerbsRuntime : public Runtime {
 public:
  // add_node({.is_server = true}) serves the lowest config entry not yet
  // served in this process; add_server serves a given one (`locus serve --node`).
  virtual StatusOr<NodeId> add_server(uint32_t config_index) = 0;
  virtual uint32_t server_count() const = 0;
  // Where server `node` listens (its real port, if it listens in this process).
  virtual StatusOr<ServerAddress> server_address(NodeId node) const = 0;
  // The RDMA device a local endpoint uses ("rxe0", "mlx5_0").
  virtual std::string device_name(NodeId node) const = 0;
  // Waits until server entry `node` (served by another process) accepts a
  // connection, trying again every 200 ms; a timeout names the entry and
  // its address and says what the last attempt met.
  virtual Status wait_for_server(NodeId node, Nanos timeout) = 0;
  // Lets this process's servers accept connections (hold_connections).
  virtual void accept_connections() = 0;
};

std::unique_ptr<VerbsRuntime> make_verbs_runtime(const ClusterConfig& config, const VerbsRuntimeOptions& options = {});

// Whether this host has an RDMA device with an active port and the rdma_cm
// device node; `detail` says what was found or what is missing.
bool rdma_available(std::string* detail);

// An IPv4 address that an active RoCE port carries (read from the GID
// tables, never assuming an index), for tests that run servers and clients
// on this host; nullopt on InfiniBand-only hosts.
std::optional<std::string> find_roce_ipv4_address();

}  // namespace locus::verbs
