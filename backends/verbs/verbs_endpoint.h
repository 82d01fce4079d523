// VerbsEndpoint: one Transport on libibverbs + librdmacm. It owns, in
// creation order: an rdma_cm event channel and an anchor id (a server's
// listening id, or a client's id resolved towards server 0, which picks the
// RDMA device by routing: no device name, port or GID index is configured),
// a protection domain, a completion channel and one completion queue, a
// shared receive queue (post_recv is per endpoint in the contract, so every
// endpoint's receives are shared by all its connections), and one RC queue
// pair per peer. Destruction releases them in reverse order, and so does a
// failed creation.
//
// Servers accept connections on a thread of their own (verbs_listener.cc);
// clients connect on first use of a peer and again after an error moved the
// queue pair to the error state (verbs_connect.cc). The data path
// (verbs_datapath.cc) runs on the owning actor's thread.
//
// Locking: mu_ guards the connection tables, the slot tables, the memory
// registry and the synthesized completions; the actor holds it only inside
// post/post_recv/poll, never while blocking, so the listener thread can
// always add or remove a connection.
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "backends/verbs/cluster_config.h"
#include "backends/verbs/verbs_common.h"
#include "core/transport/transport.h"

namespace locus::verbs {

// Where clients find servers, shared by a runtime's endpoints.
class Directory {
 public:
  Directory(ClusterConfig config, bool log_connections);
  const VerbsTuning& tuning() const { return config_.verbs; }
  const std::string& source() const { return config_.source; }
  uint32_t server_count() const { return static_cast<uint32_t>(config_.servers.size()); }
  bool log_connections() const { return log_connections_; }
  // Server `node`'s address, with its real port once it listens in this process.
  StatusOr<ServerAddress> server(NodeId node) const;
  void set_port(NodeId node, uint16_t port);
  RegionId next_region_id() { return next_region_.fetch_add(1, std::memory_order_relaxed); }

  // Client names, one table for all server endpoints of this process: a
  // client (told apart by its Hello token) gets its claimed id unless
  // another client holds it, and then keeps the id it got while any server
  // endpoint here holds a connection from it. So a server that spans
  // several endpoints (Catfish: a connect RPC on one, messaging workers that
  // WRITE to the client on others) addresses a client it met on one
  // endpoint by the same id from every other. Each name_client() of a
  // connection is paired with one release_client() when it goes.
  //
  // A released name stays with its client for kNameQuarantine (a reconnect
  // gets it back; another client claiming it is renamed): a server may
  // still write to the old holder (Catfish's heartbeats every Inv, a
  // response in flight), and such a WRITE must fail for want of a
  // connection, not land on a newcomer's queue pair, which the remote
  // access error would move to the error state.
  static constexpr std::chrono::seconds kNameQuarantine{10};
  NodeId name_client(NodeId claimed, uint64_t token);
  void release_client(NodeId id, uint64_t token);
  // The token of the client named `id` now (0 if none): a fence holds the
  // client, not the name, which a fenced client could lose and get anew.
  uint64_t token_of(NodeId id);

 private:
  struct ClientName {
    uint64_t token = 0;
    uint32_t connections = 0;
    std::chrono::steady_clock::time_point released;  // when connections fell to 0
  };
  mutable std::mutex mu_;
  ClusterConfig config_;
  bool log_connections_;
  std::atomic<RegionId> next_region_{1};
  std::mutex names_mu_;  // a leaf lock: taken under an endpoint's mu_, never the other way
  std::unordered_map<NodeId, ClientName> client_names_;
  std::unordered_map<uint64_t, NodeId> client_by_token_;
  NodeId next_renamed_ = kFirstRenamedClient;
};

// One RC queue pair to one peer.
struct Connection {
  NodeId peer = kInvalidNode;
  uint64_t token = 0;         // the client's Hello token (servers only)
  rdma_cm_id* id = nullptr;   // owns qp
  ibv_qp* qp = nullptr;
  bool broken = false;        // an error completion moved the QP to the error state
  std::vector<uint32_t> fifo; // send slots outstanding on this QP, posting order (ring)
  uint32_t fifo_head = 0;
  uint32_t fifo_count = 0;
};

class VerbsEndpoint final : public Transport {
 public:
  enum class Role { kServer, kClient };
  static StatusOr<std::unique_ptr<VerbsEndpoint>> create(Directory& directory, NodeId id, std::string name,
                                                         Role role);
  ~VerbsEndpoint() override;

