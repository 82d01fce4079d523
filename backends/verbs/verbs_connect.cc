// Client-side connections: address and route resolution with rdma_cm from
// the host:port of the cluster file (so the device, port and GID follow
// from routing, on InfiniBand and RoCE v2 alike), the connect hand-shake,
// and reconnecting after an error completion moved a queue pair to the
// error state. Connecting is set-up work done on first use of a peer; a
// failed attempt is logged with the address and reason, and requests to
// that peer complete with kRetryExceeded for the hold-down period.
#include <poll.h>

#include <cstring>

#include "backends/verbs/verbs_common.h"
#include "backends/verbs/verbs_endpoint.h"

namespace locus::verbs {
namespace {

int millis_until(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::max<int64_t>(left.count(), 0));
}

std::string describe_event(const rdma_cm_event& ev) {
  std::string s = rdma_event_str(ev.event);
  switch (ev.event) {
    case RDMA_CM_EVENT_REJECTED: {
      s = "connection rejected (reason " + std::to_string(ev.status) + ")";
      // Our servers say why in the reject's private data.
      const auto* text = static_cast<const char*>(ev.param.conn.private_data);
      const size_t n = ev.param.conn.private_data_len;
      const size_t len = text != nullptr ? strnlen(text, n) : 0;
      s += len > 0 ? ": " + std::string(text, len) : std::string(": is a `locus serve` listening there?");
      break;
    }
    case RDMA_CM_EVENT_ADDR_ERROR: s = "address resolution failed: " + errno_text(-ev.status); break;
    case RDMA_CM_EVENT_ROUTE_ERROR: s = "route resolution failed: " + errno_text(-ev.status); break;
    case RDMA_CM_EVENT_UNREACHABLE: s = "peer unreachable (status " + std::to_string(ev.status) + ")"; break;
    case RDMA_CM_EVENT_CONNECT_ERROR: s = "connect error (status " + std::to_string(ev.status) + ")"; break;
    default: break;
  }
  return s;
}

}  // namespace

Status VerbsEndpoint::await_cm_event(rdma_cm_id* id, rdma_cm_event_type want, SteadyTime deadline,
                                     Welcome* welcome) {
  while (true) {
    rdma_cm_event* ev = nullptr;
    if (rdma_get_cm_event(cm_channel_, &ev) != 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK) return unavailable("rdma_get_cm_event: " + errno_text(errno));
      const int ms = millis_until(deadline);
      if (ms == 0) {
        return timeout_error(std::string("no ") + rdma_event_str(want) + " within " +
                             std::to_string(tuning_.connect_timeout_ms) + " ms");
      }
      pollfd p{cm_channel_->fd, POLLIN, 0};
      (void)::poll(&p, 1, ms);
      continue;
    }
    if (ev->id != id) {  // e.g. an established connection's peer went away
      handle_client_cm_event(ev);
      continue;
    }
    const bool ok = ev->event == want;
    std::string problem = ok ? std::string() : describe_event(*ev);
    if (ok && welcome != nullptr) {
      const void* data = ev->param.conn.private_data;
      if (data == nullptr || ev->param.conn.private_data_len < sizeof(Welcome)) {
        problem = "the peer accepted without a locus welcome (not a locus server?)";
      } else {
        std::memcpy(welcome, data, sizeof(Welcome));
      }
    }
    rdma_ack_cm_event(ev);
    if (problem.empty()) return Status();
    return unavailable(problem);
  }
}

