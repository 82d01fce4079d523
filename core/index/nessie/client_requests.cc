// NessieClient's server-driven operations (NessieSD, NessieHY; paper
// section 5): a request to the key's node, written into the client's ring
// there, and the response the node's server thread writes back into the
// client's ring for that node. See requests.h for the protocol.
#include <cstring>
#include <optional>
#include <string>

#include "core/index/nessie/client.h"
#include "core/index/nessie/requests.h"

namespace locus::nessie {
namespace {
// Receive buffers for response notifications: one response is in flight
// at a time; the rest absorb late ones of calls that timed out.
constexpr uint32_t kResponseRecvs = 8;
}  // namespace

Status NessieClient::init_channels() {
  const size_t n = nodes_.size();
  const uint32_t message = ring::message_bytes(max_payload_bytes(g_.key_bytes, g_.value_bytes));
  if (g_.ring_bytes < ring_bytes_for(g_.key_bytes, g_.value_bytes)) {
    return corruption("nessie: the nodes' request rings are too small for their keys and values");
  }
  const uint64_t rings = uint64_t{n} * g_.ring_bytes;
  rings_buffer_ = AlignedBuffer(rings + message + 8);
  if (!rings_buffer_.valid()) return resource_exhausted("nessie client: cannot allocate its response rings");
  std::memset(rings_buffer_.data(), 0, rings);
  LOCUS_ASSIGN_OR_RETURN(rings_region_, ep_.transport().register_memory(rings_buffer_.data(), rings, kRemoteWrite));
  rings_registered_ = true;
  request_ = rings_buffer_.data() + rings;
  LOCUS_ASSIGN_OR_RETURN(request_region_, ep_.transport().register_memory(request_, message + 8, kLocalOnly));
  request_registered_ = true;
  LOCUS_RETURN_IF_ERROR(ep_.add_receiver(RecvKind::kImmediates, "nessie responses", kResponseRecvs, 0));
  channels_.resize(n);
  response_doorbells_ = std::make_unique<std::atomic<uint64_t>[]>(n);
  for (size_t i = 0; i < n; ++i) {
    channels_[i].writer.reset(g_.ring_bytes);
    channels_[i].reader.reset(rings_buffer_.data() + uint64_t{i} * g_.ring_bytes, g_.ring_bytes);
  }
  return Status();
}

Status NessieClient::attach_local(uint32_t node) {
  Channel& c = channels_[node];
  for (RequestServer* r : local_.requests) {
    if (!r->owns(c.grant.ring)) continue;
    LOCUS_ASSIGN_OR_RETURN(const LocalRing ring,
                           r->attach_local(c.grant.ring, rings_buffer_.data() + uint64_t{node} * g_.ring_bytes,
                                           &response_doorbells_[node]));
    c.local_requests = ring.requests;
    c.local_doorbell = ring.doorbell;
    return Status();
  }
  return invalid_argument("nessie: no server thread of the local node owns ring " + std::to_string(c.grant.ring));
}

Status NessieClient::await_response(uint32_t node) {
  Channel& c = channels_[node];
  if (c.local_requests == nullptr) {
    LOCUS_ASSIGN_OR_RETURN(auto got, ep_.await_recv(RecvKind::kImmediates));
    (void)ep_.release(got.buffer);
    return Status();
  }
  // The server thread's store does not wake the transport's wait: look at
  // the doorbell every kLocalPollNs (acquire: the response's bytes, stored
  // before it, are seen).
  Clock& clock = *ep_.env().clock;
  const Nanos deadline = clock.now() + ep_.timeout();
  for (;;) {
    const uint64_t rung = response_doorbells_[node].load(std::memory_order_acquire);
    if (rung != c.responses_seen) {
      c.responses_seen = rung;
      return Status();
    }
    if (clock.now() >= deadline) {
      return timeout_error("nessie: no response from node " + std::to_string(node) + " (this process's) within " +
                           std::to_string(ep_.timeout() / kMillisecond) + " ms");
    }
    clock.sleep_for(kLocalPollNs);
  }
}

Status NessieClient::reset_channel(uint32_t node) {
  Channel& c = channels_[node];
  std::byte* responses = rings_buffer_.data() + uint64_t{node} * g_.ring_bytes;
  std::memset(responses, 0, g_.ring_bytes);
  c.reader.reset(responses, g_.ring_bytes);
  c.writer.reset(g_.ring_bytes);
  rpc::Writer w(rpc_->payload_buffer());
  w.put<uint8_t>(kLayoutOnly);
  w.put<uint8_t>(2);
  w.put<uint32_t>(c.grant.ring);
  LOCUS_ASSIGN_OR_RETURN(auto body, rpc_->call(servers_[node], kLayoutRpcType, w.size()));
  (void)body;
  // The acknowledgement: a kEnd of request id 0, first in the emptied ring
  // (late responses before it are passed over: take_reset_ack).
  for (;;) {
    LOCUS_RETURN_IF_ERROR(await_response(node));
    if (!take_reset_ack(c.reader, responses, g_.ring_bytes)) continue;  // late, or another node's
    c.broken = false;
    ++stats_.ring_resets;
    return Status();
  }
}

StatusOr<std::string_view> NessieClient::call(uint32_t node, uint16_t type, std::string_view key,
                                              std::string_view value) {
  Channel& c = channels_[node];
  if (c.broken) LOCUS_RETURN_IF_ERROR(reset_channel(node));
  ++stats_.server_requests;
  ring::MessageHeader h;
  h.type = type;
  h.kind = ring::MessageKind::kRequest;
  h.request_id = stats_.server_requests;
  h.payload_bytes = static_cast<uint32_t>(4 + key.size() + value.size());
  const uint32_t key_bytes = static_cast<uint32_t>(key.size());
  const uint32_t size = ring::message_bytes(h.payload_bytes);
  // The node consumed every earlier request before it answered it.
  const auto place = c.writer.place(size, c.writer.tail_bytes());
  if (!place) return internal_error("nessie: a request does not fit its ring");
  h.seq = place->seq;
  // A local channel: the message straight into the ring, by CPU stores.
  std::optional<WorkTimer> timer;  // the local copy's time only: the remote path reads no clock
  if (c.local_requests != nullptr) timer.emplace(ep_.env());
  std::byte* const message = c.local_requests != nullptr ? c.local_requests + place->offset : request_;
  std::byte* p = message + ring::kMessageHeaderBytes;
  std::memcpy(p, &key_bytes, 4);
  std::memcpy(p + 4, key.data(), key.size());
  if (!value.empty()) std::memcpy(p + 4 + key.size(), value.data(), value.size());
  ring::encode_message(message, h);
  if (c.local_requests != nullptr) {
    ring::publish_local(c.writer, *place, size, c.local_requests, *c.local_doorbell);
    ++stats_.local_requests;
    ep_.env().cpu->charge_work(kLocalWriteWork, timer->elapsed(), size);
    return await_call(node, h.request_id);
  }
  WorkRequest wrs[2];
  size_t n = 0;
  if (place->wrap) {
    const uint64_t word = ring::wrap_word(place->wrap_seq, place->wrap_bytes);
    std::memcpy(request_ + size, &word, 8);
    wrs[n] = request(Opcode::kWrite, remote_at(c.grant.requests, place->wrap_offset), request_ + size, 8);
    wrs[n++].local.lkey = request_region_.lkey;
  }
  wrs[n] = request(Opcode::kWriteWithImm, remote_at(c.grant.requests, place->offset), request_, size);
  wrs[n].local.lkey = request_region_.lkey;
  wrs[n++].imm = c.grant.ring;
  c.writer.commit(*place, size);
  stats_.rdma_ops += n;
  Status sent = ep_.execute(std::span<const WorkRequest>(wrs, n));
  if (!sent.is_ok()) {
    c.broken = true;
    return sent;
  }
  return await_call(node, h.request_id);
}

StatusOr<std::string_view> NessieClient::await_call(uint32_t node, uint64_t request_id) {
  Channel& c = channels_[node];
  for (;;) {
    // Read the ring only once a notification says a response landed: a
    // WRITE's bytes need not land in address order (requests.h).
    Status got = await_response(node);
    if (!got.is_ok()) {
      c.broken = true;
      return got;
    }
    ring::RingReader::View v;
    Status problem;
    const auto polled = c.reader.poll(&v, &problem);
    if (polled == ring::RingReader::Poll::kBad) {
      c.broken = true;
      return corruption("nessie: node " + std::to_string(node) + " wrote a malformed response: " + problem.message());
    }
    if (polled == ring::RingReader::Poll::kMessage) {
      const std::span<const std::byte> payload = v.payload;
      const ring::MessageKind kind = v.header.kind;
      const uint8_t code = v.header.status;
      if (payload.size() > g_.value_bytes && kind != ring::MessageKind::kError) {
        c.broken = true;
        return corruption("nessie: node " + std::to_string(node) + " answered with an oversized value");
      }
      std::string_view out;
      std::string error;
      if (kind == ring::MessageKind::kError) {
        error.assign(reinterpret_cast<const char*>(payload.data()), payload.size());
      } else if (!payload.empty()) {
        std::memcpy(entry_, payload.data(), payload.size());
        out = std::string_view(reinterpret_cast<const char*>(entry_), payload.size());
      }
      const uint64_t id = v.header.request_id;
      c.reader.consume(v);
      if (id != request_id) {
        c.broken = true;
        return corruption("nessie: node " + std::to_string(node) + " answered another request");
      }
      if (kind == ring::MessageKind::kError) {
        const bool known = code > 0 && code <= static_cast<uint8_t>(StatusCode::kInternal);
        return Status(known ? static_cast<StatusCode>(code) : StatusCode::kInternal, error);
      }
      if (kind != ring::MessageKind::kEnd) {
        c.broken = true;
        return corruption("nessie: node " + std::to_string(node) + " answered with a message of an unknown kind");
      }
      return out;
    }
    // Nothing whole here: a notification of another node's ring, or a
    // late one; wait for the next.
  }
}

}  // namespace locus::nessie