  NodeId node_id() const override { return id_; }
  TransportLimits limits() const override;
  StatusOr<Region> register_memory(void* addr, uint64_t length, Access access) override;
  Status deregister_memory(const Region& region) override;
  Status post(std::span<const WorkRequest> batch) override;
  Status post_recv(std::span<const RecvRequest> batch) override;
  size_t poll(std::span<Completion> out) override;
  size_t wait(std::span<Completion> out, Nanos timeout) override;
  // Moves the connection to `peer` to the error state (its outstanding
  // requests flush) and marks it broken: a client's next post reconnects.
  void reset_peer(NodeId peer) override;
  // Server: breaks the connection of `peer` (its queue pair to the error
  // state, which drops whatever arrives on it, and a disconnect so the
  // client learns now) and refuses its reconnects until one says it
  // rejoins. Client: rejoin() answers true once a server refused it as
  // fenced; its next connect to that server says it rejoins.
  Status fence_peer(NodeId peer) override;
  bool rejoin(NodeId peer) override;

  const std::string& name() const { return name_; }
  std::string device_name() const;
  // Fault injection: refuse new connections, move every queue pair to the
  // error state, and flush this endpoint's own requests from now on.
  void crash();
  // Accepts and makes connections again; the ones crash() broke stay
  // broken (their peers reconnect).
  void revive() { crashed_.store(false, std::memory_order_release); }
  // A server that listens but refuses connections until set_accepting(true)
  // (`locus serve --node`: its peers see it up only once it is loaded).
  void set_accepting(bool on) { accepting_.store(on, std::memory_order_release); }
  // A client's connect to `peer` now rather than on first use (`locus
  // serve --node` waiting for its peers); the error says what failed.
  Status connect_now(NodeId peer) { return connect_to(peer); }

 private:
  struct SendSlot {
    uint64_t user_wr_id = 0;
    Connection* conn = nullptr;
    NodeId peer = kInvalidNode;
    uint32_t length = 0;
    uint32_t generation = 0;
    Opcode op = Opcode::kRead;
    // Set for a request refused before it reached the NIC (a misaligned
    // atomic, which rdma_rxe rejects at post time): a zero-length READ
    // stands in for it so its failure completes in posting order.
    WcStatus forced = WcStatus::kSuccess;
    bool signaled = false;
    bool busy = false;
  };
  struct RecvSlot {
    uint64_t user_wr_id = 0;
    uint32_t generation = 0;
    bool busy = false;
  };
  struct MemoryRegion {
    ibv_mr* mr = nullptr;
    RegionId id = kInvalidRegion;
    const std::byte* base = nullptr;
    uint64_t length = 0;
  };
  using SteadyTime = std::chrono::steady_clock::time_point;

  VerbsEndpoint(Directory& directory, NodeId id, std::string name, Role role);

  // --- set-up and teardown (verbs_endpoint.cc) ---
  Status init();
  Status init_verbs(ibv_context* context);
  void release_all();
  Status create_qp(rdma_cm_id* id);
  rdma_conn_param conn_param(const void* private_data, uint8_t private_data_len) const;
  void tune_established_qp(ibv_qp* qp);
  // Retires every outstanding request of `c` as `status` (in posting order),
  // unlinks it and destroys its queue pair and id. mu_ held.
  void destroy_connection_locked(Connection* c, WcStatus status);