Status VerbsEndpoint::resolve_anchor() {
  if (directory_.server_count() == 0) return invalid_argument(directory_.source() + " lists no server");
  LOCUS_ASSIGN_OR_RETURN(ServerAddress first, directory_.server(0));
  sockaddr_storage addr{};
  LOCUS_RETURN_IF_ERROR(resolve_host(first, &addr));
  if (rdma_create_id(cm_channel_, &anchor_id_, nullptr, RDMA_PS_TCP) != 0) {
    anchor_id_ = nullptr;
    return internal_error(name_ + ": rdma_create_id: " + errno_text(errno));
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(tuning_.connect_timeout_ms);
  if (rdma_resolve_addr(anchor_id_, nullptr, reinterpret_cast<sockaddr*>(&addr),
                        static_cast<int>(tuning_.connect_timeout_ms)) != 0) {
    return unavailable(name_ + ": rdma_resolve_addr " + first.to_string() + ": " + errno_text(errno));
  }
  Status s = await_cm_event(anchor_id_, RDMA_CM_EVENT_ADDR_RESOLVED, deadline, nullptr);
  if (!s.is_ok()) {
    return Status(s.code(), name_ + ": no RDMA device routes to server 0 at " + first.to_string() + ": " + s.message());
  }
  if (anchor_id_->verbs == nullptr) return unavailable(name_ + ": " + first.to_string() + " resolved to no RDMA device");
  return init_verbs(anchor_id_->verbs);
}

Status VerbsEndpoint::connect_to(NodeId peer) {
  LOCUS_ASSIGN_OR_RETURN(ServerAddress server, directory_.server(peer));
  sockaddr_storage addr{};
  LOCUS_RETURN_IF_ERROR(resolve_host(server, &addr));
  rdma_cm_id* id = nullptr;
  if (rdma_create_id(cm_channel_, &id, nullptr, RDMA_PS_TCP) != 0) {
    return internal_error("rdma_create_id: " + errno_text(errno));
  }
  // Unwinds in reverse order whatever was created before a failure.
  auto fail = [id](Status s) {
    if (id->qp != nullptr) rdma_destroy_qp(id);
    rdma_destroy_id(id);
    return s;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(tuning_.connect_timeout_ms);
  const int timeout_ms = static_cast<int>(tuning_.connect_timeout_ms);
  if (rdma_resolve_addr(id, nullptr, reinterpret_cast<sockaddr*>(&addr), timeout_ms) != 0) {
    return fail(unavailable("rdma_resolve_addr: " + errno_text(errno)));
  }
  if (Status s = await_cm_event(id, RDMA_CM_EVENT_ADDR_RESOLVED, deadline, nullptr); !s.is_ok()) return fail(s);
  if (id->verbs != context_) {
    const char* dev = id->verbs != nullptr ? ibv_get_device_name(id->verbs->device) : "no device";
    return fail(unavailable(std::string("reached through ") + dev + ", but this endpoint uses " + device_name() +
                            " (the device that routes to server 0)"));
  }
  if (rdma_resolve_route(id, timeout_ms) != 0) return fail(unavailable("rdma_resolve_route: " + errno_text(errno)));
  if (Status s = await_cm_event(id, RDMA_CM_EVENT_ROUTE_RESOLVED, deadline, nullptr); !s.is_ok()) return fail(s);
  if (Status s = create_qp(id); !s.is_ok()) return fail(s);
  Hello hello;
  hello.claimed = id_;
  hello.token = token_;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (rejoining_.count(peer) != 0) hello.flags |= Hello::kRejoin;
  }
  rdma_conn_param param = conn_param(&hello, sizeof hello);
  if (rdma_connect(id, &param) != 0) return fail(unavailable("rdma_connect: " + errno_text(errno)));
  Welcome welcome;
  if (Status s = await_cm_event(id, RDMA_CM_EVENT_ESTABLISHED, deadline, &welcome); !s.is_ok()) {
    if (s.message().find(std::string(": ") + kFencedRefusal) != std::string::npos) {
      std::lock_guard<std::mutex> lock(mu_);
      fence_seen_.insert(peer);
    }
    return fail(s);
  }
  if (welcome.magic != Welcome::kMagic || welcome.server != peer) {
    return fail(unavailable("the server there says it is node " + std::to_string(welcome.server) + ", but " +
                            directory_.source() + " lists it as node " + std::to_string(peer)));
  }
  tune_established_qp(id->qp);

  auto c = std::make_unique<Connection>();
  c->peer = peer;
  c->id = id;
  c->qp = id->qp;
  c->fifo.resize(tuning_.max_send_wr);
  id->context = c.get();
  if (directory_.log_connections()) {
    log_line(name_ + ": connected to node " + std::to_string(peer) + " at " + server.to_string() + " via " +
             device_name() + " (the server calls us node " + std::to_string(welcome.assigned) + ")");
  }
  std::lock_guard<std::mutex> lock(mu_);
  rejoining_.erase(peer);
  by_peer_[peer] = c.get();
  by_qp_num_[c->qp->qp_num] = c.get();
  connections_.push_back(std::move(c));
  return Status();
}

void VerbsEndpoint::ensure_connected(std::span<const WorkRequest> batch) {
  if (role_ != Role::kClient || crashed_.load(std::memory_order_acquire)) return;
  for (size_t i = 0; i < batch.size(); ++i) {
    const NodeId peer = batch[i].remote.node;
    if (i > 0 && batch[i - 1].remote.node == peer) continue;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = by_peer_.find(peer);
      if (it != by_peer_.end()) {
        if (!it->second->broken) continue;
        // Its queue pair is in the error state: requests still outstanding
        // on it complete as flushed, ahead of anything posted from now on.
        destroy_connection_locked(it->second, WcStatus::kFlushed);
      }
      auto hold = holddown_until_.find(peer);
      if (hold != holddown_until_.end() && std::chrono::steady_clock::now() < hold->second) continue;
    }
    if (peer >= directory_.server_count()) continue;  // not a server: completes kRetryExceeded
    Status s = connect_to(peer);
    if (!s.is_ok()) {
      auto where = directory_.server(peer);
      log_line(name_ + ": cannot connect to node " + std::to_string(peer) + " at " +
               (where.is_ok() ? where->to_string() : std::string("?")) + ": " + s.message());
      std::lock_guard<std::mutex> lock(mu_);
      holddown_until_[peer] = std::chrono::steady_clock::now() + std::chrono::milliseconds(tuning_.reconnect_holddown_ms);
    }
  }
}

