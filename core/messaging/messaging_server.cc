// MessagingServer set-up: workers, connection slots and their regions,
// handler registration, accept() and stats. The data path is in
// messaging_server_datapath.cc.
#include <algorithm>
#include <string>

#include "core/common/check.h"
#include "core/messaging/messaging_server_internal.h"

namespace locus::messaging {

StatusOr<std::unique_ptr<MessagingServer>> MessagingServer::create(
    std::vector<Env> worker_envs, const MessagingServerOptions& o) {
  if (worker_envs.empty() || o.connections_per_worker == 0) {
    return invalid_argument("messaging: need at least one worker and one connection per worker");
  }
  if (o.request_ring_bytes % kMessageAlignBytes != 0 || o.request_ring_bytes > kMaxRingBytes ||
      o.request_ring_bytes < 2 * kMessageOverheadBytes) {
    return invalid_argument("messaging: request_ring_bytes must be a multiple of 8 in [64, 1 GiB], got " +
                            std::to_string(o.request_ring_bytes));
  }
  if (o.segment_bytes == 0 || o.segment_bytes % kMessageAlignBytes != 0 || o.max_response_bytes == 0) {
    return invalid_argument("messaging: segment_bytes must be a positive multiple of 8 and "
                            "max_response_bytes positive");
  }
  if (o.first_message_timeout_ns <= 0) {
    return invalid_argument("messaging: first_message_timeout_ns must be positive");
  }
  // Polling takes a request as whole once its trailer (its last word)
  // carries the sequence: sound only where WRITEs land in address order.
  for (const Env& env : worker_envs) {
    if (o.mode == ServerMode::kPolling && !env.transport->limits().writes_land_in_order) {
      return invalid_argument(
          "polling messaging workers (Catfish's index.server_mode, the NAM index's index.mailbox_mode = "
          "\"polling\"): this transport does not promise that an RDMA WRITE's data lands in order (on verbs: "
          "ibv_query_qp_data_in_order says no for this device), so a polling worker could take a half-landed "
          "request for a whole one; use \"event\" (woken by each request's WRITE_WITH_IMM completion)");
    }
  }
  std::unique_ptr<MessagingServer> server(new MessagingServer(o));
  LOCUS_RETURN_IF_ERROR(server->init(std::move(worker_envs)));
  return server;
}

MessagingServer::MessagingServer(const MessagingServerOptions& options)
    : options_(options), handlers_(options.max_handler_types), counters_(new Counters) {}

MessagingServer::~MessagingServer() {
  // Unwound in reverse order of init.
  for (auto it = connections_.rbegin(); it != connections_.rend(); ++it) {
    Connection& c = **it;
    if (c.registered) (void)workers_[c.worker]->env.transport->deregister_memory(c.region);
  }
  for (auto it = workers_.rbegin(); it != workers_.rend(); ++it) {
    if ((*it)->registered) (void)(*it)->env.transport->deregister_memory((*it)->local_region);
  }
}

Status MessagingServer::init(std::vector<Env> worker_envs) {
  const auto threads = static_cast<uint32_t>(worker_envs.size());
  const uint32_t per = options_.connections_per_worker;
  const uint64_t response_bytes = message_bytes(options_.max_response_bytes);
  const uint64_t segment_bytes = message_bytes(options_.segment_bytes);
  for (uint32_t i = 0; i < threads; ++i) {
    auto w = std::make_unique<Worker>(worker_envs[i], busy_, threads, options_.heartbeat_interval_ns);
    w->index = i;
    w->node = w->env.transport->node_id();
    w->first_connection = i * per;
    w->connection_count = per;
    const uint64_t slot_bytes = 16 + segment_bytes;
    const uint64_t local_bytes = response_bytes + kMaxSendsInFlight * slot_bytes + kHeartbeatBuffers * 16 + 8;
    w->local = AlignedBuffer(local_bytes);
    if (!w->local.valid()) return resource_exhausted("messaging: cannot allocate worker buffers");
    LOCUS_ASSIGN_OR_RETURN(w->local_region,
                           w->env.transport->register_memory(w->local.data(), local_bytes, kLocalOnly));
    w->registered = true;
    w->max_send_wr = std::max<uint32_t>(w->env.transport->limits().max_send_wr, 1);
    std::byte* p = w->local.data();
    w->response_buf = p;
    p += response_bytes;
    w->slots.resize(kMaxSendsInFlight);
    for (SendSlot& slot : w->slots) {
      slot.head_word = p;
      slot.wrap_word = p + 8;
      slot.message = p + 16;
      p += slot_bytes;
    }
    for (std::byte*& b : w->heartbeat_bufs) {
      b = p;
      p += 16;
    }
    w->recv_buf = p;
    w->scratch.resize(32);
    w->heartbeat_batch.reserve(per);
    for (uint32_t k = 0; k < per; ++k) {
      auto c = std::make_unique<Connection>();
      c->id = i * per + k;
      c->worker = i;
      const uint64_t bytes = uint64_t{options_.request_ring_bytes} + kControlBytes;
      c->memory = AlignedBuffer(bytes);
      if (!c->memory.valid()) return resource_exhausted("messaging: cannot allocate a request ring");
      // Its own region: the rkey reaches this client's ring and nothing else.
      LOCUS_ASSIGN_OR_RETURN(c->region, w->env.transport->register_memory(c->memory.data(), bytes, kRemoteWrite));
      c->registered = true;
      c->control = c->memory.data() + options_.request_ring_bytes;
      c->reader.reset(c->memory.data(), options_.request_ring_bytes);
      connections_.push_back(std::move(c));
    }
    if (options_.mode == ServerMode::kEvent) {
      // Every connection has at most one request in flight; a hostile one
      // that floods costs only RNR waits on its own connection.
      const uint32_t recvs = std::min(2 * per + 16, w->env.transport->limits().max_recv_wr);
      for (uint32_t r = 0; r < recvs; ++r) {
        RecvRequest rr;
        rr.wr_id = kRecvTag | r;
        rr.local = {w->recv_buf, 8, w->local_region.lkey};
        LOCUS_RETURN_IF_ERROR(w->env.transport->post_recv(std::span<const RecvRequest>(&rr, 1)));
      }
    }
    workers_.push_back(std::move(w));
  }
  return Status();
}

Status MessagingServer::handle(uint16_t type, std::string name, MessageHandler handler) {
  if (type == 0 || type >= handlers_.size()) {
    return invalid_argument("messaging: handler type " + std::to_string(type) + " (" + name + ") outside [1, " +
                            std::to_string(handlers_.size()) + ")");
  }
  handlers_[type] = Slot{std::move(name), std::move(handler)};
  return Status();
}

StatusOr<ConnectionInfo> MessagingServer::accept(const ClientInfo& client, bool await_first_message) {
  const uint32_t ring = client.response_ring_bytes;
  if (ring % kMessageAlignBytes != 0 || ring > kMaxRingBytes || ring < message_bytes(options_.segment_bytes) ||
      client.response_ring.length < uint64_t{ring} + kControlBytes) {
    return invalid_argument("messaging accept: client " + std::to_string(client.node) + " response ring of " +
                            std::to_string(ring) + " bytes cannot hold a " +
                            std::to_string(options_.segment_bytes) + "-byte segment (or is malformed)");
  }
  const auto total = static_cast<uint32_t>(connections_.size());
  const auto threads = static_cast<uint32_t>(workers_.size());
  const uint32_t per = options_.connections_per_worker;
  const uint32_t start = next_accept_.fetch_add(1, std::memory_order_relaxed);
  for (uint32_t i = 0; i < total; ++i) {
    // Consecutive accepts go to consecutive workers.
    const uint32_t n = (start + i) % total;
    Connection& c = *connections_[(n % threads) * per + n / threads];
    uint8_t expected = kFree;
    if (!c.state.compare_exchange_strong(expected, kClaimed, std::memory_order_acq_rel)) continue;
    {
      std::lock_guard<ShortMutex> lock(problems_mu_);
      c.problem = Status();  // its last client's; a new one is served now
    }
    c.client = client.node;
    c.response_ring = client.response_ring;
    c.response_ring_bytes = ring;
    c.writer.reset(ring);
    // Read while the slot is still ours: once served, its worker may drop
    // and reclaim it, giving it a new region.
    ConnectionInfo info;
    info.server = workers_[c.worker]->node;
    info.connection_id = c.id;
    info.mode = options_.mode;
    info.request_ring = c.region.remote();
    info.request_ring_bytes = options_.request_ring_bytes;
    info.heartbeat_interval_ns = options_.heartbeat_interval_ns;
    info.awaits_first_message = await_first_message;
    c.state.store(await_first_message ? kAwaiting : kConnected, std::memory_order_release);
    return info;
  }
  return resource_exhausted("messaging accept: all " + std::to_string(total) + " connection slots are taken");
}

MessagingServerStats MessagingServer::stats() const {
  const Counters& k = *counters_;
  auto get = [](const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  MessagingServerStats s;
  s.requests = get(k.requests);
  s.handler_errors = get(k.handler_errors);
  s.unknown_type = get(k.unknown_type);
  s.malformed = get(k.malformed);
  s.incomplete = get(k.incomplete);
  s.dropped_connections = get(k.dropped_connections);
  s.disconnected = get(k.disconnected);
  s.response_segments = get(k.response_segments);
  s.response_stalls = get(k.response_stalls);
  s.send_failures = get(k.send_failures);
  s.heartbeats = get(k.heartbeats);
  s.send_slot_waits = get(k.send_slot_waits);
  s.rescans_after_heartbeat = get(k.rescans_after_heartbeat);
  s.reclaimed = get(k.reclaimed);
  s.retired = get(k.retired);
  return s;
}

Status MessagingServer::retire(uint32_t connection_id, NodeId client, uint64_t response_ring_addr) {
  if (connection_id >= connections_.size()) {
    return invalid_argument("messaging retire: no connection " + std::to_string(connection_id));
  }
  Connection& c = *connections_[connection_id];
  // c.client and c.response_ring are set before the state turns served (acquire).
  if (!is_served(c.state.load(std::memory_order_acquire)) || c.client != client ||
      c.response_ring.base_addr != response_ring_addr) {
    return invalid_argument("messaging retire: connection " + std::to_string(connection_id) +
                            " is not a served connection of node " + std::to_string(client) + "'s ring");
  }
  c.retire_ring.store(response_ring_addr, std::memory_order_relaxed);
  c.retire_for.store(client, std::memory_order_release);
  return Status();
}

Status MessagingServer::connection_status(uint32_t connection_id) const {
  if (connection_id >= connections_.size()) return invalid_argument("no connection " + std::to_string(connection_id));
  std::lock_guard<ShortMutex> lock(problems_mu_);
  return connections_[connection_id]->problem;
}

std::vector<Status> MessagingServer::connection_problems() const {
  std::vector<Status> problems;
  std::lock_guard<ShortMutex> lock(problems_mu_);
  for (const auto& c : connections_) {
    if (!c->problem.is_ok()) problems.push_back(c->problem);
  }
  return problems;
}

void MessagingServer::serve(uint32_t worker, const Env& env) {
  Worker& w = *workers_.at(worker);
  LOCUS_CHECK(env.transport == w.env.transport);
  w.env = env;
  while (!w.env.stop_requested()) serve_once(worker, 10 * kMillisecond);
  // Responses and heartbeats are posted without waiting: let the NIC finish
  // reading their buffers before the worker (and its memory) goes away.
  finish_sends(w);
}

}  // namespace locus::messaging
