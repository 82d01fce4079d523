// Endpoint: completion matching; see endpoint.h.
#include "core/transport/endpoint.h"

#include <algorithm>
#include <string>

namespace locus {
namespace {
constexpr size_t kScratch = 32;
// A pool buffer's receive wr_id: kRecvBit, pool number + 1 (bits 32..47), index.
constexpr uint64_t kRecvBit = 1ULL << 63;
constexpr size_t kMaxPools = 0xFFFF;  // what the wr_id holds

uint64_t recv_wr_id(size_t pool, uint32_t index) { return kRecvBit | (uint64_t{pool + 1} << 32) | index; }
RecvKind kind_of(const Completion& c) { return c.has_imm ? RecvKind::kImmediates : RecvKind::kMessages; }
const char* kind_name(RecvKind k) { return k == RecvKind::kMessages ? "SEND" : "WRITE_WITH_IMM"; }
}  // namespace

Endpoint::Endpoint(Env env, Nanos timeout) : env_(env), timeout_(timeout) {
  const TransportLimits lim = env_.transport->limits();
  parked_.reserve(lim.max_send_wr + lim.max_recv_wr + kScratch);
  scratch_.resize(kScratch);
  // No more requests than the send queue holds can be outstanding, so no
  // more can be abandoned and still complete.
  abandoned_.assign(std::max<size_t>(lim.max_send_wr, 1), 0);
  pools_.reserve(2);
}

Endpoint::~Endpoint() {
  for (auto it = pools_.rbegin(); it != pools_.rend(); ++it) (void)env_.transport->deregister_memory(it->region);
}

Status Endpoint::add_receiver(RecvKind kind, std::string name, uint32_t buffers, uint32_t buffer_bytes) {
  if (buffers == 0) return invalid_argument(name + ": a receiver needs receive buffers");
  if (pools_.size() == kMaxPools) return resource_exhausted(name + ": too many receivers on endpoint " + std::to_string(node_id()));
  if (!pools_.empty() && buffer_bytes > pool_buffer_bytes_) {
    return invalid_argument("endpoint " + std::to_string(node_id()) + ": " + name + " wants " +
                            std::to_string(buffer_bytes) + "-byte receive buffers, but the pool's are " +
                            std::to_string(pool_buffer_bytes_) + " bytes: register the receiver of the largest "
                            "messages first");
  }
  // Every buffer holds whatever any receiver may be sent; at least a word.
  if (pools_.empty()) pool_buffer_bytes_ = std::max<uint32_t>(buffer_bytes, 8);
  Pool pool;
  pool.buffers = buffers;
  const uint64_t bytes = uint64_t{buffers} * pool_buffer_bytes_;
  pool.memory = AlignedBuffer(bytes);
  if (!pool.memory.valid()) return resource_exhausted(name + ": cannot allocate " + std::to_string(bytes) + " bytes of receive buffers");
  LOCUS_ASSIGN_OR_RETURN(pool.region, env_.transport->register_memory(pool.memory.data(), bytes, kLocalOnly));
  pools_.push_back(std::move(pool));
  Receivers& r = receivers_[static_cast<size_t>(kind)];
  ++r.count;
  for (uint32_t i = 0; i < buffers; ++i) LOCUS_RETURN_IF_ERROR(release(recv_wr_id(pools_.size() - 1, i)));
  return Status();
}

void Endpoint::remove_receiver(RecvKind kind) {
  Receivers& r = receivers_[static_cast<size_t>(kind)];
  if (r.count > 0) --r.count;
}

std::byte* Endpoint::pool_buffer(uint64_t wr_id, std::string* why) {
  const uint64_t pool = ((wr_id >> 32) & 0xFFFF) - 1;  // wraps to huge for "no pool"
  const auto index = static_cast<uint32_t>(wr_id);
  if ((wr_id & kRecvBit) == 0 || (wr_id >> 48) != (kRecvBit >> 48) || pool >= pools_.size() ||
      index >= pools_[pool].buffers) {
    *why = "receive wr_id " + std::to_string(wr_id) + " names no receive buffer of endpoint " +
           std::to_string(node_id());
    return nullptr;
  }
  return pools_[pool].memory.data() + uint64_t{index} * pool_buffer_bytes_;
}

Status Endpoint::release(uint64_t buffer) {
  std::string why;
  std::byte* p = pool_buffer(buffer, &why);
  if (p == nullptr) return invalid_argument(why);
  const uint64_t pool = ((buffer >> 32) & 0xFFFF) - 1;
  RecvRequest r;
  r.wr_id = buffer;
  r.local = {p, pool_buffer_bytes_, pools_[pool].region.lkey};
  return env_.transport->post_recv(std::span<const RecvRequest>(&r, 1));
}

bool Endpoint::drop_unroutable(const Completion& c) {
  if (c.op != Opcode::kRecv) return false;
  std::string why;
  if (pool_buffer(c.wr_id, &why) == nullptr) {
    ++recv_stats_.stray;
    last_receive_error_ = internal_error(why + " (from node " + std::to_string(c.peer) + "): dropped");
    return true;
  }
  const RecvKind kind = kind_of(c);
  if (receivers_[static_cast<size_t>(kind)].count > 0) return false;
  ++recv_stats_.unclaimed;
  last_receive_error_ = internal_error(std::string("a ") + kind_name(kind) + " from node " + std::to_string(c.peer) +
                                       " reached endpoint " + std::to_string(node_id()) +
                                       ", where nobody takes them: dropped");
  (void)release(c.wr_id);  // the buffer goes back to the pool
  return true;
}

void Endpoint::abandon(uint64_t wr_id) {
  for (size_t i = 0; i < parked_.size(); ++i) {
    if (parked_[i].op != Opcode::kRecv && parked_[i].wr_id == wr_id) {
      parked_.erase(parked_.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
  }
  if (abandoned_[abandoned_next_] == 0) ++abandoned_live_;  // else the oldest is forgotten
  abandoned_[abandoned_next_] = wr_id;
  abandoned_next_ = (abandoned_next_ + 1) % abandoned_.size();
}

bool Endpoint::take_abandoned(const Completion& c) {
  // The common case, nothing abandoned, costs one compare per completion.
  if (abandoned_live_ == 0 || c.op == Opcode::kRecv || c.wr_id == 0) return false;
  for (uint64_t& id : abandoned_) {
    if (id == c.wr_id) {
      id = 0;
      --abandoned_live_;
      return true;
    }
  }
  return false;
}

bool Endpoint::park(const Completion& c) {
  if (parked_.size() == parked_.capacity()) return false;  // cannot happen within limits
  parked_.push_back(c);
  return true;
}

template <typename Match>
StatusOr<Completion> Endpoint::await_matching(Match match, Nanos timeout, const char* what) {
  for (size_t i = 0; i < parked_.size(); ++i) {
    if (match(parked_[i])) {
      Completion c = parked_[i];
      parked_.erase(parked_.begin() + static_cast<std::ptrdiff_t>(i));
      return c;
    }
  }
  const Nanos deadline = env_.clock->now() + timeout;
  while (true) {
    const Nanos left = deadline - env_.clock->now();
    if (left <= 0) {
      return timeout_error(std::string("no completion for ") + what + " on node " + std::to_string(node_id()) +
                           " within " +
                           (timeout % kMillisecond == 0 ? std::to_string(timeout / kMillisecond) + " ms"
                                                        : std::to_string(timeout / kMicrosecond) + " us") +
                           (timeout == timeout_ && !timeout_setting_.empty() ? " (" + timeout_setting_ + ")" : ""));
    }
    const size_t n = env_.transport->wait(scratch_, left);
    std::optional<Completion> found;
    for (size_t i = 0; i < n; ++i) {
      if (drop_unroutable(scratch_[i])) {
        continue;
      } else if (!found && match(scratch_[i])) {
        found = scratch_[i];
      } else if (take_abandoned(scratch_[i])) {
        continue;  // its waiter gave up
      } else if (!park(scratch_[i])) {
        return internal_error("endpoint completion buffer overflow on node " +
                              std::to_string(node_id()));
      }
    }
    if (found) return *found;
  }
}

StatusOr<Completion> Endpoint::await(uint64_t wr_id, NodeId peer) {
  auto c = await_matching([wr_id](const Completion& c) { return c.op != Opcode::kRecv && c.wr_id == wr_id; },
                          timeout_, "a work request");
  if (!c.is_ok() && c.status().code() == StatusCode::kTimeout) {
    abandon(wr_id);
    // What was posted behind it to the same peer is stuck too.
    if (peer != kInvalidNode) env_.transport->reset_peer(peer);
  }
  return c;
}

StatusOr<Received> Endpoint::await_recv(RecvKind kind) { return await_recv_for(kind, timeout_); }

StatusOr<Received> Endpoint::await_recv_for(RecvKind kind, Nanos timeout) {
  // Only routable completions are parked or matched, so the buffer exists.
  LOCUS_ASSIGN_OR_RETURN(
      const Completion c,
      await_matching([kind](const Completion& c) { return c.op == Opcode::kRecv && kind_of(c) == kind; }, timeout,
                     kind == RecvKind::kMessages ? "a SEND receive" : "a WRITE_WITH_IMM receive"));
  std::string why;
  const std::byte* p = pool_buffer(c.wr_id, &why);
  Received r;
  r.completion = c;
  r.buffer = c.wr_id;
  if (c.ok() && kind == RecvKind::kMessages) r.data = {p, std::min(c.byte_len, pool_buffer_bytes_)};
  return r;
}

Status Endpoint::execute(std::span<const WorkRequest> batch) {
  LOCUS_RETURN_IF_ERROR(env_.transport->post(batch));
  Status first_error;
  for (size_t i = 0; i < batch.size(); ++i) {
    auto c = await(batch[i].wr_id, batch[i].remote.node);
    if (!c.is_ok()) {
      // Nobody waits for the rest of the batch either.
      for (size_t j = i + 1; j < batch.size(); ++j) abandon(batch[j].wr_id);
      return c.status();
    }
    if (!c->ok() && first_error.is_ok()) first_error = completion_error(*c);
  }
  return first_error;
}

}  // namespace locus
