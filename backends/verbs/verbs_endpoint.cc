// VerbsEndpoint set-up and teardown: device resources, memory registration
// with the least rights asked for, queue-pair creation and destruction.
// Every resource is released in reverse creation order by release_all(),
// which also runs when creation fails half-way.
#include "backends/verbs/verbs_endpoint.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <random>

#include "backends/verbs/verbs_common.h"

namespace locus::verbs {
namespace {

Status errno_status(const std::string& what, int err) {
  return internal_error(what + ": " + errno_text(err));
}

bool set_nonblocking(int fd) {
  const int flags = fcntl(fd, F_GETFL);
  return flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

uint64_t fresh_token() {
  std::random_device rd;
  return (uint64_t{rd()} << 32) ^ rd() ^
         static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
}

}  // namespace

Directory::Directory(ClusterConfig config, bool log_connections)
    : config_(std::move(config)), log_connections_(log_connections) {}

StatusOr<ServerAddress> Directory::server(NodeId node) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (node >= config_.servers.size()) {
    return not_found("node " + std::to_string(node) + " is not a server of " + config_.source + " (it lists " +
                     std::to_string(config_.servers.size()) + ")");
  }
  return config_.servers[node];
}

void Directory::set_port(NodeId node, uint16_t port) {
  std::lock_guard<std::mutex> lock(mu_);
  if (node < config_.servers.size()) config_.servers[node].port = port;
}

NodeId Directory::name_client(NodeId claimed, uint64_t token) {
  std::lock_guard<std::mutex> lock(names_mu_);
  const auto now = std::chrono::steady_clock::now();
  // Known by a connection to any server endpoint of this process, or
  // released within the quarantine: the same client gets its name back.
  if (auto known = client_by_token_.find(token); known != client_by_token_.end()) {
    ++client_names_[known->second].connections;
    return known->second;
  }
  for (auto it = client_names_.begin(); it != client_names_.end();) {
    const bool expired = it->second.connections == 0 && now - it->second.released >= kNameQuarantine;
    if (expired) client_by_token_.erase(it->second.token);
    it = expired ? client_names_.erase(it) : std::next(it);
  }
  NodeId id = claimed;
  if (claimed < server_count() || claimed >= kFirstRenamedClient || client_names_.count(claimed) != 0) {
    while (client_names_.count(next_renamed_) != 0) ++next_renamed_;
    id = next_renamed_++;
  }
  client_names_[id] = ClientName{token, 1, {}};
  client_by_token_[token] = id;
  return id;
}

uint64_t Directory::token_of(NodeId id) {
  std::lock_guard<std::mutex> lock(names_mu_);
  auto it = client_names_.find(id);
  return it == client_names_.end() ? 0 : it->second.token;
}

void Directory::release_client(NodeId id, uint64_t token) {
  std::lock_guard<std::mutex> lock(names_mu_);
  auto it = client_names_.find(id);
  if (it == client_names_.end() || it->second.token != token || it->second.connections == 0) return;
  if (--it->second.connections == 0) it->second.released = std::chrono::steady_clock::now();
}

VerbsEndpoint::VerbsEndpoint(Directory& directory, NodeId id, std::string name, Role role)
    : directory_(directory),
      tuning_(directory.tuning()),
      id_(id),
      name_(std::move(name)),
      role_(role),
      token_(fresh_token()),
      trace_(std::getenv("LOCUS_VERBS_TRACE") != nullptr) {}

StatusOr<std::unique_ptr<VerbsEndpoint>> VerbsEndpoint::create(Directory& directory, NodeId id, std::string name,
                                                               Role role) {
  std::unique_ptr<VerbsEndpoint> ep(new VerbsEndpoint(directory, id, std::move(name), role));
  // On failure the destructor releases whatever init() had created.
  LOCUS_RETURN_IF_ERROR(ep->init());
  return ep;
}

VerbsEndpoint::~VerbsEndpoint() { release_all(); }

Status VerbsEndpoint::init() {
  cm_channel_ = rdma_create_event_channel();
  if (cm_channel_ == nullptr) {
    return unavailable(name_ + ": no RDMA here: rdma_create_event_channel: " + errno_text(errno) +
                       " (is rdma_ucm loaded and /dev/infiniband/rdma_cm there?)");
  }
  if (!set_nonblocking(cm_channel_->fd)) return errno_status(name_ + ": rdma_cm channel O_NONBLOCK", errno);
  return role_ == Role::kServer ? listen() : resolve_anchor();
}

Status VerbsEndpoint::init_verbs(ibv_context* context) {
  context_ = context;
  ibv_device_attr attr{};
  if (int rc = ibv_query_device(context_, &attr); rc != 0) return errno_status(name_ + ": ibv_query_device", rc);
  const uint64_t cqe = 2ull * tuning_.max_send_wr + tuning_.max_recv_wr + 64;
  if (tuning_.max_send_wr > static_cast<uint32_t>(attr.max_qp_wr) ||
      tuning_.max_recv_wr > static_cast<uint32_t>(attr.max_srq_wr) || cqe > static_cast<uint64_t>(attr.max_cqe)) {
    return invalid_argument(name_ + ": " + device_name() + " allows max_qp_wr " + std::to_string(attr.max_qp_wr) +
                            ", max_srq_wr " + std::to_string(attr.max_srq_wr) + ", max_cqe " +
                            std::to_string(attr.max_cqe) + "; lower verbs.max_send_wr / max_recv_wr in " +
                            directory_.source());
  }
  if (attr.atomic_cap == IBV_ATOMIC_NONE) log_line(name_ + ": " + device_name() + " has no RDMA atomics; CAS/FAA will fail");
  rd_atomic_ = static_cast<uint8_t>(std::min<int>({tuning_.max_rd_atomic, attr.max_qp_rd_atom, attr.max_qp_init_rd_atom}));

  pd_ = ibv_alloc_pd(context_);
  if (pd_ == nullptr) return errno_status(name_ + ": ibv_alloc_pd", errno);
  comp_channel_ = ibv_create_comp_channel(context_);
  if (comp_channel_ == nullptr) return errno_status(name_ + ": ibv_create_comp_channel", errno);
  if (!set_nonblocking(comp_channel_->fd)) return errno_status(name_ + ": completion channel O_NONBLOCK", errno);
  // Room for every outstanding send twice (late flushes of a torn-down queue
  // pair may still arrive after its slots were reused) and every receive.
  cq_ = ibv_create_cq(context_, static_cast<int>(cqe), this, comp_channel_, 0);
  if (cq_ == nullptr) return errno_status(name_ + ": ibv_create_cq", errno);
  ibv_srq_init_attr srq_attr{};
  srq_attr.attr.max_wr = tuning_.max_recv_wr;
  srq_attr.attr.max_sge = 1;
  srq_ = ibv_create_srq(pd_, &srq_attr);
  if (srq_ == nullptr) return errno_status(name_ + ": ibv_create_srq", errno);
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) return errno_status(name_ + ": eventfd", errno);

