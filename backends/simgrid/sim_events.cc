// The event-driven datapath. Most messages fit one packet (READ requests,
// ACKs, RPCs, values up to an MTU); for those every moment of a work
// request is known when it is posted: the packet crosses its route's
// links first-come-first-served, takes the next slot of the target NIC's
// budget, takes effect on the target's memory while the NIC serves it,
// and its response crosses back. Events in the World's own heap, run by
// one SimGrid kernel timer set at the earliest (in maestro, not in an
// actor), apply the effect and deliver the completion at those moments,
// so a request costs the simulator a few heap operations instead of actor
// switches and flows. Requests with a longer message, and every
// request under the processor-sharing NIC model, go to the executor
// actors of sim_datapath.cc instead.
//
// Ordering per connection: effects and completions are two queues in
// ticket (posting) order; an event drains its connection's queues up to
// the first request whose moment has not come, so equal times never
// reorder anything. Drains run only in maestro (events), never inside an
// actor, because a simcall made by an actor (a notify) yields and could
// let another drain interleave. Which effects run before the engine's
// clock reaches them is decided in sim_run_ahead.cc.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "backends/simgrid/sim_world.h"
#include "core/common/check.h"

namespace locus::simgrid_backend {
namespace {

namespace timer = simgrid::kernel::timer;

enum Hop : uint32_t { kPcieUp = 0, kPcieDown = 1, kLinkUp = 2, kLinkDown = 3 };

}  // namespace

bool World::packet_path_ok(SimNode& from, std::span<const WorkRequest> batch) {
  if (platform_.packet_bytes == 0 || platform_.nic.model != scenario::NicModel::kFcfs) return false;
  for (const WorkRequest& wr : batch) {
    if (std::max(request_bytes(wr), response_bytes(wr, true)) > platform_.packet_bytes) return false;
    if (connection_to(from, wr.remote.node).actor_outstanding > 0) return false;
  }
  return true;
}

void World::post(SimNode& from, std::span<const WorkRequest> batch) {
  if (packet_path_ok(from, batch)) {
    // Posted at the actor's own time: it may owe CPU time (ActorState).
    const double at_s = actor_now_s();
    for (const WorkRequest& wr : batch) {
      launch(from, connection_to(from, wr.remote.node), wr, at_s);
    }
    return;
  }
  settle_debt();  // executors start at the engine's time
  auto b = std::make_unique<Batch>();
  b->wrs.assign(batch.begin(), batch.end());
  b->tickets.reserve(batch.size());
  for (const WorkRequest& wr : batch) {
    Connection& c = connection_to(from, wr.remote.node);
    // Creating a condition variable is a simcall, which lets other actors
    // run: made, as ever, on the first executor-carried post to each peer
    // (so actors interleave as they always have), kept by a pooled connection.
    if (from.executor_peers.insert(wr.remote.node).second || !c.cv) c.cv = sg4::ConditionVariable::create();
    b->tickets.push_back(c.next_ticket++);
    ++c.actor_outstanding;
  }
  if (from.is_server) {
    submit(from, std::move(b));
  } else {
    from.deferred.push_back(std::move(b));
  }
}

InFlight* World::new_flight() {
  if (free_flights_.empty()) {
    flights_.push_back(std::make_unique<InFlight>());
    return flights_.back().get();
  }
  InFlight* f = free_flights_.back();
  free_flights_.pop_back();
  return f;
}

size_t World::route(const SimNode& a, const SimNode& b, PacketLink** hops) {
  if (a.host == b.host) return 0;
  size_t n = 0;
  PacketLink* links = packet_links_.data();
  const size_t racks_at = 4 * (server_hosts_.size() + client_hosts_.size());
  hops[n++] = &links[4 * a.host_index + kPcieUp];
  hops[n++] = &links[4 * a.host_index + kLinkUp];
  if (racks_ > 0) {
    const uint32_t per_rack = std::max<uint32_t>(platform_.hosts_per_rack, 1);
    const uint32_t ra = a.host_index / per_rack, rb = b.host_index / per_rack;
    if (ra != rb) {
      hops[n++] = &links[racks_at + 2 * ra];
      hops[n++] = &links[racks_at + 2 * rb + 1];
    }
  }
  hops[n++] = &links[4 * b.host_index + kLinkDown];
  hops[n++] = &links[4 * b.host_index + kPcieDown];
  return n;
}

double World::packet_leg(const SimNode& a, const SimNode& b, uint64_t bytes, double t_s) {
  PacketLink* hops[6];
  const size_t n = route(a, b, hops);
  if (n == 0) return t_s;
  // Cut-through: each link is busy for the packet's serialisation and
  // passes its head on after the link latency; the tail arrives one
  // serialisation on the slowest link after the head.
  const double size = static_cast<double>(bytes);
  double slowest = 0;
  for (size_t i = 0; i < n; ++i) {
    PacketLink& l = *hops[i];
    const uint32_t queued = l.packets_after(t_s);
    const double ser = size / (l.flows == 0 ? l.bytes_per_s : packet_share(l, queued + 1));
    const double start = std::max(t_s, l.free_s);
    l.free_s = start + ser;
    l.packet_ends.push_back(l.free_s);
    note_packet_bytes(l, size, start);
    t_s = start + l.latency_s;
    slowest = std::max(slowest, ser);
  }
  return t_s + slowest;
}

// Packets and flows on one link. Messages up to platform.packet_bytes
// queue first-come-first-served on a PacketLink; longer ones are CM02
// flows on the same direction of SimGrid's link. Sharing the link as
// max-min fairness would between n flows and k queued packets (each a
// message, as all are when packet_bytes = 0):
//  * the packets are serialised at the rate the flows leave free, and at
//    least at the k messages' fair share, k / (n + k) of C;
//  * the flows' capacity is C less the packets' rate over the last
//    window, and at least their own share, n / (n + k) of C.
// So the link carries no more than C, and neither kind starves the other.
// Links that carry only packets or only flows are unchanged: nothing here
// runs until a flow crosses a link that packets cross too.
namespace {
// The window over which the packets' rate is measured, and the least
// change of the flows' capacity worth telling SimGrid (a fraction of C).
// Not hardware figures: halving or doubling the window moves the NAM
// coarse-grained scan rate (scenarios/nam/range.toml) by 0.2%
// (docs/simulator.md).
constexpr double kShareWindowS = 5e-6;
constexpr double kShareStep = 0.01;

// Closes the packets' rate window at `at_s` if it has run its length;
// true if it did.
bool close_window(PacketLink& l, double at_s) {
  if (at_s - l.window_start_s < kShareWindowS) return false;
  l.packet_bytes_per_s = l.window_bytes / (at_s - l.window_start_s);
  l.window_start_s = at_s;
  l.window_bytes = 0;
  return true;
}
}  // namespace

double World::packet_share(PacketLink& l, uint32_t packets) {
  const double c = l.bytes_per_s;
  const double left = c - l.flow_link->get_usage();
  const double fair = c * packets / (l.flows + packets);
  if (left >= fair) return left;
  // The packets take their fair share from the flows: tell SimGrid soon.
  request_share(l);
  return fair;
}

double World::flow_share(PacketLink& l) const {
  const double c = l.bytes_per_s;
  if (l.flows == 0) return c;
  const uint32_t packets = l.packets_after(engine_clock_s());
  const double share = packets == 0 ? c - l.packet_bytes_per_s : c * l.flows / (l.flows + packets);
  return std::max(share, kShareStep * c);  // SimGrid needs some capacity
}

void World::note_packet_bytes(PacketLink& l, double bytes, double at_s) {
  l.window_bytes += bytes;
  if (close_window(l, at_s) && l.flows > 0) request_share(l);
}

void World::request_share(PacketLink& l) {
  if (l.share_pending || tearing_down_) return;
  if (std::abs(flow_share(l) - l.flow_bytes_per_s) < kShareStep * l.bytes_per_s) return;
  l.share_pending = true;
  pending_shares_.push_back(&l);
  if (shares_timer_ == nullptr) {
    shares_timer_ = timer::Timer::set(engine_clock_s(), [this] {
      shares_timer_ = nullptr;
      apply_shares();
    });
  }
}

void World::apply_shares() {
  for (PacketLink* l : pending_shares_) {
    l->share_pending = false;
    const double share = flow_share(*l);
    if (share == l->flow_bytes_per_s) continue;
    l->flow_bytes_per_s = share;
    l->flow_link->set_bandwidth(share);
  }
  pending_shares_.clear();
}

void World::flow_started(const SimNode& a, const SimNode& b) {
  PacketLink* hops[6];
  const size_t n = route(a, b, hops);
  for (size_t i = 0; i < n; ++i) {
    PacketLink& l = *hops[i];
    ++l.flows;
    // Packets gone quiet since the window opened count as idle time.
    close_window(l, engine_clock_s());
    // Set at once (this actor may yield: nothing of its own is half done).
    const double share = flow_share(l);
    if (share != l.flow_bytes_per_s) {
      l.flow_bytes_per_s = share;
      l.flow_link->set_bandwidth(share);
    }
  }
}

void World::flow_ended(const SimNode& a, const SimNode& b) {
  PacketLink* hops[6];
  const size_t n = route(a, b, hops);
  for (size_t i = 0; i < n; ++i) {
    --hops[i]->flows;
    if (hops[i]->flows > 0) request_share(*hops[i]);
  }
}

void World::launch(SimNode& from, Connection& c, const WorkRequest& wr, double now) {
  const uint64_t ticket = c.next_ticket++;
  InFlight& f = *new_flight();
  f.wr = wr;
  f.ticket = ticket;
  f.from = &from;
  f.target = node(wr.remote.node);
  f.conn = &c;
  f.status = WcStatus::kSuccess;
  f.half_copied = false;
  f.departed = true;
  f.checked_deregistrations = deregistrations_;  // SimTransport::post checked it
  f.start_s = f.effect_s = f.done_s = f.rnr_deadline_s = now;
  if (from.crashed) {
    f.status = WcStatus::kFlushed;
  } else if (f.target == nullptr || f.target->crashed) {
    f.status = WcStatus::kRetryExceeded;
  } else {
    const scenario::NicSpec& nic = platform_.nic;
    double sent = now;
    if (wr.op == Opcode::kSend) {
      sent = from.nic->reserve(NicQueues::kSend, now, static_cast<double>(nic.send.service_ns(wr.local.length)) * 1e-9)
                 .finish_s;
    }
    const uint64_t bytes = request_bytes(wr);
    from.bytes_out += bytes;
    f.target->bytes_in += bytes;
    if (sent > now) {
      // Its NIC sends it after the sends queued before it. Its packet
      // takes its place on the links then, not now: a link serves packets
      // in the order they reach it, and one placed now at a later time
      // would hold the link from every packet that reaches it sooner (a
      // READ's response behind a reply still waiting in the NIC).
      f.departed = false;
      f.depart_s = f.start_s = f.effect_s = sent;
    } else {
      depart(f, now);
    }
  }
  LOCUS_CHECK(c.serving == ticket);
  ++c.serving;
  c.effects.push_back(&f);
  if (c.effects.front() == &f) {
    const bool tearable = wr.op == Opcode::kRead && op_bytes(wr) > kCacheLine;
    arm(f, f.status != WcStatus::kSuccess ? now : (tearable ? f.start_s : f.effect_s));
  }
}

void World::depart(InFlight& f, double at_s) {
  const double arrival = packet_leg(*f.from, *f.target, request_bytes(f.wr), at_s);
  const double service = static_cast<double>(service_ns(f.wr, *f.target)) * 1e-9;
  const NicQueues::Slot slot =
      f.target->nic->reserve(is_rdma(f.wr.op) ? NicQueues::kRdma : NicQueues::kRecv, arrival, service);
  f.departed = true;
  f.start_s = slot.start_s;
  f.effect_s = slot.finish_s;
  f.rnr_deadline_s = slot.finish_s + static_cast<double>(options_.rnr_timeout) * 1e-9;
}

namespace {
// Min-heap order for std::push_heap/pop_heap: earliest time, then first armed.
struct Later {
  template <typename E>
  bool operator()(const E& a, const E& b) const {
    return a.at_s != b.at_s ? a.at_s > b.at_s : a.seq > b.seq;
  }
};
}  // namespace

void World::arm(InFlight& f, double at_s, Phase phase) {
  // Already due then: the pending event stays, with the phase it was armed
  // in; an effect-phase event that finds a completion only runs no earlier.
  if (f.armed_seq != 0 && f.armed_s == at_s) return;
  f.armed_seq = next_event_seq_++;
  f.armed_s = at_s;
  events_.push_back({at_s, f.armed_seq, &f, phase});
  std::push_heap(events_.begin(), events_.end(), Later{});
  if (!running_events_ && (events_timer_ == nullptr || at_s < events_timer_s_)) set_events_timer(at_s);
}

void World::set_events_timer(double at_s) {
  if (events_timer_ != nullptr) events_timer_->remove();
  events_timer_s_ = at_s;
  events_timer_ = timer::Timer::set(at_s, [this] {
    events_timer_ = nullptr;
    run_events();
  });
}

void World::run_events() {
  const double clock = engine_clock_s();
  running_events_ = true;
  // Events armed while these run, for now, run in this loop too. So do
  // later effects of one-sided requests while nothing else can happen
  // before them: they only copy memory no actor touches until the next
  // wake-up, and running them here saves the engine a round each.
  while (!events_.empty()) {
    const Event e = events_.front();
    const bool ahead = e.at_s > clock;
    // A completion never runs ahead: stop before following it (a miss).
    if (ahead && e.phase == Phase::kCompletion) break;
    if (e.f->armed_seq != e.seq) {  // stale: re-armed or finished since
      std::pop_heap(events_.begin(), events_.end(), Later{});
      events_.pop_back();
      continue;
    }
    if (ahead && !(quiet_effect(*e.f) && may_run_ahead(*e.f, e.at_s, clock))) break;
    std::pop_heap(events_.begin(), events_.end(), Later{});
    events_.pop_back();
    e.f->armed_seq = 0;
    if (ahead) {
      ++events_run_ahead_;
      ahead_until_s_ = std::max(ahead_until_s_, e.at_s);
    }
    drain(*e.f->conn, ahead ? e.at_s : clock, !ahead);
  }
  running_events_ = false;
  if (!events_.empty()) set_events_timer(events_.front().at_s);
}

bool World::advance_effect(InFlight& f, double now_s) {
  if (f.status != WcStatus::kSuccess) return true;
  SimNode& target = *f.target;
  if (target.crashed) {
    f.status = WcStatus::kRetryExceeded;
    return true;
  }
  if (!target.fenced.empty() && target.fenced.count(f.from->id) != 0) {
    f.status = WcStatus::kRetryExceeded;  // its connection is gone (Transport::fence_peer)
    return true;
  }
  if (!f.departed) {
    if (now_s < f.depart_s) {
      arm(f, f.depart_s);
      return false;
    }
    depart(f, now_s);
  }
  const WorkRequest& wr = f.wr;
  const uint64_t len = op_bytes(wr);
  auto* local = static_cast<std::byte*>(wr.local.addr);
  // Only a READ over more than one cache line can tear: it copies its
  // first half of lines when service starts and the rest when it ends.
  const bool tearable = wr.op == Opcode::kRead && len > kCacheLine;
  const uint64_t first = tearable ? ((len + kCacheLine - 1) / kCacheLine / 2) * kCacheLine : 0;
  if (tearable && !f.half_copied) {
    if (now_s < f.start_s) {
      arm(f, f.start_s);
      return false;
    }
    const SimRegion* r = find_remote(target, wr);
    if (r == nullptr) {
      f.status = WcStatus::kRemoteAccessError;
      return true;
    }
    if (!local_buffer_still_ok(f)) {
      f.status = WcStatus::kFlushed;  // the initiator dropped its buffer
      return true;
    }
    std::memcpy(local, r->base + wr.remote.offset, first);
    f.half_copied = true;
  }
  if (now_s < f.effect_s) {
    arm(f, f.effect_s);
    return false;
  }
  const bool message = wr.op == Opcode::kSend || wr.op == Opcode::kWriteWithImm;
  const SimRegion* r = wr.op == Opcode::kSend ? nullptr : find_remote(target, wr);
  if (wr.op != Opcode::kSend && r == nullptr) {
    f.status = WcStatus::kRemoteAccessError;  // a failed WRITE_WITH_IMM consumes no receive
    return true;
  }
  if (message && target.recvs.empty()) {
    if (now_s < f.rnr_deadline_s) {
      // RNR: the initiator retries until a receive is posted or its budget ends.
      if (!f.conn->waiting_recv) {
        f.conn->waiting_recv = true;
        target.rnr_waiters.push_back(f.conn);
      }
      arm(f, f.rnr_deadline_s);
      return false;
    }
    f.status = WcStatus::kRnrRetryExceeded;
    return true;
  }
  if (!message && !local_buffer_still_ok(f)) {
    f.status = WcStatus::kFlushed;
    return true;
  }
  std::byte* remote = r == nullptr ? nullptr : r->base + wr.remote.offset;
  switch (wr.op) {
    case Opcode::kRead:
      if (len > first) std::memcpy(local + first, remote + first, len - first);
      break;
    case Opcode::kWrite:
      if (len > 0) std::memcpy(remote, local, len);
      break;
    case Opcode::kCas:
    case Opcode::kFaa: {
      if (reinterpret_cast<uintptr_t>(remote) % 8 != 0) {
        f.status = WcStatus::kRemoteOperationError;
        break;
      }
      uint64_t old;
      std::memcpy(&old, remote, 8);
      const uint64_t next = wr.op == Opcode::kCas ? (old == wr.compare_add ? wr.swap : old) : old + wr.compare_add;
      std::memcpy(remote, &next, 8);
      std::memcpy(local, &old, 8);
      break;
    }
    case Opcode::kSend:
    case Opcode::kWriteWithImm: {
      const RecvRequest recv = target.recvs.front();
      target.recvs.pop_front();
      --target.posted_recvs;
      if (wr.op == Opcode::kWriteWithImm && len > 0) std::memcpy(remote, local, len);
      f.status = deliver_message(*f.from, target, wr, recv);
      break;
    }
    default:
      f.status = WcStatus::kRemoteOperationError;
  }
  return true;
}

void World::drain(Connection& c, double now, bool may_wake) {
  while (!c.effects.empty()) {
    InFlight& f = *c.effects.front();
    if (!may_wake && !quiet_effect(f)) {
      arm(f, now);  // at its moment, once the engine's clock is there
      break;
    }
    if (!advance_effect(f, now)) break;
    c.effects.pop_front();
    if (c.actor_outstanding > 0 && c.effects.empty()) {  // see execute_batch
      note_wake();
      c.cv->notify_all();
    }
    f.done_s = now;
    SimNode* target = f.target;
    if (target != nullptr && target->crashed && f.status == WcStatus::kRetryExceeded) {
      // Unanswered: it fails when its transport retries run out.
      f.done_s = now + static_cast<double>(platform_.nic.retry_exceeded_after()) * 1e-9;
    } else if (f.status != WcStatus::kFlushed && target != nullptr && !target->crashed) {
      const uint64_t bytes = response_bytes(f.wr, f.status == WcStatus::kSuccess);
      target->bytes_out += bytes;
      f.from->bytes_in += bytes;
      f.done_s = packet_leg(*target, *f.from, bytes, now);
    }
    // Completions leave in posting order: never before an earlier one.
    if (!c.completions.empty()) f.done_s = std::max(f.done_s, c.completions.back()->done_s);
    c.completions.push_back(&f);
  }
  while (!c.completions.empty()) {
    InFlight& f = *c.completions.front();
    if (f.done_s > now || !may_wake) {
      arm(f, std::max(f.done_s, now), Phase::kCompletion);
      break;
    }
    c.completions.pop_front();
    finish(f);
  }
  release_if_idle(c);
}

void World::finish(InFlight& f) {
  f.armed_seq = 0;  // a pending event of it is stale now
  SimNode& from = *f.from;
  Connection& c = *f.conn;
  --from.outstanding_send;
  WcStatus status = f.status;
  if (from.crashed && status == WcStatus::kSuccess) status = WcStatus::kFlushed;
  if (f.wr.signaled || status != WcStatus::kSuccess) {
    Completion done;
    done.wr_id = f.wr.wr_id;
    done.op = f.wr.op;
    done.status = status;
    done.peer = f.wr.remote.node;
    done.byte_len = f.wr.local.length;
    from.complete(done);
  }
  ++c.completing;
  if (c.actor_outstanding > 0) {
    note_wake();
    c.cv->notify_all();
  }
  free_flights_.push_back(&f);
}

void World::receives_posted(SimNode& node) {
  if (node.rnr_waiters.empty()) return;
  const double now = engine_clock_s();
  for (Connection* c : node.rnr_waiters) {
    c->waiting_recv = false;
    if (!c->effects.empty()) arm(*c->effects.front(), now);
  }
  node.rnr_waiters.clear();
}

}  // namespace locus::simgrid_backend
