// The simulated life of a batch of work requests, carried by an executor
// actor of the initiating node:
//   1. request packets cross the network (SimGrid CM02 flows over PCIe,
//      host links and rack uplinks); a SEND first takes its turn on the
//      initiator NIC's verb-send budget;
//   2. on arrival each request takes, in posting order per connection, a
//      service slot on the target NIC (FCFS budgets, or processor sharing);
//   3. the request takes effect on the target's memory while the NIC
//      serves it: a READ copies its first half of cache lines when service
//      starts and the rest when it ends, so it can see a concurrent CPU
//      write part-way, exactly the tearing real NICs show;
//   4. responses (data, atomic results, ACKs) cross back, and completions
//      are delivered in posting order per connection.
#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "backends/simgrid/sim_world.h"

namespace locus::simgrid_backend {
namespace {

// A sleep that costs the simulator nothing when there is nothing to wait for.
void sleep_until(double t) {
  if (t > engine_clock_s()) sg4::this_actor::sleep_until(t);
}

void wait_turn(SimNode& from, Connection& c, uint64_t Connection::*counter, uint64_t ticket) {
  if (c.*counter == ticket) return;
  std::unique_lock<sg4::Mutex> lock(*from.mu);
  while (c.*counter != ticket) c.cv->wait(lock);
}

void advance(Connection& c, uint64_t Connection::*counter) {
  ++(c.*counter);
  c.cv->notify_all();
}

}  // namespace

void World::execute_batch(SimNode& from, Batch& batch) {
  // Flows, NIC executions and waits for turns end when the engine says.
  NativeActivity carrying(this, 0.0);
  const scenario::NicSpec& nic = platform_.nic;
  const size_t n = batch.wrs.size();
  std::vector<sg4::CommPtr> flows(n);
  std::vector<WcStatus> status(n, WcStatus::kSuccess);
  std::vector<NicQueues::Slot> slots(n);
  std::vector<Nanos> service(n, 0);
  // A request to a crashed node fails when its transport retries run out.
  std::vector<double> fails_at(n, 0);
  const double retry_exceeded_s = static_cast<double>(platform_.nic.retry_exceeded_after()) * 1e-9;
  // The ends of each flow on the wire, for the links' sharing with packets
  // (sim_events.cc). Ended when waited for, or when a crash kills the actor.
  struct OnWire {
    World* world;
    std::vector<std::pair<const SimNode*, const SimNode*>> ends;
    void start(size_t i, const SimNode& a, const SimNode& b) {
      world->flow_started(a, b);
      ends[i] = {&a, &b};
    }
    void end(size_t i) {
      if (ends[i].first != nullptr) world->flow_ended(*ends[i].first, *ends[i].second);
      ends[i] = {nullptr, nullptr};
    }
    ~OnWire() {
      for (size_t i = 0; i < ends.size(); ++i) end(i);
    }
  } on_wire{this, std::vector<std::pair<const SimNode*, const SimNode*>>(n, {nullptr, nullptr})};

  // 1. Requests onto the wire.
  for (size_t i = 0; i < n; ++i) {
    const WorkRequest& wr = batch.wrs[i];
    SimNode* target = node(wr.remote.node);
    if (from.crashed) {
      status[i] = WcStatus::kFlushed;
      continue;
    }
    if (target == nullptr || target->crashed) {
      status[i] = WcStatus::kRetryExceeded;
      if (target != nullptr) fails_at[i] = engine_clock_s() + retry_exceeded_s;
      continue;
    }
    const uint64_t bytes = request_bytes(wr);
    if (wr.op == Opcode::kSend) {
      const double s = static_cast<double>(nic.send.service_ns(wr.local.length)) * 1e-9;
      sleep_until(from.nic->reserve(NicQueues::kSend, engine_clock_s(), s).finish_s);
    }
    from.bytes_out += bytes;
    target->bytes_in += bytes;
    on_wire.start(i, from, *target);
    flows[i] = sg4::Comm::sendto_async(from.host, target->host, bytes);
  }

  // 2. Arrival, and a NIC slot in posting order per connection.
  for (size_t i = 0; i < n; ++i) {
    const WorkRequest& wr = batch.wrs[i];
    Connection& conn = connection_to(from, wr.remote.node);
    if (flows[i]) flows[i]->wait();
    on_wire.end(i);
    wait_turn(from, conn, &Connection::serving, batch.tickets[i]);
    if (status[i] == WcStatus::kSuccess) {
      SimNode& target = *node(wr.remote.node);
      const Nanos ns = service_ns(wr, target);
      service[i] = ns;
      const double now = engine_clock_s();
      if (nic.model == scenario::NicModel::kFcfs) {
        slots[i] = target.nic->reserve(is_rdma(wr.op) ? NicQueues::kRdma : NicQueues::kRecv, now, ns * 1e-9);
      }
    }
    advance(conn, &Connection::serving);
  }

  // 3. Service and effect on the target, then the response onto the wire.
  for (size_t i = 0; i < n; ++i) {
    flows[i] = nullptr;
    if (status[i] != WcStatus::kSuccess) continue;
    const WorkRequest& wr = batch.wrs[i];
    SimNode& target = *node(wr.remote.node);
    // Requests posted earlier on this connection by the event-driven
    // datapath take effect first.
    Connection& conn = connection_to(from, wr.remote.node);
    if (!conn.effects.empty()) {
      std::unique_lock<sg4::Mutex> lock(*from.mu);
      while (!conn.effects.empty()) conn.cv->wait(lock);
    }
    if (nic.model == scenario::NicModel::kProcessorSharing) {
      const double start = engine_clock_s();
      sg4::Exec::init()->set_host(target.nic_host)->set_flops_amount(static_cast<double>(service[i]))->start()->wait();
      slots[i] = {start, engine_clock_s()};
      target.nic->account(is_rdma(wr.op) ? NicQueues::kRdma : NicQueues::kRecv, static_cast<double>(service[i]) * 1e-9);
    }
    status[i] = apply(from, target, wr, slots[i]);
    if (target.crashed) {
      status[i] = WcStatus::kRetryExceeded;
      fails_at[i] = engine_clock_s() + retry_exceeded_s;
      continue;
    }
    const uint64_t bytes = response_bytes(wr, status[i] == WcStatus::kSuccess);
    target.bytes_out += bytes;
    from.bytes_in += bytes;
    on_wire.start(i, target, from);
    flows[i] = sg4::Comm::sendto_async(target.host, from.host, bytes);
  }

  // 4. Completions, in posting order per connection.
  for (size_t i = 0; i < n; ++i) {
    const WorkRequest& wr = batch.wrs[i];
    if (flows[i]) flows[i]->wait();
    on_wire.end(i);
    if (fails_at[i] > 0) sleep_until(fails_at[i]);
    Connection& conn = connection_to(from, wr.remote.node);
    wait_turn(from, conn, &Connection::completing, batch.tickets[i]);
    --from.outstanding_send;
    --conn.actor_outstanding;
    if (wr.signaled || status[i] != WcStatus::kSuccess) {
      Completion c;
      c.wr_id = wr.wr_id;
      c.op = wr.op;
      c.status = status[i];
      c.peer = wr.remote.node;
      c.byte_len = wr.local.length;
      from.complete(c);
    }
    advance(conn, &Connection::completing);
    release_if_idle(conn);
  }
}

WcStatus World::apply(SimNode& from, SimNode& target, const WorkRequest& wr, const NicQueues::Slot& slot) {
  auto* local = static_cast<std::byte*>(wr.local.addr);
  if (!target.fenced.empty() && target.fenced.count(from.id) != 0) {
    sleep_until(slot.finish_s);
    return WcStatus::kRetryExceeded;  // its connection is gone (Transport::fence_peer)
  }
  if (wr.op == Opcode::kSend) {
    sleep_until(slot.finish_s);
    const std::optional<RecvRequest> recv = take_recv(target);
    if (!recv) return WcStatus::kRnrRetryExceeded;
    return deliver_message(from, target, wr, *recv);
  }
  const uint64_t len = op_bytes(wr);
  // Only a READ over more than one cache line can tear; everything else
  // takes effect once, when its service ends.
  const bool tearable = wr.op == Opcode::kRead && len > kCacheLine;
  sleep_until(tearable ? slot.start_s : slot.finish_s);
  const SimRegion* r = find_remote(target, wr);
  if (r == nullptr || target.crashed) return WcStatus::kRemoteAccessError;
  std::byte* remote = r->base + wr.remote.offset;
  if (tearable) {
    // Torn-read model: first half of the lines now, the rest at the end.
    const uint64_t lines = (len + kCacheLine - 1) / kCacheLine;
    const uint64_t first = (lines / 2) * kCacheLine;
    std::memcpy(local, remote, first);
    sleep_until(slot.finish_s);
    r = find_remote(target, wr);
    if (r == nullptr) return WcStatus::kRemoteAccessError;
    std::memcpy(local + first, r->base + wr.remote.offset + first, len - first);
    return WcStatus::kSuccess;
  }
  switch (wr.op) {
    case Opcode::kRead:
      if (len > 0) std::memcpy(local, remote, len);
      return WcStatus::kSuccess;
    case Opcode::kWrite:
      if (len > 0) std::memcpy(remote, local, len);
      return WcStatus::kSuccess;
    case Opcode::kWriteWithImm: {
      const std::optional<RecvRequest> recv = take_recv(target);
      if (!recv) return WcStatus::kRnrRetryExceeded;
      r = find_remote(target, wr);  // the wait may have taken time
      if (r == nullptr) {
        target.recvs.push_front(*recv);  // a failed WRITE consumes no receive
        ++target.posted_recvs;
        return WcStatus::kRemoteAccessError;
      }
      if (len > 0) std::memcpy(r->base + wr.remote.offset, local, len);
      return deliver_message(from, target, wr, *recv);
    }
    case Opcode::kCas:
    case Opcode::kFaa: {
      if (reinterpret_cast<uintptr_t>(remote) % 8 != 0) return WcStatus::kRemoteOperationError;
      uint64_t old;
      std::memcpy(&old, remote, 8);
      const uint64_t next = wr.op == Opcode::kCas ? (old == wr.compare_add ? wr.swap : old) : old + wr.compare_add;
      std::memcpy(remote, &next, 8);
      std::memcpy(local, &old, 8);
      return WcStatus::kSuccess;
    }
    default:
      return WcStatus::kRemoteOperationError;
  }
}

std::optional<RecvRequest> World::take_recv(SimNode& target) {
  // Every simcall (a mutex unlock included) lets other actors run, so the
  // receive is popped before the lock is released, never after.
  const double deadline = engine_clock_s() + static_cast<double>(options_.rnr_timeout) * 1e-9;
  std::unique_lock<sg4::Mutex> lock(*target.mu);
  // RNR: the initiator retries until a receive is posted or the budget ends.
  while (target.recvs.empty() && !target.crashed) {
    if (target.recv_cv->wait_until(lock, deadline) == std::cv_status::timeout) break;
  }
  if (target.recvs.empty()) return std::nullopt;
  const RecvRequest recv = target.recvs.front();
  target.recvs.pop_front();
  --target.posted_recvs;
  return recv;
}

WcStatus World::deliver_message(SimNode& from, SimNode& target, const WorkRequest& wr, const RecvRequest& recv) {
  Completion rc;
  rc.wr_id = recv.wr_id;
  rc.op = Opcode::kRecv;
  rc.peer = from.id;
  WcStatus sender = WcStatus::kSuccess;
  if (wr.op == Opcode::kWriteWithImm) {
    rc.byte_len = wr.local.length;
    rc.imm = wr.imm;
    rc.has_imm = true;
  } else if (!local_buffer_ok(target, recv.local)) {
    // The receiver deregistered the buffer it had posted (its actor is gone).
    rc.status = WcStatus::kFlushed;
    sender = WcStatus::kRemoteOperationError;
  } else if (wr.local.length > recv.local.length) {
    rc.status = WcStatus::kLocalLengthError;
    sender = WcStatus::kRemoteOperationError;
  } else {
    if (wr.local.length > 0) std::memcpy(recv.local.addr, wr.local.addr, wr.local.length);
    rc.byte_len = wr.local.length;
    rc.imm = wr.imm;
  }
  target.complete(rc);
  return sender;
}

}  // namespace locus::simgrid_backend