  send_slots_.resize(tuning_.max_send_wr);
  for (uint32_t i = tuning_.max_send_wr; i > 0; --i) free_send_.push_back(i - 1);
  recv_slots_.resize(tuning_.max_recv_wr);
  for (uint32_t i = tuning_.max_recv_wr; i > 0; --i) free_recv_.push_back(i - 1);
  send_wrs_.resize(tuning_.max_send_wr);
  recv_wrs_.resize(tuning_.max_recv_wr);
  sges_.resize(std::max(tuning_.max_send_wr, tuning_.max_recv_wr));
  wcs_.resize(32);
  return Status();
}

void VerbsEndpoint::release_all() {
  if (listener_.joinable()) {
    const uint64_t one = 1;
    (void)!write(stop_fd_, &one, sizeof one);
    listener_.join();
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    while (!connections_.empty()) destroy_connection_locked(connections_.back().get(), WcStatus::kFlushed);
    synthesized_.clear();
    if (srq_ != nullptr) ibv_destroy_srq(srq_);
    if (cq_ != nullptr) ibv_destroy_cq(cq_);
    if (comp_channel_ != nullptr) ibv_destroy_comp_channel(comp_channel_);
    // Regions the owner did not deregister (a test's World keeps its
    // registrations until the runtime goes).
    for (auto& [lkey, r] : regions_by_lkey_) ibv_dereg_mr(r.mr);
    regions_by_lkey_.clear();
    if (pd_ != nullptr) ibv_dealloc_pd(pd_);
    srq_ = nullptr;
    cq_ = nullptr;
    comp_channel_ = nullptr;
    pd_ = nullptr;
  }
  // The anchor id goes after the PD: librdmacm may release the device
  // context once no id refers to it.
  if (anchor_id_ != nullptr) rdma_destroy_id(anchor_id_);
  anchor_id_ = nullptr;
  if (cm_channel_ != nullptr) rdma_destroy_event_channel(cm_channel_);
  cm_channel_ = nullptr;
  if (wake_fd_ >= 0) close(wake_fd_);
  if (stop_fd_ >= 0) close(stop_fd_);
  wake_fd_ = stop_fd_ = -1;
}

