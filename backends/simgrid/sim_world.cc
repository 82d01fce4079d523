// World: nodes, submission of work to executor actors, and resource usage.
#include "backends/simgrid/sim_world.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace locus::simgrid_backend {

bool local_buffer_ok(const SimNode& node, const LocalBuf& buf) {
  const SimRegion* found = node.region(buf.lkey);
  if (found == nullptr) return false;
  auto* p = static_cast<const std::byte*>(buf.addr);
  const SimRegion& r = *found;
  return buf.length == 0 || (p >= r.base && range_within(static_cast<uint64_t>(p - r.base), buf.length, r.length));
}

const SimRegion* find_remote(SimNode& target, const WorkRequest& wr) {
  const SimRegion* found = target.region(wr.remote.region);
  if (found == nullptr) return nullptr;
  const SimRegion& r = *found;
  const Access need = required_access(wr.op);
  if (r.rkey != wr.remote.rkey || (r.access & need) != need ||
      !range_within(wr.remote.offset, op_bytes(wr), r.length)) {
    return nullptr;
  }
  return &r;
}

Connection& connection_to(SimNode& from, NodeId to) {
  if (from.last_conn != nullptr && from.last_peer == to) return *from.last_conn;
  Connection* c = nullptr;
  const std::vector<NodeId>& peers = from.active_peers;
  for (size_t i = 0; i < peers.size(); ++i) {
    if (peers[i] == to) {
      c = from.active_connections[i];
      break;
    }
  }
  if (c == nullptr) c = &from.world->open_connection(from, to);
  from.last_peer = to;
  from.last_conn = c;
  return *c;
}

Connection& World::open_connection(SimNode& from, NodeId to) {
  Connection* c;
  if (free_connections_.empty()) {
    connections_.push_back(std::make_unique<Connection>());
    c = connections_.back().get();
  } else {
    c = free_connections_.back();
    free_connections_.pop_back();
  }
  c->owner = &from;
  c->peer = to;
  from.active_connections.push_back(c);
  from.active_peers.push_back(to);
  if (SimNode* peer = node(to)) {
    note_post_between_clients(from, *peer);
    // A pair's first connection sets up its queue pair, on both NICs.
    if (platform_.nic.qp_cache_entries > 0 && peer != &from) {
      SimNode& lo = from.id < peer->id ? from : *peer;
      if (lo.qp_peers.insert(from.id < peer->id ? peer->id : from.id).second) {
        ++from.nic->qps;
        if (peer->nic != from.nic) ++peer->nic->qps;
      }
    }
  }
  return *c;
}

void World::release_if_idle(Connection& c) {
  if (c.completing != c.next_ticket || c.actor_outstanding > 0 || c.waiting_recv || !c.effects.empty() ||
      !c.completions.empty()) {
    return;
  }
  SimNode& from = *c.owner;
  std::vector<Connection*>& active = from.active_connections;
  std::vector<NodeId>& peers = from.active_peers;
  for (size_t i = 0; i < active.size(); ++i) {
    if (peers[i] == c.peer) {  // one connection per peer
      active[i] = active.back();
      active.pop_back();
      peers[i] = peers.back();
      peers.pop_back();
      break;
    }
  }
  if (from.last_conn == &c) {
    from.last_conn = nullptr;
    from.last_peer = kInvalidNode;
  }
  c.next_ticket = c.serving = c.completing = 0;
  c.owner = nullptr;
  c.peer = kInvalidNode;
  free_connections_.push_back(&c);  // its condition variable, if any, has no waiter and stays
}

uint64_t World::request_bytes(const WorkRequest& wr) const {
  const bool carries_payload = wr.op == Opcode::kWrite || wr.op == Opcode::kWriteWithImm || wr.op == Opcode::kSend;
  return options_.header_bytes + (carries_payload ? wr.local.length : 0) +
         (wr.op == Opcode::kCas || wr.op == Opcode::kFaa ? 16 : 0);
}

uint64_t World::response_bytes(const WorkRequest& wr, bool success) const {
  if (wr.op == Opcode::kRead && success) return options_.header_bytes + wr.local.length;
  return options_.header_bytes + (wr.op == Opcode::kCas || wr.op == Opcode::kFaa ? 8 : 0);
}

Nanos World::service_ns(const WorkRequest& wr, const SimNode& target) const {
  const scenario::NicSpec& nic = platform_.nic;
  if (nic.qp_cache_entries > 0) {
    // Beyond its curve (and address-translation misses): fetching the
    // queue pair's state, when the NIC's memory cannot hold them all.
    const double ns = static_cast<double>(curve_service_ns(wr, target)) + nic.qp_extra_ns(target.nic->qps);
    return std::max<Nanos>(1, static_cast<Nanos>(std::llround(ns)));
  }
  return curve_service_ns(wr, target);
}

