// MessagingClient: see messaging.h. One outstanding call at a time (a
// client is one actor); one-way sends may run ahead until the request ring
// is full. The response is reassembled into a buffer sized once.
#include <cstring>
#include <string>

#include "core/messaging/messaging_server_internal.h"

namespace locus::messaging {
namespace {

Status error_status(const RingReader::View& v) {
  const uint8_t status = v.header.status;
  const StatusCode code = status <= static_cast<uint8_t>(StatusCode::kInternal) && status != 0
                              ? static_cast<StatusCode>(status)
                              : StatusCode::kInternal;
  return Status(code, std::string(reinterpret_cast<const char*>(v.payload.data()), v.payload.size()));
}

}  // namespace

StatusOr<std::unique_ptr<MessagingClient>> MessagingClient::create(Endpoint& endpoint,
                                                                   const MessagingClientOptions& o) {
  if (o.response_ring_bytes % kMessageAlignBytes != 0 || o.response_ring_bytes > kMaxRingBytes ||
      o.response_ring_bytes < 2 * kMessageOverheadBytes || o.recv_buffers == 0) {
    return invalid_argument("messaging client: response_ring_bytes must be a multiple of 8 in [64, 1 GiB] "
                            "and recv_buffers positive");
  }
  std::unique_ptr<MessagingClient> client(new MessagingClient(endpoint, o));
  LOCUS_RETURN_IF_ERROR(client->init());
  return client;
}

MessagingClient::MessagingClient(Endpoint& endpoint, const MessagingClientOptions& options)
    : endpoint_(endpoint), options_(options) {}

MessagingClient::~MessagingClient() {
  if (receiving_) endpoint_.remove_receiver(RecvKind::kImmediates);
  if (local_registered_) (void)endpoint_.transport().deregister_memory(local_region_);
  if (ring_registered_) (void)endpoint_.transport().deregister_memory(ring_region_);
}

Status MessagingClient::init() {
  const uint64_t ring_bytes = uint64_t{options_.response_ring_bytes} + kControlBytes;
  ring_memory_ = AlignedBuffer(ring_bytes);
  const uint64_t staging_bytes = message_bytes(options_.max_request_bytes);
  const uint64_t local_bytes = staging_bytes + 8 + 8;
  local_memory_ = AlignedBuffer(local_bytes);
  if (!ring_memory_.valid() || !local_memory_.valid()) {
    return resource_exhausted("messaging client: cannot allocate ring buffers");
  }
  LOCUS_ASSIGN_OR_RETURN(ring_region_,
                         endpoint_.transport().register_memory(ring_memory_.data(), ring_bytes, kRemoteWrite));
  ring_registered_ = true;
  LOCUS_ASSIGN_OR_RETURN(local_region_,
                         endpoint_.transport().register_memory(local_memory_.data(), local_bytes, kLocalOnly));
  local_registered_ = true;
  control_ = ring_memory_.data() + options_.response_ring_bytes;
  staging_ = local_memory_.data();
  wrap_buf_ = staging_ + staging_bytes;
  head_buf_ = wrap_buf_ + 8;
  response_.resize(options_.max_response_bytes);
  reader_.reset(ring_memory_.data(), options_.response_ring_bytes);
  // Notifications carry no data, but the endpoint's buffers are shared.
  LOCUS_RETURN_IF_ERROR(endpoint_.add_receiver(RecvKind::kImmediates, "messaging", options_.recv_buffers, 0));
  receiving_ = true;
  return Status();
}

ClientInfo MessagingClient::client_info() const {
  ClientInfo info;
  info.node = endpoint_.node_id();
  info.response_ring = ring_region_.remote();
  info.response_ring_bytes = options_.response_ring_bytes;
  return info;
}

Status MessagingClient::connect(const ConnectionInfo& info) {
  if (info.request_ring_bytes % kMessageAlignBytes != 0 || info.request_ring_bytes > kMaxRingBytes ||
      message_bytes(options_.max_request_bytes) > info.request_ring_bytes ||
      info.request_ring.length < uint64_t{info.request_ring_bytes} + kControlBytes) {
    return invalid_argument("messaging connect: the server's " + std::to_string(info.request_ring_bytes) +
                            "-byte request ring cannot hold a " + std::to_string(options_.max_request_bytes) +
                            "-byte request (or is malformed)");
  }
  conn_ = info;
  writer_.reset(info.request_ring_bytes);
  connected_ = true;
  // Reaches the worker (on verbs: connects to it) before it writes to us.
  if (info.awaits_first_message) return write_request(kHelloType, MessageKind::kOneWay, 0, next_request_id_++);
  return Status();
}

Status MessagingClient::reset() {
  const uint64_t ring_bytes = uint64_t{options_.response_ring_bytes} + kControlBytes;
  if (ring_registered_) {
    // On every backend this waits for, or fails, WRITEs into the ring in flight.
    LOCUS_RETURN_IF_ERROR(endpoint_.transport().deregister_memory(ring_region_));
    ring_registered_ = false;
  }
  std::memset(ring_memory_.data(), 0, ring_bytes);
  LOCUS_ASSIGN_OR_RETURN(ring_region_,
                         endpoint_.transport().register_memory(ring_memory_.data(), ring_bytes, kRemoteWrite));
  ring_registered_ = true;
  reader_.reset(ring_memory_.data(), options_.response_ring_bytes);
  published_head_ = 0;
  conn_ = ConnectionInfo();
  connected_ = false;
  broken_ = Status();
  return Status();
}

Status MessagingClient::check_request_bytes(size_t payload_bytes) const {
  if (payload_bytes <= options_.max_request_bytes) return Status();
  return invalid_argument("messaging: a request of " + std::to_string(payload_bytes) + " bytes exceeds the " +
                          std::to_string(options_.max_request_bytes) + "-byte limit");
}

Status MessagingClient::fail(Status why) {
  if (broken_.is_ok()) broken_ = why;
  return why;
}

WorkRequest MessagingClient::head_write() {
  const uint64_t consumed = reader_.consumed_bytes();
  std::memcpy(head_buf_, &consumed, 8);
  published_head_ = consumed;
  return small_write(endpoint_.next_wr_id(),
                     remote_at(conn_.request_ring, conn_.request_ring_bytes + kHeadWordOffset), head_buf_,
                     local_region_.lkey);
}

Status MessagingClient::publish_head_now() {
  return endpoint_.execute(head_write());
}

Status MessagingClient::wait_for_room(uint32_t size_bytes, RingWriter::Placement* out) {
  Env& env = endpoint_.env();
  const Nanos deadline = env.clock->now() + endpoint_.timeout();
  while (true) {
    const uint64_t head = load_head_word(control_ + kHeadWordOffset);
    if (!writer_.head_valid(head)) {
      return fail(corruption("messaging: server " + std::to_string(conn_.server) +
                             " published an impossible request-ring head " + std::to_string(head)));
    }
    if (auto p = writer_.place(size_bytes, head)) {
      *out = *p;
      return Status();
    }
    if (env.clock->now() >= deadline) {
      return timeout_error("messaging: no room in the request ring of server " + std::to_string(conn_.server) +
                           " within " + std::to_string(endpoint_.timeout() / kMillisecond) + " ms");
    }
    // The server's head update is a plain WRITE: nothing to wait on but time.
    ++stats_.space_waits;
    env.clock->sleep_for(options_.space_wait_ns);
  }
}

Status MessagingClient::write_request(uint16_t type, MessageKind kind, size_t payload_bytes,
                                      uint64_t request_id) {
  if (!connected_) return invalid_argument("messaging client: not connected");
  if (!broken_.is_ok()) return broken_;
  LOCUS_RETURN_IF_ERROR(check_request_bytes(payload_bytes));
  const uint32_t size = message_bytes(static_cast<uint32_t>(payload_bytes));
  RingWriter::Placement p;
  LOCUS_RETURN_IF_ERROR(wait_for_room(size, &p));
  MessageHeader h;
  h.seq = p.seq;
  h.type = type;
  h.kind = kind;
  h.payload_bytes = static_cast<uint32_t>(payload_bytes);
  h.request_id = request_id;
  encode_message(staging_, h);
  WorkRequest batch[3];
  size_t n = 0;
  // The response ring's head rides along with the next request.
  if (reader_.consumed_bytes() != published_head_) batch[n++] = head_write();
  if (p.wrap) {
    const uint64_t word = wrap_word(p.wrap_seq, p.wrap_bytes);
    std::memcpy(wrap_buf_, &word, 8);
    batch[n++] = small_write(endpoint_.next_wr_id(), remote_at(conn_.request_ring, p.wrap_offset), wrap_buf_,
                             local_region_.lkey);
    ++stats_.wraps;
  }
  WorkRequest& mw = batch[n++];
  mw.wr_id = endpoint_.next_wr_id();
  mw.op = conn_.mode == ServerMode::kEvent ? Opcode::kWriteWithImm : Opcode::kWrite;
  mw.imm = conn_.connection_id;
  mw.remote = remote_at(conn_.request_ring, p.offset);
  mw.local = {staging_, size, local_region_.lkey};
  writer_.commit(p, size);
  Status st = endpoint_.execute(std::span<const WorkRequest>(batch, n));
  // A request that may or may not have landed leaves the ring's state unknown.
  if (!st.is_ok()) return fail(told_why(st));
  return Status();
}

// A dropped connection's ring gets a new rkey once the kError saying why
// has landed here (MessagingServer::reclaim), so a request refused for the
// old one is explained by what is in the response ring: with no call
// outstanding, anything there is stale or that kError.
Status MessagingClient::told_why(Status otherwise) {
  RingReader::View v;
  Status problem;
  while (reader_.poll(&v, &problem) == RingReader::Poll::kMessage) {
    const bool goodbye = v.header.kind == MessageKind::kError && v.header.request_id == kConnectionErrorId;
    Status why = goodbye ? error_status(v) : Status();
    reader_.consume(v);
    if (goodbye) {
      ++stats_.error_responses;
      return why;
    }
  }
  return otherwise;
}

Status MessagingClient::send(uint16_t type, size_t payload_bytes) {
  ++stats_.calls;
  return write_request(type, MessageKind::kOneWay, payload_bytes, next_request_id_++);
}

StatusOr<std::span<const std::byte>> MessagingClient::call(uint16_t type, std::span<const std::byte> payload) {
  LOCUS_RETURN_IF_ERROR(check_request_bytes(payload.size()));
  if (!payload.empty()) std::memcpy(payload_buffer().data(), payload.data(), payload.size());
  return call(type, payload.size());
}

StatusOr<std::span<const std::byte>> MessagingClient::call(uint16_t type, size_t payload_bytes) {
  ++stats_.calls;
  const uint64_t request_id = next_request_id_++;
  LOCUS_RETURN_IF_ERROR(write_request(type, MessageKind::kRequest, payload_bytes, request_id));
  size_t got = 0;
  bool overflow = false;
  Nanos bad_since = -1;  // since when the message at the read position looks malformed
  while (true) {
    bool consumed_cont = false;
    RingReader::View v;
    Status problem;
    RingReader::Poll r;
    while ((r = reader_.poll(&v, &problem)) == RingReader::Poll::kMessage) {
      const MessageHeader& h = v.header;
      if (h.kind != MessageKind::kCont && h.kind != MessageKind::kEnd && h.kind != MessageKind::kError) {
        return fail(corruption("messaging: server " + std::to_string(conn_.server) + " sent a request-kind message"));
      }
      if (h.request_id != request_id && h.request_id != kConnectionErrorId) {
        ++stats_.stale_responses;
        reader_.consume(v);
        continue;
      }
      ++stats_.segments;
      if (h.kind == MessageKind::kError) {
        Status st = error_status(v);
        reader_.consume(v);
        ++stats_.error_responses;
        if (h.request_id == kConnectionErrorId) return fail(st);
        return st;
      }
      if (got + v.payload.size() > response_.size()) {
        overflow = true;  // keep consuming to the END so the ring stays in step
      } else if (!v.payload.empty()) {
        std::memcpy(response_.data() + got, v.payload.data(), v.payload.size());
        got += v.payload.size();
      }
      reader_.consume(v);
      if (h.kind == MessageKind::kEnd) {
        if (overflow) {
          return resource_exhausted("messaging: a response exceeds the client's " +
                                    std::to_string(response_.size()) + "-byte limit");
        }
        return std::span<const std::byte>(response_.data(), got);
      }
      consumed_cont = true;
    }
    Nanos settle = -1;  // how long to wait for a notification; -1: the endpoint's timeout
    if (r == RingReader::Poll::kBad) {
      // It may be a segment still landing (messaging.h): its notification
      // follows once it has, so wait for that, and give up only if it still
      // looks malformed after landing_timeout_ns.
      const Nanos now = endpoint_.env().clock->now();
      if (bad_since < 0) bad_since = now;
      settle = bad_since + options_.landing_timeout_ns - now;
      if (settle <= 0) return fail(problem);
    } else {
      bad_since = -1;
    }
    // The server may be waiting for room to send the rest.
    if (consumed_cont) LOCUS_RETURN_IF_ERROR(publish_head_now());
    auto rc = settle < 0 ? endpoint_.await_recv(RecvKind::kImmediates)
                         : endpoint_.await_recv_for(RecvKind::kImmediates, settle);
    if (settle >= 0 && !rc.is_ok() && rc.status().code() == StatusCode::kTimeout) continue;  // poll once more
    if (!rc.is_ok()) {
      return Status(rc.status().code(), "messaging: call type " + std::to_string(type) + " to server " +
                                            std::to_string(conn_.server) + ": " + rc.status().message());
    }
    LOCUS_RETURN_IF_ERROR(endpoint_.release(rc->buffer));
    if (!rc->completion.ok()) return fail(completion_error(rc->completion));
  }
}

}  // namespace locus::messaging