TransportLimits VerbsEndpoint::limits() const {
  return {tuning_.max_send_wr, tuning_.max_recv_wr, tuning_.max_message_bytes, writes_land_in_order_};
}

std::string VerbsEndpoint::device_name() const {
  const char* n = context_ != nullptr ? ibv_get_device_name(context_->device) : nullptr;
  return n != nullptr ? n : "?";
}

StatusOr<Region> VerbsEndpoint::register_memory(void* addr, uint64_t length, Access access) {
  if (addr == nullptr && length > 0) return invalid_argument("register_memory: null address");
  // Local write is implied: READ results, atomics' old values and receives land in local memory.
  int flags = IBV_ACCESS_LOCAL_WRITE;
  if (access & kRemoteRead) flags |= IBV_ACCESS_REMOTE_READ;
  if (access & kRemoteWrite) flags |= IBV_ACCESS_REMOTE_WRITE;
  if (access & kRemoteAtomic) flags |= IBV_ACCESS_REMOTE_ATOMIC;
  ibv_mr* mr = ibv_reg_mr(pd_, addr, length, flags);
  if (mr == nullptr) {
    return resource_exhausted("register_memory: ibv_reg_mr of " + std::to_string(length) + " bytes on " + name_ +
                              " failed: " + errno_text(errno) + " (locked-memory limit? see ulimit -l)");
  }
  const RegionId rid = directory_.next_region_id();
  auto* base = static_cast<std::byte*>(addr);
  {
    std::lock_guard<std::mutex> lock(mu_);
    regions_by_lkey_[mr->lkey] = MemoryRegion{mr, rid, base, length};
  }
  return Region{id_, rid, mr->lkey, mr->rkey, base, length, access};
}

Status VerbsEndpoint::deregister_memory(const Region& region) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = regions_by_lkey_.find(region.lkey);
  if (region.node != id_ || it == regions_by_lkey_.end() || it->second.id != region.id) {
    return not_found("deregister_memory: region " + std::to_string(region.id) + " is not registered on " + name_);
  }
  // ibv_dereg_mr returns after the NIC has stopped using the region.
  if (int rc = ibv_dereg_mr(it->second.mr); rc != 0) return errno_status("deregister_memory: ibv_dereg_mr", rc);
  regions_by_lkey_.erase(it);
  return Status();
}

