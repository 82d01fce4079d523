// RequestServer: see requests.h.
#include "core/index/nessie/requests.h"

#include <algorithm>
#include <cstring>

namespace locus::nessie {
namespace {
constexpr uint64_t kRecvTag = uint64_t{1} << 62;  // wr_ids of receives; sends count up from 1
constexpr size_t kBatch = 32;
// How long the server thread sleeps in wait() with nothing to do: it
// wakes at once for a request (a receive completion); this only bounds
// how late it sees stop_requested().
constexpr Nanos kIdleWaitNs = 1 * kMillisecond;
}  // namespace

uint32_t max_payload_bytes(uint32_t key_bytes, uint32_t value_bytes) {
  return std::max<uint32_t>(4 + key_bytes + value_bytes, kMaxErrorBytes);
}

uint32_t ring_bytes_for(uint32_t key_bytes, uint32_t value_bytes) {
  return 2 * ring::message_bytes(max_payload_bytes(key_bytes, value_bytes));
}

bool take_reset_ack(ring::RingReader& reader, std::byte* ring, uint32_t ring_bytes) {
  ring::RingReader::View v;
  Status problem;
  if (reader.poll(&v, &problem) != ring::RingReader::Poll::kMessage) return false;
  if (v.header.request_id != 0 || v.header.kind != ring::MessageKind::kEnd) return false;
  const uint32_t ack_bytes = v.header.size_bytes;
  reader.consume(v);
  std::memset(ring + ack_bytes, 0, ring_bytes - ack_bytes);
  return true;
}

RingShare ring_share(uint32_t rings, uint32_t threads, uint32_t t) {
  const auto at = [&](uint32_t k) { return static_cast<uint32_t>(uint64_t{rings} * k / threads); };
  return {at(t), at(t + 1) - at(t)};
}

StatusOr<std::unique_ptr<RequestServer>> RequestServer::create(Env env, const Geometry& g, uint32_t first_ring,
                                                               uint32_t count) {
  if (count == 0) count = g.rings;
  if (uint64_t{first_ring} + count > g.rings) {
    return invalid_argument("nessie: request rings " + std::to_string(first_ring) + " to " +
                            std::to_string(uint64_t{first_ring} + count - 1) + " beyond the node's " +
                            std::to_string(g.rings));
  }
  if (g.coupled == 0 || g.rings == 0 || g.ring_bytes < ring_bytes_for(g.key_bytes, g.value_bytes) ||
      g.ring_bytes > ring::kMaxRingBytes) {
    return invalid_argument("nessie: request rings not sized for these keys and values");
  }
  std::unique_ptr<RequestServer> s(new RequestServer(env, g, first_ring, count));
  LOCUS_RETURN_IF_ERROR(s->init());
  return s;
}

Status RequestServer::init() {
  const uint64_t ring_total = uint64_t{count_} * g_.ring_bytes;
  staging_bytes_ = ring::message_bytes(max_payload_bytes(g_.key_bytes, g_.value_bytes)) + 8;
  const uint32_t recvs = std::min(2 * count_ + 16, env_.transport->limits().max_recv_wr);
  const uint64_t staging_total = uint64_t{count_} * staging_bytes_ + uint64_t{recvs} * 8;
  memory_ = AlignedBuffer(ring_total);
  staging_ = AlignedBuffer(staging_total);
  if (!memory_.valid() || !staging_.valid()) {
    return resource_exhausted("nessie: cannot allocate " + std::to_string(ring_total + staging_total) +
                              " bytes of request rings");
  }
  std::memset(memory_.data(), 0, ring_total);
  LOCUS_ASSIGN_OR_RETURN(local_, env_.transport->register_memory(staging_.data(), staging_total, kLocalOnly));
  local_registered_ = true;
  for (uint32_t i = 0; i < count_; ++i) {
    auto r = std::make_unique<Ring>();
    std::byte* at = memory_.data() + uint64_t{i} * g_.ring_bytes;
    LOCUS_ASSIGN_OR_RETURN(r->region, env_.transport->register_memory(at, g_.ring_bytes, kRemoteWrite));
    r->registered = true;
    r->reader.reset(at, g_.ring_bytes);
    r->writer.reset(g_.ring_bytes);
    rings_.push_back(std::move(r));
  }
  for (uint32_t i = 0; i < recvs; ++i) {
    RecvRequest rr;
    rr.wr_id = kRecvTag | i;
    rr.local = {staging_.data() + uint64_t{count_} * staging_bytes_ + uint64_t{i} * 8, 8, local_.lkey};
    LOCUS_RETURN_IF_ERROR(env_.transport->post_recv(std::span<const RecvRequest>(&rr, 1)));
  }
  scratch_.resize(kBatch);
  value_.reserve(g_.value_bytes);
  return Status();
}

RequestServer::~RequestServer() {
  for (auto& r : rings_) {
    if (r->registered) (void)env_.transport->deregister_memory(r->region);
  }
  if (local_registered_) (void)env_.transport->deregister_memory(local_);
}

RingGrant RequestServer::grant(const RemoteAddr& response) {
  uint32_t id = next_ring_.fetch_add(1, std::memory_order_relaxed);
  if (id >= rings_.size()) {
    std::lock_guard<ShortMutex> lock(free_mu_);
    if (free_rings_.empty()) return {};
    id = free_rings_.back();
    free_rings_.pop_back();
  }
  Ring& r = *rings_[id];
  r.response = response;
  r.state.store(kLive, std::memory_order_release);
  return {r.region.remote(), first_ + id};
}

RequestServer::Ring* RequestServer::held_by(uint32_t ring, NodeId client) {
  const uint32_t id = ring - first_;  // wraps past the end when ring < first_
  if (!owns(ring) || rings_[id]->state.load(std::memory_order_acquire) == kFree ||
      rings_[id]->response.node != client) {
    return nullptr;
  }
  return rings_[id].get();
}

Status RequestServer::reset(uint32_t ring, NodeId client) {
  Ring* r = held_by(ring, client);
  if (r == nullptr) return invalid_argument("nessie.layout: ring " + std::to_string(ring) + " is not this client's");
  r->reset_requested.store(true, std::memory_order_release);
  return Status();
}

uint32_t RequestServer::rings_left() {
  const uint32_t fresh = next_ring_.load(std::memory_order_relaxed);
  std::lock_guard<ShortMutex> lock(free_mu_);
  return static_cast<uint32_t>(free_rings_.size()) + (fresh < count_ ? count_ - fresh : 0);
}

Status RequestServer::release(uint32_t ring, NodeId client) {
  Ring* r = held_by(ring, client);
  if (r == nullptr) return invalid_argument("nessie.layout: ring " + std::to_string(ring) + " is not this client's");
  r->release_requested.store(true, std::memory_order_release);
  return Status();
}

std::byte* RequestServer::empty_ring(Ring& r, uint32_t id) {
  std::byte* at = memory_.data() + uint64_t{id} * g_.ring_bytes;
  std::memset(at, 0, g_.ring_bytes);
  r.reader.reset(at, g_.ring_bytes);
  r.writer.reset(g_.ring_bytes);
  r.dirty = false;
  return at;
}

void RequestServer::free_ring(Ring& r, uint32_t id) {
  std::byte* at = empty_ring(r, id);
  r.reset_requested.store(false, std::memory_order_relaxed);
  r.local_responses = nullptr;
  r.local_doorbell = nullptr;
  r.doorbell_seen = r.doorbell.load(std::memory_order_acquire);
  r.state.store(kFree, std::memory_order_release);
  // A new registration: the client that held the ring keeps an rkey that
  // no longer reaches it. A ring that cannot be registered again stays out
  // of service (never granted), which only costs a later client its place.
  if (r.registered) (void)env_.transport->deregister_memory(r.region);
  auto region = env_.transport->register_memory(at, g_.ring_bytes, kRemoteWrite);
  r.registered = region.is_ok();
  if (!r.registered) return;
  r.region = *region;
  ++stats_.released;
  std::lock_guard<ShortMutex> lock(free_mu_);
  free_rings_.push_back(id);
}

StatusOr<LocalRing> RequestServer::attach_local(uint32_t ring, std::byte* responses,
                                                std::atomic<uint64_t>* response_doorbell) {
  const uint32_t id = ring - first_;  // wraps past the end when ring < first_
  if (!owns(ring) || rings_[id]->state.load(std::memory_order_acquire) == kFree || responses == nullptr ||
      response_doorbell == nullptr) {
    return invalid_argument("nessie: ring " + std::to_string(ring) + " is not a granted ring of this server thread");
  }
  Ring& r = *rings_[id];
  r.local_responses = responses;
  r.local_doorbell = response_doorbell;
  any_local_.store(true, std::memory_order_release);
  return LocalRing{memory_.data() + uint64_t{id} * g_.ring_bytes, &r.doorbell};
}

void RequestServer::start_over(Ring& r, uint32_t id) {
  ++stats_.resets;
  empty_ring(r, id);
  r.state.store(kLive, std::memory_order_release);
  ring::MessageHeader ack;  // request id 0
  (void)respond(r, id, ack, Status(), {});
}

void RequestServer::repost(uint64_t wr_id) {
  const uint64_t i = wr_id & ~kRecvTag;
  RecvRequest rr;
  rr.wr_id = wr_id;
  rr.local = {staging_.data() + uint64_t{count_} * staging_bytes_ + i * 8, 8, local_.lkey};
  (void)env_.transport->post_recv(std::span<const RecvRequest>(&rr, 1));
}

void RequestServer::take(const Completion& c) {
  if (c.op == Opcode::kRecv) {
    if (c.status == WcStatus::kFlushed) return;
    // Only the client a ring was granted to may name it.
    const uint32_t id = c.imm - first_;  // the ring's own number; wraps when imm < first_
    if (c.ok() && c.has_imm && owns(c.imm) && rings_[id]->state.load(std::memory_order_acquire) == kLive &&
        rings_[id]->response.node == c.peer) {
      rings_[id]->dirty = true;
    } else {
      ++stats_.stray_notifications;
    }
    repost(c.wr_id);
    return;
  }
  if (awaiting_ > 0) --awaiting_;
  // A failed response: the client's wait runs out and it starts the ring over.
  if (!c.ok()) ++stats_.send_failures;
}

bool RequestServer::respond(Ring& r, uint32_t id, const ring::MessageHeader& request, const Status& error,
                            std::string_view payload) {
  std::byte* stage = staging_.data() + uint64_t{id} * staging_bytes_;
  ring::MessageHeader h;
  h.type = request.type;
  h.request_id = request.request_id;
  std::string text;
  if (!error.is_ok()) {
    h.kind = ring::MessageKind::kError;
    h.status = static_cast<uint8_t>(error.code());
    text = error.message().substr(0, kMaxErrorBytes);
    payload = text;
  } else {
    h.kind = ring::MessageKind::kEnd;
  }
  h.payload_bytes = static_cast<uint32_t>(payload.size());
  const uint32_t size = ring::message_bytes(h.payload_bytes);
  // The client consumed every earlier response before it sent this request.
  auto place = r.writer.place(size, r.writer.tail_bytes());
  if (!place) return false;
  h.seq = place->seq;
  if (r.local_responses != nullptr) {
    // A client in this process: the message straight into its response
    // ring, then its doorbell.
    const WorkTimer timer(env_);
    std::byte* at = r.local_responses + place->offset;
    if (!payload.empty()) std::memcpy(at + ring::kMessageHeaderBytes, payload.data(), payload.size());
    ring::encode_message(at, h);
    ring::publish_local(r.writer, *place, size, r.local_responses, *r.local_doorbell);
    ++stats_.local_responses;
    env_.cpu->charge_work(kServerLocalResponseWork, timer.elapsed(), size);
    return true;
  }
  if (!payload.empty()) std::memcpy(stage + ring::kMessageHeaderBytes, payload.data(), payload.size());
  ring::encode_message(stage, h);
  WorkRequest wrs[2];
  size_t n = 0;
  while (awaiting_ + 2 > env_.transport->limits().max_send_wr) {
    const size_t got = env_.transport->wait(scratch_, kIdleWaitNs);
    for (size_t i = 0; i < got; ++i) take(scratch_[i]);
    if (env_.stop_requested()) return false;
  }
  if (place->wrap) {
    const uint64_t word = ring::wrap_word(place->wrap_seq, place->wrap_bytes);
    std::memcpy(stage + size, &word, 8);
    WorkRequest& w = wrs[n++];
    w.wr_id = (uint64_t{id} << 32) | (++last_wr_id_ & 0xffffffffu);
    w.op = Opcode::kWrite;
    w.remote = r.response;
    w.remote.offset += place->wrap_offset;
    w.local = {stage + size, 8, local_.lkey};
  }
  WorkRequest& w = wrs[n++];
  w.wr_id = (uint64_t{id} << 32) | (++last_wr_id_ & 0xffffffffu);
  w.op = Opcode::kWriteWithImm;  // wakes the client, which blocks in wait()
  w.imm = id;
  w.remote = r.response;
  w.remote.offset += place->offset;
  w.local = {stage, size, local_.lkey};
  if (!env_.transport->post(std::span<const WorkRequest>(wrs, n)).is_ok()) {
    ++stats_.send_failures;
    return false;
  }
  awaiting_ += static_cast<uint32_t>(n);
  r.writer.commit(*place, size);
  return true;
}

void RequestServer::drop(Ring& r, uint32_t id, const Status& why) {
  ++stats_.dropped_rings;
  ring::MessageHeader none;
  (void)respond(r, id, none, why, {});
  r.state.store(kDropped, std::memory_order_release);
}

void RequestServer::handle(NodeStore& store, Ring& r, uint32_t id, const ring::RingReader::View& v) {
  ++stats_.requests;
  const WorkTimer timer(env_);
  const std::span<const std::byte> p = v.payload;
  uint32_t key_bytes = 0;
  if (p.size() >= 4) std::memcpy(&key_bytes, p.data(), 4);
  const bool known = v.header.type == kRequestGet || v.header.type == kRequestPut || v.header.type == kRequestDelete;
  Status bad;
  if (v.header.kind != ring::MessageKind::kRequest || !known) {
    bad = invalid_argument("nessie server: unknown request type " + std::to_string(v.header.type));
  } else if (p.size() < 4 || key_bytes > p.size() - 4 || key_bytes > g_.key_bytes) {
    bad = invalid_argument("nessie server: a request's key length does not fit the request or index.key_bytes");
  } else if (v.header.type != kRequestPut && p.size() != 4 + uint64_t{key_bytes}) {
    bad = invalid_argument("nessie server: a get or delete request carries a value");
  }
  if (!bad.is_ok()) {
    ++stats_.bad_requests;
    (void)respond(r, id, v.header, bad, {});
    return;
  }
  const std::string_view key(reinterpret_cast<const char*>(p.data()) + 4, key_bytes);
  const std::string_view value(key.data() + key_bytes, p.size() - 4 - key_bytes);
  const Nanos now = env_.clock->now();
  const char* work = kServerGetWork;
  Status s;
  std::string_view out;
  if (v.header.type == kRequestGet) {
    s = store.get(key, &value_);
    if (s.is_ok()) out = value_;
  } else if (v.header.type == kRequestPut) {
    work = kServerPutWork;
    s = store.put(key, value, now);
  } else {
    work = kServerDeleteWork;
    s = store.remove(key, now);
  }
  env_.cpu->charge_work(work, timer.elapsed(), p.size() + out.size());
  (void)respond(r, id, v.header, s, out);
}

size_t RequestServer::serve_round(NodeStore& store) {
  size_t handled = 0;
  for (uint32_t id = 0; id < rings_.size(); ++id) {
    Ring& r = *rings_[id];
    if (r.release_requested.load(std::memory_order_acquire)) {
      r.release_requested.store(false, std::memory_order_relaxed);
      free_ring(r, id);
      ++handled;
      continue;
    }
    if (r.reset_requested.load(std::memory_order_acquire)) {
      r.reset_requested.store(false, std::memory_order_relaxed);
      start_over(r, id);
      ++handled;
      continue;
    }
    // A local client's request: its doorbell moved (acquire: the
    // request's bytes, stored before it, are seen).
    const uint64_t rung = r.doorbell.load(std::memory_order_acquire);
    if (rung != r.doorbell_seen) {
      r.doorbell_seen = rung;
      r.dirty = true;
    }
    if (!r.dirty) continue;
    r.dirty = false;
    if (r.state.load(std::memory_order_acquire) != kLive) continue;
    ring::RingReader::View v;
    Status problem;
    const auto polled = r.reader.poll(&v, &problem);
    if (polled == ring::RingReader::Poll::kMessage) {
      handle(store, r, id, v);
      r.reader.consume(v);
      ++handled;
    } else if (polled == ring::RingReader::Poll::kBad) {
      drop(r, id, problem);
    } else if (polled == ring::RingReader::Poll::kEmpty) {
      // Nothing at the read position: a notification that outlived its
      // message. The ring was started over after the request landed (the
      // reset's RPC and the request's WRITE travel on different
      // connections), or the request's wrap marker was lost with its
      // WRITE and the client, told so, starts the ring over. Dropping the
      // ring here dropped the freshly started one.
      ++stats_.stray_notifications;
    } else {
      // Named by a WRITE_WITH_IMM that has landed, yet not a whole message.
      drop(r, id, invalid_argument("nessie server: a request notified before its message was whole"));
    }
  }
  if (handled > 0) poll_completions();
  return handled;
}

void RequestServer::poll_completions() {
  const size_t got = env_.transport->poll(scratch_);
  for (size_t i = 0; i < got; ++i) take(scratch_[i]);
}

void RequestServer::serve(Env& env, NodeStore& store) {
  env_ = env;  // the actor's clock, CPU and stop flag; the same transport
  while (!env_.stop_requested()) {
    if (serve_round(store) > 0) continue;
    // A store does not wake the transport's wait: with a local ring
    // attached, look again soon.
    const Nanos idle = any_local_.load(std::memory_order_acquire) ? kLocalPollNs : kIdleWaitNs;
    const size_t got = env_.transport->wait(scratch_, idle);
    for (size_t i = 0; i < got; ++i) take(scratch_[i]);
  }
}

}  // namespace locus::nessie
