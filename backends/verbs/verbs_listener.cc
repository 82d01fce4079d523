// Server-side connections: the listening rdma_cm id bound to the server's
// address from the cluster file, and a thread that accepts clients and
// cleans up after them. A client that disconnects or dies (its kernel sends
// the disconnect when its process exits) loses only its own queue pair:
// responses still outstanding to it complete as flushed, and every other
// client keeps being served.
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstring>

#include "backends/verbs/verbs_common.h"
#include "backends/verbs/verbs_endpoint.h"

namespace locus::verbs {

Status VerbsEndpoint::listen() {
  LOCUS_ASSIGN_OR_RETURN(ServerAddress self, directory_.server(id_));
  sockaddr_storage addr{};
  LOCUS_RETURN_IF_ERROR(resolve_host(self, &addr));
  // The listener's context stays null: accepted ids inherit it, and a
  // non-null context marks an id that owns a Connection.
  if (rdma_create_id(cm_channel_, &anchor_id_, nullptr, RDMA_PS_TCP) != 0) {
    anchor_id_ = nullptr;
    return internal_error(name_ + ": rdma_create_id: " + errno_text(errno));
  }
  int reuse = 1;
  (void)rdma_set_option(anchor_id_, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &reuse, sizeof reuse);
  if (rdma_bind_addr(anchor_id_, reinterpret_cast<sockaddr*>(&addr)) != 0) {
    return unavailable(name_ + ": cannot bind " + self.to_string() + ": " + errno_text(errno) +
                       " (is it an address of this host, and is the port free?)");
  }
  if (anchor_id_->verbs == nullptr) {
    return unavailable(name_ + ": " + self.to_string() +
                       " is not on an RDMA device; list an address of an RDMA-capable interface in " +
                       directory_.source());
  }
  LOCUS_RETURN_IF_ERROR(init_verbs(anchor_id_->verbs));
  writes_land_in_order_ = probe_write_order();
  if (rdma_listen(anchor_id_, 64) != 0) return unavailable(name_ + ": rdma_listen: " + errno_text(errno));
  const uint16_t port = ntohs(rdma_get_src_port(anchor_id_));
  directory_.set_port(id_, port);
  stop_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (stop_fd_ < 0) return internal_error(name_ + ": eventfd: " + errno_text(errno));
  if (directory_.log_connections()) {
    log_line(name_ + ": listening on " + self.address + ":" + std::to_string(port) + " via " + device_name());
  }
  listener_ = std::thread([this] { listener_loop(); });
  return Status();
}

void VerbsEndpoint::listener_loop() {
  pollfd fds[2] = {{cm_channel_->fd, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
  while (true) {
    if (::poll(fds, 2, -1) < 0 && errno != EINTR) {
      log_line(name_ + ": listener poll: " + errno_text(errno));
      return;
    }
    if (fds[1].revents != 0) return;
    rdma_cm_event* ev = nullptr;
    while (rdma_get_cm_event(cm_channel_, &ev) == 0) {
      switch (ev->event) {
        case RDMA_CM_EVENT_CONNECT_REQUEST:
          on_connect_request(ev);  // acks
          break;
        case RDMA_CM_EVENT_DISCONNECTED:
        case RDMA_CM_EVENT_CONNECT_ERROR:
        case RDMA_CM_EVENT_UNREACHABLE:
        case RDMA_CM_EVENT_REJECTED: {
          rdma_cm_id* id = ev->id;
          const bool owns_connection = id != anchor_id_ && id->context != nullptr;
          // Acked before the id is destroyed: rdma_destroy_id waits for it.
          rdma_ack_cm_event(ev);
          if (owns_connection) on_connection_gone(id);
          break;
        }
        case RDMA_CM_EVENT_DEVICE_REMOVAL:
          log_line(name_ + ": device removed");
          rdma_ack_cm_event(ev);
          break;
        default:
          rdma_ack_cm_event(ev);
          break;
      }
    }
  }
}

NodeId VerbsEndpoint::assign_peer_id_locked(const Hello& hello) {
  // The process-wide name (Directory::name_client), so that every server
  // endpoint here calls this client alike.
  return directory_.name_client(hello.claimed, hello.token);
}

void VerbsEndpoint::on_connect_request(rdma_cm_event* ev) {
  rdma_cm_id* id = ev->id;
  Hello hello;
  const bool hello_ok = ev->param.conn.private_data != nullptr && ev->param.conn.private_data_len >= sizeof(Hello) &&
                        (std::memcpy(&hello, ev->param.conn.private_data, sizeof hello), hello.magic == Hello::kMagic);
  // The request's data is copied; the new id lives on after the ack.
  rdma_ack_cm_event(ev);
  auto reject = [&](const std::string& why) {
    rdma_reject(id, why.c_str(), static_cast<uint8_t>(std::min<size_t>(why.size() + 1, 140)));
    rdma_destroy_id(id);
    // Always said, quiet or not: a refusal is what an operator looks for.
    log_line(name_ + ": refused a connection" +
             (hello_ok ? " from a client claiming node " + std::to_string(hello.claimed) : std::string()) + ": " + why);
  };
  if (crashed_.load(std::memory_order_acquire)) return reject("server crashed (fault injection)");
  if (!accepting_.load(std::memory_order_acquire)) return reject("server still loading (locus serve --node)");
  if (!hello_ok) return reject("not a locus client (no hello in the connect request)");
  bool refused_as_fenced = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (fenced_.count(hello.token) != 0) {
      if ((hello.flags & Hello::kRejoin) == 0) {
        refused_as_fenced = true;
      } else {
        fenced_.erase(hello.token);  // it acknowledged the fence (Transport::rejoin)
      }
    }
  }
  if (refused_as_fenced) {
    return reject(std::string(kFencedRefusal) + " a lock lease of this client ran out; it must rejoin first");
  }
  if (id->verbs != context_) return reject("the request arrived on another RDMA device than the server's");
  if (!room_for_a_connection()) {
    return reject("server at its limit of " + std::to_string(tuning_.max_connections) +
                  " connections (verbs.max_connections in " + directory_.source() + ")");
  }
  if (Status s = create_qp(id); !s.is_ok()) return reject("server cannot create a queue pair: " + s.message());

  Connection* c = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto owned = std::make_unique<Connection>();
    c = owned.get();
    c->peer = assign_peer_id_locked(hello);
    c->token = hello.token;
    c->id = id;
    c->qp = id->qp;
    c->fifo.resize(tuning_.max_send_wr);
    id->context = c;
    by_peer_[c->peer] = c;
    by_qp_num_[c->qp->qp_num] = c;
    connections_.push_back(std::move(owned));
  }
  Welcome welcome;
  welcome.server = id_;
  welcome.assigned = c->peer;
  rdma_conn_param param = conn_param(&welcome, sizeof welcome);
  if (rdma_accept(id, &param) != 0) {
    log_line(name_ + ": rdma_accept: " + errno_text(errno));
    std::lock_guard<std::mutex> lock(mu_);
    destroy_connection_locked(c, WcStatus::kFlushed);
    return;
  }
  // rdma_accept took the queue pair to RTS.
  tune_established_qp(c->qp);
  if (directory_.log_connections()) {
    log_line(name_ + ": accepted node " + std::to_string(c->peer) +
             (c->peer != hello.claimed ? " (it claimed " + std::to_string(hello.claimed) +
                                              ", which another client holds or held moments ago)"
                                        : ""));
  }
}

bool VerbsEndpoint::probe_write_order() {
  ibv_qp_init_attr attr{};
  attr.send_cq = cq_;
  attr.recv_cq = cq_;
  attr.srq = srq_;
  attr.qp_type = IBV_QPT_RC;
  attr.cap.max_send_wr = 1;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  ibv_qp* qp = ibv_create_qp(pd_, &attr);
  if (qp == nullptr) {
    log_line(name_ + ": cannot create a queue pair to ask the device about WRITE ordering (" + errno_text(errno) +
             "); taking it as unordered");
    return false;
  }
  const bool in_order = ibv_query_qp_data_in_order(qp, IBV_WR_RDMA_WRITE, 0) == 1;
  ibv_destroy_qp(qp);
  return in_order;
}

bool VerbsEndpoint::room_for_a_connection() {
  bool wake = false, room = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (connections_.size() >= tuning_.max_connections) {
      // Connections whose queue pair failed go first: their clients
      // connect again, and the disconnect tells them.
      for (size_t i = connections_.size(); i-- > 0;) {
        if (connections_[i]->broken) destroy_connection_locked(connections_[i].get(), WcStatus::kFlushed);
      }
      wake = !synthesized_.empty();
    }
    room = connections_.size() < tuning_.max_connections;
  }
  if (wake) {
    const uint64_t one = 1;
    (void)!write(wake_fd_, &one, sizeof one);
  }
  return room;
}

void VerbsEndpoint::on_connection_gone(rdma_cm_id* id) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto* c = static_cast<Connection*>(id->context);
    if (directory_.log_connections()) log_line(name_ + ": node " + std::to_string(c->peer) + " disconnected");
    destroy_connection_locked(c, WcStatus::kFlushed);
    wake = !synthesized_.empty();
  }
  if (wake) {
    const uint64_t one = 1;
    (void)!write(wake_fd_, &one, sizeof one);
  }
}

}  // namespace locus::verbs