Status VerbsEndpoint::create_qp(rdma_cm_id* id) {
  ibv_qp_init_attr attr{};
  attr.send_cq = cq_;
  attr.recv_cq = cq_;
  attr.srq = srq_;
  attr.qp_type = IBV_QPT_RC;
  attr.sq_sig_all = 0;  // unsignaled requests complete silently unless they fail
  attr.cap.max_send_wr = tuning_.max_send_wr;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  uint8_t ack_timeout = tuning_.ack_timeout;
  if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &ack_timeout, sizeof ack_timeout) != 0) {
    log_line(name_ + ": cannot set the ACK timeout (" + errno_text(errno) + "); using the kernel's");
  }
  if (rdma_create_qp(id, pd_, &attr) != 0) return errno_status(name_ + ": rdma_create_qp", errno);
  return Status();
}

rdma_conn_param VerbsEndpoint::conn_param(const void* private_data, uint8_t private_data_len) const {
  rdma_conn_param p{};
  p.private_data = private_data;
  p.private_data_len = private_data_len;
  p.responder_resources = rd_atomic_;
  p.initiator_depth = rd_atomic_;
  p.retry_count = tuning_.retry_count;
  p.rnr_retry_count = tuning_.rnr_retry_count;
  return p;
}

void VerbsEndpoint::tune_established_qp(ibv_qp* qp) {
  // rdma_cm leaves min_rnr_timer at 0, which IB encodes as the longest
  // delay (655 ms per RNR retry); RTS->RTS may change it.
  ibv_qp_attr attr{};
  attr.min_rnr_timer = tuning_.min_rnr_timer;
  if (int rc = ibv_modify_qp(qp, &attr, IBV_QP_MIN_RNR_TIMER); rc != 0) {
    // A peer's first request may already have failed and moved the QP to
    // the error state; only a QP that is still usable deserves a warning.
    ibv_qp_attr now{};
    ibv_qp_init_attr init{};
    if (ibv_query_qp(qp, &now, IBV_QP_STATE, &init) != 0 || now.qp_state != IBV_QPS_ERR) {
      log_line(name_ + ": cannot set min_rnr_timer: " + errno_text(rc));
    }
  }
}

void VerbsEndpoint::destroy_connection_locked(Connection* c, WcStatus status) {
  while (c->fifo_count > 0) {
    const uint32_t index = c->fifo[c->fifo_head];
    c->fifo_head = (c->fifo_head + 1) % static_cast<uint32_t>(c->fifo.size());
    --c->fifo_count;
    SendSlot& s = send_slots_[index];
    if (!s.busy) continue;
    Completion comp;
    comp.wr_id = s.user_wr_id;
    comp.op = s.op;
    comp.status = status;
    comp.peer = s.peer;
    synthesized_.push_back(comp);
    s.busy = false;
    ++s.generation;  // a late completion of this request is now recognisably stale
    free_send_.push_back(index);
  }
  if (c->qp != nullptr) by_qp_num_.erase(c->qp->qp_num);
  auto it = by_peer_.find(c->peer);
  if (it != by_peer_.end() && it->second == c) by_peer_.erase(it);
  if (role_ == Role::kServer) directory_.release_client(c->peer, c->token);
  if (c->id != nullptr) {
    rdma_disconnect(c->id);  // fails harmlessly when never or no longer connected
    if (c->qp != nullptr) rdma_destroy_qp(c->id);
    rdma_destroy_id(c->id);
  }
  auto owned = std::find_if(connections_.begin(), connections_.end(),
                            [c](const std::unique_ptr<Connection>& p) { return p.get() == c; });
  if (owned != connections_.end()) connections_.erase(owned);
}

void VerbsEndpoint::crash() {
  crashed_.store(true, std::memory_order_release);
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& c : connections_) {
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_ERR;
    if (c->qp != nullptr) ibv_modify_qp(c->qp, &attr, IBV_QP_STATE);
    c->broken = true;
  }
}

}  // namespace locus::verbs