void VerbsEndpoint::break_connection_locked(Connection* c, const std::string& why) {
  if (c == nullptr || c->broken) return;
  c->broken = true;
  // Flush what is outstanding now rather than after transport retries.
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_ERR;
  if (c->qp != nullptr) ibv_modify_qp(c->qp, &attr, IBV_QP_STATE);
  log_line(name_ + ": connection to node " + std::to_string(c->peer) + " " + why);
}

void VerbsEndpoint::handle_client_cm_event(rdma_cm_event* event) {
  if (event->event == RDMA_CM_EVENT_DISCONNECTED || event->event == RDMA_CM_EVENT_DEVICE_REMOVAL) {
    std::lock_guard<std::mutex> lock(mu_);
    break_connection_locked(static_cast<Connection*>(event->id->context),
                            std::string("lost (") + rdma_event_str(event->event) + ")");
  }
  rdma_ack_cm_event(event);
}

void VerbsEndpoint::reset_peer(NodeId peer) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_peer_.find(peer);
  if (it == by_peer_.end()) return;
  // A server's connection is its client's to re-make; dropping it here
  // would only refuse the client's next requests.
  if (role_ != Role::kClient) return;
  break_connection_locked(it->second, "reset: a request on it got no completion within its caller's wait");
}

Status VerbsEndpoint::fence_peer(NodeId peer) {
  if (role_ != Role::kServer) return unimplemented(name_ + ": only a server's endpoint fences its clients");
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_peer_.find(peer);
  Connection* c = it == by_peer_.end() ? nullptr : it->second;
  const uint64_t token = c != nullptr ? c->token : directory_.token_of(peer);
  if (token == 0) return not_found(name_ + ": no client " + std::to_string(peer) + " to fence");
  fenced_.insert(token);
  if (c == nullptr) return Status();
  // In the error state the queue pair drops what arrives; the disconnect
  // tells the client, whose outstanding requests flush.
  break_connection_locked(c, "fenced (a lock lease of it ran out)");
  if (c->id != nullptr) (void)rdma_disconnect(c->id);
  return Status();
}

bool VerbsEndpoint::rejoin(NodeId peer) {
  std::lock_guard<std::mutex> lock(mu_);
  if (fence_seen_.erase(peer) == 0) return false;
  rejoining_.insert(peer);
  holddown_until_.erase(peer);  // connect again at the next post
  return true;
}

void VerbsEndpoint::drain_client_cm_events() {
  rdma_cm_event* ev = nullptr;
  while (rdma_get_cm_event(cm_channel_, &ev) == 0) handle_client_cm_event(ev);
}

}  // namespace locus::verbs