Nanos World::curve_service_ns(const WorkRequest& wr, const SimNode& target) const {
  const scenario::NicSpec& nic = platform_.nic;
  const uint32_t len = op_bytes(wr);
  switch (wr.op) {
    case Opcode::kRead: {
      const Nanos curve_ns = nic.read.service_ns(len);
      if (nic.atc_reach_bytes == 0) return curve_ns;
      const double ns = static_cast<double>(curve_ns) + nic.atc_extra_ns(target.nic->readable_bytes);
      return std::max<Nanos>(1, static_cast<Nanos>(std::llround(ns)));
    }
    case Opcode::kWrite:
      return nic.write.service_ns(len);
    case Opcode::kCas:
    case Opcode::kFaa:
      return nic.atomic.service_ns(len);
    default:
      return nic.recv.service_ns(len);
  }
}

void SimNode::complete(const Completion& c) {
  cq.push_back(c);
  CqWaiter* w = first_waiter;  // one waiter per completion
  if (w == nullptr) return;
  remove_waiter(w);
  world->note_wake(*this);
  w->actor->resume();  // the node's timeout timer stays: it fires rarely
}

void SimNode::add_waiter(CqWaiter* w) {
  w->prev = last_waiter;
  w->next = nullptr;
  (last_waiter == nullptr ? first_waiter : last_waiter->next) = w;
  last_waiter = w;
  w->queued = true;
}

void SimNode::remove_waiter(CqWaiter* w) {
  (w->prev == nullptr ? first_waiter : w->prev->next) = w->next;
  (w->next == nullptr ? last_waiter : w->next->prev) = w->prev;
  w->prev = w->next = nullptr;
  w->queued = false;
}

void SimNode::arm_timeout(double deadline_s) {
  if (timeout_timer != nullptr) {
    if (timeout_at_s <= deadline_s) return;
    timeout_timer->remove();
  }
  timeout_at_s = deadline_s;
  timeout_timer = simgrid::kernel::timer::Timer::set(deadline_s, [this] {
    timeout_timer = nullptr;
    fire_timeouts();
  });
}

void SimNode::fire_timeouts() {
  const double now = engine_clock_s();
  double next = -1;
  for (CqWaiter* w = first_waiter; w != nullptr;) {
    CqWaiter* later = w->next;
    if (w->deadline_s <= now) {
      remove_waiter(w);
      world->note_wake(*this);
      w->actor->resume();
    } else {
      next = next < 0 ? w->deadline_s : std::min(next, w->deadline_s);
    }
    w = later;
  }
  if (next >= 0) arm_timeout(next);
}

CqWaiter::CqWaiter(SimNode& n) : node(n), actor(sg4::Actor::self()) {}

CqWaiter::~CqWaiter() {
  if (queued) node.remove_waiter(this);
}

void CqWaiter::block_until(double deadline) {
  deadline_s = deadline;
  node.add_waiter(this);
  node.arm_timeout(deadline);
  // Resumed exactly once, by whichever takes this waiter off the queue:
  // the first completion or the node's timeout timer. Both run in maestro
  // or, from an executor, as a simcall handled after this suspension, so
  // the resume never comes before it.
  sg4::this_actor::suspend();
}

void track_engine_clock() {
  // The callback outlives engines (SimGrid keeps it process-wide): register it once.
  static const bool registered = [] {
    sg4::Engine::on_time_advance_cb([](double) { tracked_clock_s = sg4::Engine::get_clock(); });
    return true;
  }();
  (void)registered;
  tracked_clock_s = sg4::Engine::get_clock();
}

NativeActivity::NativeActivity(World* world, double ends_by_s) : world_(world) {
  if (world_ != nullptr) it_ = world_->native_ends_.insert(ends_by_s);
}

NativeActivity::~NativeActivity() {
  if (world_ != nullptr) world_->native_ends_.erase(it_);
}

void settle_debt() {
  ActorState* a = current_actor();
  if (a == nullptr || a->debt_s <= 0) return;
  const double d = a->debt_s;
  a->debt_s = 0;
  NativeActivity nap(a->world, engine_clock_s() + d);
  sg4::this_actor::sleep_for(d);
}

void World::actor_started(SimNode& node) {
  ++node.actors;
  if (host_actors_.size() <= node.host_index) host_actors_.resize(node.host_index + 1, 0);
  ++host_actors_[node.host_index];
}

void World::actor_ended(SimNode& node) {
  --node.actors;
  --host_actors_[node.host_index];
}

Nanos World::now_ns() const { return static_cast<Nanos>(std::llround((engine_clock_s() - start_s_) * 1e9)); }

