// MessagingServer data path: scanning rings, dispatching handlers,
// writing (segmented) responses with back-pressure, heartbeats, and
// dropping connections that send malformed bytes. Nothing here allocates
// except the Status of an error and a connection's outbox the first time
// it fills.
//
// A worker never waits for one client (issue 16, defect 9): a response
// that does not fit in the client's response ring, or whose connection
// already has kMaxSlotsPerConnection send slots in flight (WRITEs to a
// dead peer hang while its queue pair retries), goes to that connection's
// outbox and is sent by later scans; until then the connection's requests
// are not read, and it is dropped once its outbox has not moved for
// response_stall_timeout_ns. Heartbeats skip a connection whose last one
// is still in flight. So a client that stops consuming, or dies, costs
// its own requests and nobody else's.
#include <algorithm>
#include <cstring>
#include <string>

#include "core/messaging/messaging_server_internal.h"

namespace locus::messaging {
namespace {
constexpr size_t kBatch = 32;
constexpr uint32_t kMaxPerDrain = 16;  // fairness between connections of a worker
constexpr Nanos kStallWaitSliceNs = 100 * kMicrosecond;
}  // namespace

void MessagingServer::on_completion(Worker& w, const Completion& comp) {
  if (comp.op == Opcode::kRecv) {
    if (comp.status == WcStatus::kFlushed) return;
    if (comp.ok() && comp.has_imm && comp.imm >= w.first_connection &&
        comp.imm < w.first_connection + w.connection_count) {
      connections_[comp.imm]->dirty = true;
    }
    RecvRequest rr;
    rr.wr_id = comp.wr_id;
    rr.local = {w.recv_buf, 8, w.local_region.lkey};
    (void)w.env.transport->post_recv(std::span<const RecvRequest>(&rr, 1));
    return;
  }
  if (w.awaiting > 0) --w.awaiting;
  // Every send is signaled, so each WRITE of a batch frees its slot's share.
  const uint32_t tag = wr_slot_tag(comp.wr_id);
  const uint32_t id = wr_connection(comp.wr_id);
  Connection* c = id < connections_.size() ? connections_[id].get() : nullptr;
  if (tag != kNoSlot && tag <= w.slots.size()) {
    SendSlot& slot = w.slots[tag - 1];
    if (slot.pending > 0 && --slot.pending == 0 && c != nullptr && c->slots_held > 0) --c->slots_held;
  } else if (tag >= kHeartbeatTag && tag < kHeartbeatTag + kHeartbeatBuffers) {
    uint32_t& pending = w.heartbeat_pending[tag - kHeartbeatTag];
    if (pending > 0) --pending;
    if (c != nullptr) c->heartbeat_in_flight = false;
  }
  if (!comp.ok()) bump(counters_->send_failures);
  if (c == nullptr) return;
  if (c->sends_pending > 0) --c->sends_pending;
  Connection& cref = *c;
  if (!comp.ok()) {
    // Noted here, dropped by the data path (scan, send_message) when it next looks.
    cref.send_failed = true;
    cref.send_error = completion_error(comp);
  }
}

void MessagingServer::reap_ready(Worker& w) {
  const size_t n = w.env.transport->poll(w.scratch);
  for (size_t i = 0; i < n; ++i) on_completion(w, w.scratch[i]);
}

template <typename Pred>
bool MessagingServer::reap_until(Worker& w, Nanos deadline, Pred pred) {
  while (!pred()) {
    const Nanos left = deadline - w.env.clock->now();
    if (left <= 0) return false;
    const size_t n = w.env.transport->wait(w.scratch, left);
    for (size_t i = 0; i < n; ++i) on_completion(w, w.scratch[i]);
  }
  return true;
}

void MessagingServer::finish_sends(Worker& w) {
  (void)reap_until(w, w.env.clock->now() + options_.send_timeout_ns, [&] { return w.awaiting == 0; });
}

int MessagingServer::acquire_slot(Worker& w, const Connection& c, uint32_t wrs) {
  wrs = std::min(wrs, w.max_send_wr);
  const auto n_slots = static_cast<uint32_t>(w.slots.size());
  auto find = [&]() -> int {
    if (c.slots_held >= kMaxSlotsPerConnection || w.awaiting + wrs > w.max_send_wr) return -1;
    for (uint32_t i = 0; i < n_slots; ++i) {
      const uint32_t k = (w.next_slot + i) % n_slots;
      if (w.slots[k].pending == 0) return static_cast<int>(k);
    }
    return -1;
  };
  int found = find();
  if (found < 0) {
    reap_ready(w);
    found = find();
  }
  if (found < 0) {
    bump(counters_->send_slot_waits);
    return -1;
  }
  w.next_slot = (static_cast<uint32_t>(found) + 1) % n_slots;
  return found;
}

bool MessagingServer::post_slot(Worker& w, Connection& c, uint32_t slot, std::span<const WorkRequest> batch) {
  if (!w.env.transport->post(batch).is_ok()) {
    bump(counters_->send_failures);
    return false;
  }
  w.slots[slot].pending += static_cast<uint32_t>(batch.size());
  ++c.slots_held;
  w.awaiting += static_cast<uint32_t>(batch.size());
  c.sends_pending += static_cast<uint32_t>(batch.size());
  return true;
}

WorkRequest MessagingServer::head_write(Worker& w, Connection& c, std::byte* word, uint64_t wr_id) {
  const uint64_t consumed = c.reader.consumed_bytes();
  std::memcpy(word, &consumed, 8);
  c.published_head = consumed;
  return small_write(wr_id, remote_at(c.response_ring, c.response_ring_bytes + kHeadWordOffset), word,
                     w.local_region.lkey);
}

// Writes one message (header placed here, payload copied from `payload`)
// into the client's response ring, with the request ring's head and a wrap
// marker ahead of it when needed, all out of one send slot. Does not wait
// for the WRITEs: the slot is reused only once they completed, and the
// client's ring only once it published a head past them (which it can do
// only after the message landed). Does not wait for room either (kBusy).
MessagingServer::Sent MessagingServer::send_message(Worker& w, Connection& c, const std::byte* payload,
                                                    MessageHeader& h) {
  if (c.send_failed) {
    drop(w, c, c.send_error, false);
    return Sent::kDropped;
  }
  const uint32_t size = message_bytes(h.payload_bytes);
  const uint64_t head = load_head_word(c.control + kHeadWordOffset);
  if (!c.writer.head_valid(head)) {
    drop(w, c, invalid_argument("client published an impossible response-ring head " + std::to_string(head)), false);
    return Sent::kDropped;
  }
  const std::optional<RingWriter::Placement> p = c.writer.place(size, head);
  if (!p) return Sent::kBusy;
  const int s = acquire_slot(w, c, 3);
  if (s < 0) return Sent::kBusy;
  if (c.send_failed) {  // learnt while reaping
    drop(w, c, c.send_error, false);
    return Sent::kDropped;
  }
  SendSlot& slot = w.slots[static_cast<uint32_t>(s)];
  if (h.payload_bytes > 0) std::memcpy(slot.message + kMessageHeaderBytes, payload, h.payload_bytes);
  h.seq = p->seq;
  encode_message(slot.message, h);
  WorkRequest batch[3];
  size_t n = 0;
  const uint64_t wr_id = send_wr_id(c.id, static_cast<uint32_t>(s) + 1);
  if (c.reader.consumed_bytes() != c.published_head) batch[n++] = head_write(w, c, slot.head_word, wr_id);
  if (p->wrap) {
    const uint64_t word = wrap_word(p->wrap_seq, p->wrap_bytes);
    std::memcpy(slot.wrap_word, &word, 8);
    batch[n++] = small_write(wr_id, remote_at(c.response_ring, p->wrap_offset), slot.wrap_word, w.local_region.lkey);
  }
  WorkRequest& mw = batch[n++];
  mw.wr_id = wr_id;
  mw.op = Opcode::kWriteWithImm;  // wakes the client, which blocks in wait()
  mw.imm = c.id;
  mw.remote = remote_at(c.response_ring, p->offset);
  mw.local = {slot.message, size, w.local_region.lkey};
  c.writer.commit(*p, size);
  bump(counters_->response_segments);
  if (!post_slot(w, c, static_cast<uint32_t>(s), std::span<const WorkRequest>(batch, n))) {
    drop(w, c, unavailable("response to client " + std::to_string(c.client) + " could not be posted"), false);
    return Sent::kDropped;
  }
  return Sent::kSent;
}

bool MessagingServer::send_segments(Worker& w, Connection& c, const std::byte* payload, size_t bytes) {
  size_t off = 0;
  do {
    const size_t n = std::min<size_t>(options_.segment_bytes, bytes - off);
    MessageHeader h = c.outbox_header;
    h.kind = c.outbox_error ? MessageKind::kError : off + n == bytes ? MessageKind::kEnd : MessageKind::kCont;
    h.payload_bytes = static_cast<uint32_t>(n);
    const Sent sent = send_message(w, c, payload + off, h);
    if (sent == Sent::kDropped) return false;
    if (sent == Sent::kBusy) {
      // The rest waits in the outbox (copied: `payload` is the worker's).
      bump(counters_->response_stalls);
      if (c.outbox.size() < bytes - off) c.outbox.resize(bytes - off);
      if (bytes > off) std::memmove(c.outbox.data(), payload + off, bytes - off);  // payload may be null when empty
      c.outbox_bytes = bytes - off;
      c.outbox_sent = 0;
      c.outbox_pending = true;
      c.stalled_since = w.env.clock->now();
      return true;
    }
    off += n;
  } while (off < bytes);
  c.outbox_pending = false;
  return true;
}

// Called only while pending, when at least one segment is owed: a
// response without payload (an insert's OK) is one empty segment.
bool MessagingServer::flush_outbox(Worker& w, Connection& c) {
  do {
    const size_t n = std::min<size_t>(options_.segment_bytes, c.outbox_bytes - c.outbox_sent);
    MessageHeader h = c.outbox_header;
    h.kind = c.outbox_error                             ? MessageKind::kError
             : c.outbox_sent + n == c.outbox_bytes ? MessageKind::kEnd
                                                        : MessageKind::kCont;
    h.payload_bytes = static_cast<uint32_t>(n);
    const Sent sent = send_message(w, c, c.outbox.data() + c.outbox_sent, h);
    if (sent != Sent::kSent) return false;
    c.outbox_sent += n;
    c.stalled_since = w.env.clock->now();
  } while (c.outbox_sent < c.outbox_bytes);
  c.outbox_pending = false;
  return true;
}

bool MessagingServer::respond(Worker& w, Connection& c, const MessageContext& ctx, const Status& status,
                              size_t payload_bytes) {
  c.outbox_header = MessageHeader();
  c.outbox_header.type = ctx.type;
  c.outbox_header.request_id = ctx.request_id;
  c.outbox_error = !status.is_ok();
  if (c.outbox_error) {
    c.outbox_header.status = static_cast<uint8_t>(status.code());
    const size_t n = std::min<size_t>(status.message().size(), options_.segment_bytes);
    return send_segments(w, c, reinterpret_cast<const std::byte*>(status.message().data()), n);
  }
  // The handler wrote just after the header.
  return send_segments(w, c, w.response_buf + kMessageHeaderBytes, payload_bytes);
}

void MessagingServer::handle_request(Worker& w, Connection& c, const RingReader::View& v) {
  const MessageHeader& h = v.header;
  MessageContext ctx{c.id, c.client, h.type, h.request_id};
  const bool one_way = h.kind == MessageKind::kOneWay;
  if (h.kind != MessageKind::kRequest && !one_way) {
    drop(w, c, invalid_argument("message kind " + std::to_string(static_cast<int>(h.kind)) +
                                " is not a request"), false);
    return;
  }
  if (h.type == kHelloType && one_way) {  // made the connection live (drain); nothing to answer
    c.reader.consume(v);
    return;
  }
  if (h.type == 0 || h.type >= handlers_.size() || !handlers_[h.type].handler) {
    bump(counters_->unknown_type);
    c.reader.consume(v);
    if (!one_way) respond(w, c, ctx, invalid_argument("unknown request type " + std::to_string(h.type)), 0);
    return;
  }
  bump(counters_->requests);
  const Slot& slot = handlers_[h.type];
  rpc::Reader reader(v.payload);
  rpc::Writer writer(std::span<std::byte>(w.response_buf + kMessageHeaderBytes, options_.max_response_bytes));
  const Nanos started = w.env.clock->now();
  Status st = slot.handler(ctx, reader, writer);
  // Handlers run in zero simulated time; their cost is charged here, and
  // the busy time (which on SimGrid is the charge) feeds the heartbeats.
  w.env.cpu->charge_work(slot.name, w.env.clock->now() - started, v.payload.size() + writer.size());
  busy_.add(w.env.clock->now() - started);
  c.reader.consume(v);  // after the handler: it read the request in place
  if (st.is_ok() && !writer.ok()) {
    st = internal_error(slot.name + ": response exceeds " + std::to_string(options_.max_response_bytes) + " bytes");
  }
  if (!st.is_ok()) bump(counters_->handler_errors);
  if (!one_way) respond(w, c, ctx, st, st.is_ok() ? writer.size() : 0);
}

size_t MessagingServer::drain(Worker& w, Connection& c) {
  size_t handled = 0;
  while (handled < kMaxPerDrain && !c.outbox_pending && is_served(c.state.load(std::memory_order_acquire))) {
    RingReader::View v;
    Status problem;
    const RingReader::Poll r = c.reader.poll(&v, &problem);
    if (r == RingReader::Poll::kMessage) {
      c.partial_since = -1;
      // Its first message: the client has reached this worker, which may write to it from now on.
      uint8_t awaiting = kAwaiting;
      (void)c.state.compare_exchange_strong(awaiting, kConnected, std::memory_order_acq_rel);
      handle_request(w, c, v);
      ++handled;
      continue;
    }
    if (r == RingReader::Poll::kBad || r == RingReader::Poll::kPartial) {
      // A WRITE still landing can look malformed as well as incomplete (a
      // word read half-written: the NIC's DMA is not atomic per word), so
      // either verdict stands only once it has held for the timeout.
      const Nanos now = w.env.clock->now();
      if (c.partial_since < 0) {
        c.partial_since = now;
      } else if (now - c.partial_since > options_.incomplete_timeout_ns) {
        if (r == RingReader::Poll::kBad) {
          drop(w, c, problem, false);
        } else {
          drop(w, c, invalid_argument("message at ring offset " + std::to_string(c.reader.read_offset()) +
                                      " begun but not completed within " +
                                      std::to_string(options_.incomplete_timeout_ns / kMillisecond) +
                                      " ms (size field past the written bytes?)"),
               true);
        }
      }
    } else {
      c.partial_since = -1;
    }
    break;
  }
  publish_head(w, c);
  return handled;
}

void MessagingServer::publish_head(Worker& w, Connection& c) {
  if (c.reader.consumed_bytes() == c.published_head || c.state.load(std::memory_order_acquire) != kConnected) return;
  if (c.send_failed) {
    drop(w, c, c.send_error, false);
    return;
  }
  const int s = acquire_slot(w, c, 1);
  if (s < 0) return;  // the next scan tries again
  const auto slot = static_cast<uint32_t>(s);
  const WorkRequest hw = head_write(w, c, w.slots[slot].head_word, send_wr_id(c.id, slot + 1));
  if (!post_slot(w, c, slot, std::span<const WorkRequest>(&hw, 1))) {
    drop(w, c, unavailable("head update could not be posted"), false);
  }
}

bool MessagingServer::first_message_overdue(Worker& w, Connection& c) {
  const Nanos now = w.env.clock->now();
  if (c.awaiting_since < 0) c.awaiting_since = now;
  if (now - c.awaiting_since <= options_.first_message_timeout_ns) return false;
  drop(w, c, unavailable("accepted, but no first message arrived within " +
                         std::to_string(options_.first_message_timeout_ns / kMillisecond) + " ms"), false);
  return true;
}

void MessagingServer::drop(Worker& w, Connection& c, const Status& why, bool incomplete) {
  uint8_t expected = kConnected;
  bool live = true;
  if (!c.state.compare_exchange_strong(expected, kDropped, std::memory_order_acq_rel)) {
    expected = kAwaiting;
    if (!c.state.compare_exchange_strong(expected, kDropped, std::memory_order_acq_rel)) return;
    live = false;
  }
  c.outbox_pending = false;  // nothing more is sent to it but the goodbye
  if (incomplete) {
    bump(counters_->incomplete);
  } else if (why.code() == StatusCode::kInvalidArgument) {
    bump(counters_->malformed);
  }
  bump(c.send_failed ? counters_->disconnected : counters_->dropped_connections);
  {
    std::lock_guard<ShortMutex> lock(problems_mu_);
    c.problem = Status(why.code(), "connection " + std::to_string(c.id) + " from node " +
                                       std::to_string(c.client) + (c.send_failed ? " disconnected: " : " dropped: ") +
                                       why.message());
  }
  // Nothing is written to a client that never reached this worker.
  if (c.send_failed || !live) return;
  // Tell the client once, if its ring has room now; never wait for a peer
  // that is misbehaving.
  MessageHeader h;
  h.kind = MessageKind::kError;
  h.status = static_cast<uint8_t>(why.code());
  h.request_id = kConnectionErrorId;
  const std::string& text = c.problem.message();
  const size_t n = std::min<size_t>(text.size(), options_.segment_bytes);
  h.payload_bytes = static_cast<uint32_t>(n);
  (void)send_message(w, c, reinterpret_cast<const std::byte*>(text.data()), h);
}

// A dropped connection's slot, made ready for the next client: its ring
// gets a new region, so the rkey the old client holds (it may still be
// writing, and a misbehaving one was dropped for what it wrote) reaches
// nothing any more; the ring is zeroed and read from its start. Not while
// a WRITE to the old client is in flight: its completion would be taken
// for the next client's, and the kError saying why it was dropped must
// have landed before the old rkey fails, as the client looks for it then
// (MessagingClient::told_why). A failed registration leaves it dropped,
// to be tried on the next scan.
void MessagingServer::retire_now(Connection& c) {
  uint8_t state = c.state.load(std::memory_order_acquire);
  if (!is_served(state) || !c.state.compare_exchange_strong(state, kDropped, std::memory_order_acq_rel)) return;
  c.outbox_pending = false;
  bump(counters_->retired);
  std::lock_guard<ShortMutex> lock(problems_mu_);
  c.problem = Status(StatusCode::kUnavailable, "connection " + std::to_string(c.id) + " from node " +
                                                   std::to_string(c.client) +
                                                   " retired: its client set up another");
}

void MessagingServer::reclaim(Worker& w, Connection& c) {
  if (c.sends_pending > 0) return;
  const uint64_t bytes = uint64_t{options_.request_ring_bytes} + kControlBytes;
  if (c.registered) {
    (void)w.env.transport->deregister_memory(c.region);
    c.registered = false;
  }
  std::memset(c.memory.data(), 0, bytes);
  auto region = w.env.transport->register_memory(c.memory.data(), bytes, kRemoteWrite);
  if (!region.is_ok()) return;
  c.region = *region;
  c.registered = true;
  c.reader.reset(c.memory.data(), options_.request_ring_bytes);
  c.published_head = 0;
  c.partial_since = -1;
  c.awaiting_since = -1;
  c.dirty = false;
  c.send_failed = false;
  c.send_error = Status();
  c.outbox_pending = false;
  c.outbox_bytes = c.outbox_sent = 0;
  c.stalled_since = -1;
  c.heartbeat_in_flight = false;
  c.retire_for.store(kInvalidNode, std::memory_order_relaxed);
  bump(counters_->reclaimed);
  c.state.store(kFree, std::memory_order_release);
}

// Heartbeat WRITEs are not waited for either: each round writes from a
// buffer whose previous WRITEs have all completed (none free: the round
// is skipped), and skips a connection whose last
// heartbeat is still in flight, so a dead peer holds one WRITE and one
// buffer at most. A round that finds the send queue full sends the rest
// of its heartbeats nothing this time.
void MessagingServer::heartbeat(Worker& w, Nanos now) {
  if (!w.sampler.due(now)) return;
  reap_ready(w);
  uint32_t b = 0;
  while (b < kHeartbeatBuffers && w.heartbeat_pending[b] > 0) ++b;
  // Every buffer still read by WRITEs that hang: this round is skipped (its
  // interval starts anyway, or the idle wait, bounded by the next beat, would spin).
  const HeartbeatRecord record = w.sampler.sample(now);
  if (b == kHeartbeatBuffers) return;
  write_heartbeat(w.heartbeat_bufs[b], record);
  w.heartbeat_batch.clear();
  for (uint32_t k = 0; k < w.connection_count; ++k) {
    Connection& c = *connections_[w.first_connection + k];
    if (c.state.load(std::memory_order_acquire) != kConnected || c.send_failed || c.heartbeat_in_flight) continue;
    WorkRequest wr;
    wr.wr_id = send_wr_id(c.id, kHeartbeatTag + b);
    wr.op = Opcode::kWrite;
    wr.remote = remote_at(c.response_ring, c.response_ring_bytes + kHeartbeatSlotOffset);
    wr.local = {w.heartbeat_bufs[b], static_cast<uint32_t>(sizeof(HeartbeatRecord)), w.local_region.lkey};
    w.heartbeat_batch.push_back(wr);
  }
  const size_t n = std::min<size_t>(w.max_send_wr - std::min(w.awaiting, w.max_send_wr), w.heartbeat_batch.size());
  if (n == 0) return;
  bump(counters_->heartbeats, n);
  if (!w.env.transport->post(std::span<const WorkRequest>(w.heartbeat_batch.data(), n)).is_ok()) {
    bump(counters_->send_failures);
    return;
  }
  w.heartbeat_pending[b] += static_cast<uint32_t>(n);
  w.awaiting += static_cast<uint32_t>(n);
  for (size_t i = 0; i < n; ++i) {
    Connection& c = *connections_[wr_connection(w.heartbeat_batch[i].wr_id)];
    ++c.sends_pending;
    c.heartbeat_in_flight = true;
  }
}

size_t MessagingServer::serve_once(uint32_t worker, Nanos timeout) {
  Worker& w = *workers_.at(worker);
  const bool polling = options_.mode == ServerMode::kPolling;
  if (!w.started) {
    w.sampler.start(w.env.clock->now());
    w.started = true;
  }
  auto scan = [&]() {
    size_t handled = 0;
    for (uint32_t k = 0; k < w.connection_count; ++k) {
      Connection& c = *connections_[w.first_connection + k];
      const uint8_t state = c.state.load(std::memory_order_acquire);
      if (state == kDropped) reclaim(w, c);
      if (!is_served(state)) continue;
      if (const NodeId r = c.retire_for.exchange(kInvalidNode, std::memory_order_acq_rel); r != kInvalidNode) {
        if (r == c.client && c.retire_ring.load(std::memory_order_relaxed) == c.response_ring.base_addr) {
          retire_now(c);
          continue;
        }
      }
      if (c.send_failed) {  // a WRITE to it failed since we last looked
        drop(w, c, c.send_error, false);
        continue;
      }
      if (state == kAwaiting && first_message_overdue(w, c)) continue;
      if (c.outbox_pending && !flush_outbox(w, c)) {
        // Its requests wait behind the response; the others go on.
        if (c.outbox_pending && w.env.clock->now() - c.stalled_since > options_.response_stall_timeout_ns) {
          const std::string within = std::to_string(options_.response_stall_timeout_ns / kMillisecond) + " ms";
          drop(w, c,
               c.slots_held >= kMaxSlotsPerConnection
                   ? unavailable("no WRITE to the client completed within " + within)
                   : resource_exhausted("client did not free room in its response ring within " + within),
               false);
        }
        continue;
      }
      // Event mode reads a ring only when named by an immediate, or to
      // time out a message that began without one.
      if (!polling && !c.dirty && c.partial_since < 0) {
        publish_head(w, c);  // one owed since a scan found no slot free
        continue;
      }
      c.dirty = false;
      const size_t n = drain(w, c);
      // Stopped for fairness: the rest has no notification left to wake us.
      if (n == kMaxPerDrain || c.outbox_pending) c.dirty = true;
      handled += n;
    }
    return handled;
  };
  size_t handled = scan();
  heartbeat(w, w.env.clock->now());
  // Notifications that arrived while heartbeat() waited only marked their
  // connections dirty: serve them now rather than sleep on a completion
  // queue that has nothing left to say (up to a heartbeat interval).
  if (!polling) {
    bool dirty = false;
    for (uint32_t k = 0; k < w.connection_count && !dirty; ++k) dirty = connections_[w.first_connection + k]->dirty;
    if (dirty) {
      bump(counters_->rescans_after_heartbeat);
      handled += scan();
    }
  }
  if (handled > 0) return handled;
  Nanos t = polling ? std::min(timeout, options_.poll_idle_ns) : timeout;
  // A client frees room in its ring by a plain WRITE of its head, which
  // wakes nobody: while a response waits for room (or a head is owed), look again soon.
  for (uint32_t k = 0; k < w.connection_count; ++k) {
    const Connection& c = *connections_[w.first_connection + k];
    if (c.outbox_pending || (c.reader.consumed_bytes() != c.published_head &&
                             c.state.load(std::memory_order_acquire) == kConnected)) {
      t = std::min(t, kStallWaitSliceNs);
      break;
    }
  }
  if (w.sampler.enabled()) t = std::clamp<Nanos>(w.sampler.next_due() - w.env.clock->now(), 0, t);
  // on_completion never waits, but copy anyway: scan() below may.
  Completion batch[kBatch];
  const size_t n = w.env.transport->wait(std::span<Completion>(batch, std::min(kBatch, w.scratch.size())), t);
  for (size_t i = 0; i < n; ++i) on_completion(w, batch[i]);
  if (!polling && n > 0) handled += scan();
  return handled;
}

}  // namespace locus::messaging