  // --- client connections (verbs_connect.cc) ---
  Status resolve_anchor();
  void ensure_connected(std::span<const WorkRequest> batch);
  Status connect_to(NodeId peer);
  Status await_cm_event(rdma_cm_id* id, rdma_cm_event_type want, SteadyTime deadline, Welcome* welcome);
  void handle_client_cm_event(rdma_cm_event* event);
  // Marks `c` broken and moves its queue pair to the error state (its
  // outstanding requests flush), saying why in the log; the next post
  // destroys it and, on a client, connects again.
  void break_connection_locked(Connection* c, const std::string& why);
  void drain_client_cm_events();

  // --- server connections (verbs_listener.cc) ---
  Status listen();
  void listener_loop();
  void on_connect_request(rdma_cm_event* event);
  void on_connection_gone(rdma_cm_id* id);
  // Whether one more client may connect (VerbsTuning::max_connections),
  // after letting go of connections whose queue pair failed.
  bool room_for_a_connection();
  // Asks the device, through a queue pair made for the question, whether
  // RDMA WRITE data is written in order (TransportLimits).
  bool probe_write_order();
  NodeId assign_peer_id_locked(const Hello& hello);

  // --- data path (verbs_datapath.cc) ---
  bool local_ok_locked(const LocalBuf& buf) const;
  Status validate_locked(const WorkRequest& wr) const;
  void post_run_locked(std::span<const WorkRequest> run, NodeId peer);
  void synthesize_locked(const WorkRequest& wr, WcStatus status);
  bool translate_locked(const ibv_wc& wc, Completion* out);
  void trace_error(const ibv_wc& wc, const Completion& c) const;
  size_t poll_locked(std::span<Completion> out);
  void consume_cq_events();
  Connection* connection_locked(NodeId peer);

  Directory& directory_;
  const VerbsTuning tuning_;
  const NodeId id_;
  const std::string name_;
  const Role role_;
  const uint64_t token_;
  const bool trace_;  // $LOCUS_VERBS_TRACE: log the raw verbs status of every failed completion

  // Resources, in creation order (released in reverse by release_all()).
  rdma_event_channel* cm_channel_ = nullptr;
  rdma_cm_id* anchor_id_ = nullptr;
  ibv_context* context_ = nullptr;  // owned by librdmacm
  ibv_pd* pd_ = nullptr;
  ibv_comp_channel* comp_channel_ = nullptr;
  ibv_cq* cq_ = nullptr;
  ibv_srq* srq_ = nullptr;
  int wake_fd_ = -1;  // eventfd: the listener wakes a blocked wait()
  int stop_fd_ = -1;  // eventfd: stops the listener thread
  std::thread listener_;
  uint8_t rd_atomic_ = 0;  // negotiated READ/atomic depth (device-clamped)
  // Servers: what ibv_query_qp_data_in_order says of an RC queue pair of
  // this device for RDMA WRITE (probe_write_order, at listen()).
  bool writes_land_in_order_ = false;

  std::atomic<bool> crashed_{false};
  std::atomic<bool> accepting_{true};

  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::unordered_map<NodeId, Connection*> by_peer_;
  std::unordered_map<uint32_t, Connection*> by_qp_num_;
  std::unordered_map<uint32_t, MemoryRegion> regions_by_lkey_;
  std::vector<SendSlot> send_slots_;
  std::vector<uint32_t> free_send_;
  std::vector<RecvSlot> recv_slots_;
  std::vector<uint32_t> free_recv_;
  std::deque<Completion> synthesized_;  // failures found without the NIC; only on error paths
  std::unordered_map<NodeId, SteadyTime> holddown_until_;
  std::unordered_set<uint64_t> fenced_;    // server: client tokens refused until they rejoin
  std::unordered_set<NodeId> fence_seen_;  // client: servers that refused us as fenced
  std::unordered_set<NodeId> rejoining_;   // client: servers whose fence we acknowledged
  // Scratch for building work-request chains (sized at creation: the data
  // path does not allocate).
  std::vector<ibv_send_wr> send_wrs_;
  std::vector<ibv_recv_wr> recv_wrs_;
  std::vector<ibv_sge> sges_;
  std::vector<ibv_wc> wcs_;
};

}  // namespace locus::verbs