Region World::add_region(SimNode& node, std::byte* addr, uint64_t length, Access access) {
  std::lock_guard<ShortMutex> lock(regions_mu_);
  const auto id = static_cast<RegionId>(regions_.size());
  RegionSlot slot;
  slot.owner = &node;
  slot.region = {addr, length, access, make_rkey(id)};
  regions_.push_back(slot);
  if ((access & kRemoteRead) != 0) node.nic->readable_bytes += length;
  return Region{node.id, id, id, slot.region.rkey, addr, length, access};
}

bool World::remove_region(const SimNode& node, RegionId id) {
  std::lock_guard<ShortMutex> lock(regions_mu_);
  if (id >= regions_.size() || regions_[id].owner != &node) return false;
  regions_[id].owner = nullptr;
  if ((regions_[id].region.access & kRemoteRead) != 0) node.nic->readable_bytes -= regions_[id].region.length;
  ++deregistrations_;
  return true;
}

bool World::local_buffer_still_ok(InFlight& f) const {
  if (f.checked_deregistrations == deregistrations_) return true;
  if (!local_buffer_ok(*f.from, f.wr.local)) return false;
  f.checked_deregistrations = deregistrations_;
  return true;
}

uint32_t World::make_rkey(RegionId id) const {
  uint64_t x = (static_cast<uint64_t>(id) << 32) ^ (options_.seed * 0x9E3779B97F4A7C15ULL);
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 29;
  return static_cast<uint32_t>(x) | 1u;
}

StatusOr<SimNode*> World::add_node(const std::string& name, bool is_server, SimNode* host_of) {
  auto node = std::make_unique<SimNode>();
  node->world = this;
  node->id = static_cast<NodeId>(nodes_.size());
  node->name = name;
  node->is_server = is_server;
  if (host_of != nullptr) {
    node->host = host_of->host;
    node->host_index = host_of->host_index;
    node->nic_host = host_of->nic_host;
    node->nic = host_of->nic;
    node->owns_host = false;
  } else if (is_server) {
    if (next_server_host_ >= server_hosts_.size()) {
      return invalid_argument("simgrid: node " + name + " needs a server host, but the platform has " +
                              std::to_string(server_hosts_.size()) + " servers");
    }
    node->host_index = next_server_host_;
    node->host = server_hosts_[next_server_host_++];
  } else {
    if (client_hosts_.empty()) {
      return invalid_argument("simgrid: node " + name + " needs a client host, but platform.client_hosts is 0");
    }
    const uint32_t c = next_client_host_++ % static_cast<uint32_t>(client_hosts_.size());
    node->host_index = static_cast<uint32_t>(server_hosts_.size()) + c;
    node->host = client_hosts_[c];
  }
  if (host_of == nullptr) {
    if (platform_.nic.model == scenario::NicModel::kProcessorSharing) {
      node->nic_host = sg4::Host::by_name(node->host->get_name() + ".nic");
    }
    // One NIC per host: the clients a client host runs share its NIC's
    // budgets, as its threads share one HCA.
    if (host_nics_.size() <= node->host_index) host_nics_.resize(node->host_index + 1, nullptr);
    NicQueues*& nic = host_nics_[node->host_index];
    if (nic == nullptr) {
      nics_.push_back(std::make_unique<NicQueues>());
      nic = nics_.back().get();
      nic->configure(platform_.nic.rdma_share_with_verbs, platform_.nic.verbs_share_with_rdma);
    }
    node->nic = nic;
  }
  node->region_table = &regions_;
  node->host_cores = static_cast<uint32_t>(node->host->get_core_count());
  node->mu = sg4::Mutex::create();
  node->recv_cv = sg4::ConditionVariable::create();
  node->work_cv = sg4::ConditionVariable::create();
  nodes_.push_back(std::move(node));
  return nodes_.back().get();
}

void World::submit(SimNode& from, std::unique_ptr<Batch> batch) {
  from.pending.push_back(std::move(batch));
  if (from.idle_executors > 0) {
    from.work_cv->notify_one();
    return;
  }
  // Every executor is busy carrying earlier batches: add one. Executors
  // are bounded by max_send_wr, since each carries at least one request.
  ++from.executors;
  SimNode* node = &from;
  sg4::Actor::create(from.name + ".nic" + std::to_string(from.executors), from.host, [this, node] {
    executor_loop(*node);
  })->daemonize();
}

void World::run_deferred(SimNode& node) {
  while (!node.deferred.empty()) {
    std::unique_ptr<Batch> batch = std::move(node.deferred.front());
    node.deferred.pop_front();
    execute_batch(node, *batch);
  }
}

void World::release_deferred(SimNode& node) {
  while (!node.deferred.empty()) {
    std::unique_ptr<Batch> batch = std::move(node.deferred.front());
    node.deferred.pop_front();
    submit(node, std::move(batch));
  }
}

void World::executor_loop(SimNode& node) {
  ++live_executors_;
  while (true) {
    if (node.pending.empty()) {
      if (stopping_) break;
      std::unique_lock<sg4::Mutex> lock(*node.mu);
      ++node.idle_executors;
      while (node.pending.empty() && !stopping_) node.work_cv->wait(lock);
      --node.idle_executors;
      continue;
    }
    std::unique_ptr<Batch> batch = std::move(node.pending.front());
    node.pending.pop_front();
    execute_batch(node, *batch);
  }
  --live_executors_;
}

void World::stop_executors() {
  stopping_ = true;
  // Only idle executors wait on work_cv. A notify is a simcall even with
  // no one to wake, and the last worker calls this every simulated
  // millisecond until the daemons end: at 49,024 nodes, one per node made
  // the run's end cost seconds.
  for (auto& n : nodes_) {
    if (n->idle_executors > 0) n->work_cv->notify_all();
  }
}

std::vector<ResourceUsage> World::usage(double duration_s) const {
  std::vector<ResourceUsage> out;
  if (duration_s <= 0) return out;
  // Per server host, named after the endpoint that owns it; the busy
  // time and bytes of every endpoint on the host count.
  struct HostTotals {
    double cpu_busy_s = 0;
    uint64_t bytes_in = 0, bytes_out = 0;
  };
  std::unordered_map<uint32_t, HostTotals> totals;
  for (const auto& n : nodes_) {
    HostTotals& t = totals[n->host_index];
    t.cpu_busy_s += n->cpu_busy_s;
    t.bytes_in += n->bytes_in;
    t.bytes_out += n->bytes_out;
  }
  for (const auto& n : nodes_) {
    if (!n->is_server || !n->owns_host) continue;
    out.push_back({n->name + ".nic.rdma", "nic", n->nic->busy_s(NicQueues::kRdma) / duration_s});
    out.push_back({n->name + ".nic.send", "nic", n->nic->busy_s(NicQueues::kSend) / duration_s});
    out.push_back({n->name + ".nic.recv", "nic", n->nic->busy_s(NicQueues::kRecv) / duration_s});
    out.push_back({n->name + ".cpu", "cpu",
                   totals[n->host_index].cpu_busy_s / (duration_s * static_cast<double>(n->host->get_core_count()))});
  }
  // Links and PCIe: bytes carried over capacity, per direction, counted by
  // the executors (every byte to or from a server crosses both).
  const double link_bytes_s = platform_.host_link.bandwidth_gbps * 1e9 / 8.0 * duration_s;
  const double pcie_bytes_s = platform_.pcie.bandwidth_gbps * 1e9 / 8.0 * duration_s;
  for (const auto& n : nodes_) {
    if (!n->is_server || !n->owns_host) continue;
    const HostTotals& t = totals[n->host_index];
    out.push_back({n->name + ".link.in", "link", static_cast<double>(t.bytes_in) / link_bytes_s});
    out.push_back({n->name + ".link.out", "link", static_cast<double>(t.bytes_out) / link_bytes_s});
    out.push_back({n->name + ".pcie", "pcie", static_cast<double>(std::max(t.bytes_in, t.bytes_out)) / pcie_bytes_s});
  }
  // Client hosts (the compute servers; named after their SimGrid hosts,
  // chost<i>): the cores, the NIC and the link every client on the host
  // shares. Their own kinds, so the server lines above keep their means.
  std::vector<bool> listed(server_hosts_.size() + client_hosts_.size(), false);
  for (const auto& n : nodes_) {
    if (n->is_server || !n->owns_host || listed[n->host_index]) continue;
    listed[n->host_index] = true;
    const HostTotals& t = totals[n->host_index];
    const std::string host(n->host->get_name());
    out.push_back({host + ".cpu", "client-cpu",
                   t.cpu_busy_s / (duration_s * static_cast<double>(n->host->get_core_count()))});
    out.push_back({host + ".nic.rdma", "client-nic", n->nic->busy_s(NicQueues::kRdma) / duration_s});
    out.push_back({host + ".nic.send", "client-nic", n->nic->busy_s(NicQueues::kSend) / duration_s});
    out.push_back({host + ".nic.recv", "client-nic", n->nic->busy_s(NicQueues::kRecv) / duration_s});
    out.push_back({host + ".link.in", "client-link", static_cast<double>(t.bytes_in) / link_bytes_s});
    out.push_back({host + ".link.out", "client-link", static_cast<double>(t.bytes_out) / link_bytes_s});
  }
  return out;
}

void World::reset_usage() {
  for (auto& nic : nics_) nic->reset_busy();
  for (auto& n : nodes_) {
    n->cpu_busy_s = 0;
    n->bytes_in = n->bytes_out = 0;
  }
}

}  // namespace locus::simgrid_backend
