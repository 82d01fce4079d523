// The fault-injecting transport: see fault_transport.h.
#include "core/fault/fault_transport.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace locus::fault {
namespace {

bool one_sided(Opcode op) { return op != Opcode::kSend; }
bool consumes_receive(Opcode op) { return op == Opcode::kSend || op == Opcode::kWriteWithImm; }

}  // namespace

uint64_t FaultStats::total() const {
  return delayed + retry_exceeded + retry_exceeded_applied + remote_access_error + rnr + register_failure + split_read;
}

FaultTransport::FaultTransport(Transport* inner, Clock* clock, const FaultOptions& options, uint64_t stream,
                               const std::atomic<bool>* armed, FaultStats* stats)
    : inner_(inner),
      clock_(clock),
      options_(options),
      random_(Random(options.seed).fork(stream)),
      register_random_(Random(options.seed).fork(stream).fork(0x4E6)),
      armed_(armed),
      stats_(stats),
      scratch_(64) {}

StatusOr<Region> FaultTransport::register_memory(void* addr, uint64_t length, Access access) {
  bool fail = false;
  if (armed()) {
    std::lock_guard<ShortMutex> lock(register_mu_);
    fail = register_random_.bernoulli(options_.register_failure);
  }
  if (fail) {
    ++stats_->register_failure;
    return resource_exhausted(fmt::format("register_memory of {} bytes on node {}: injected failure (faults.seed {})",
                                          length, node_id(), options_.seed));
  }
  return inner_->register_memory(addr, length, access);
}

uint32_t split_piece_bytes(uint32_t length, uint32_t piece_bytes, uint32_t max_pieces) {
  const uint64_t pieces = std::max<uint32_t>(max_pieces, 1);
  const uint64_t at_least = (uint64_t{length} + pieces - 1) / pieces;
  const uint64_t units = (at_least + piece_bytes - 1) / piece_bytes;
  return static_cast<uint32_t>(std::max<uint64_t>(units, 1) * piece_bytes);
}

FaultTransport::Ticket FaultTransport::plan(const WorkRequest& wr, std::vector<WorkRequest>& below,
                                            std::vector<Below>& ids, uint32_t& spare_requests) {
  Ticket t;
  t.signaled = wr.signaled;
  t.completion.wr_id = wr.wr_id;
  t.completion.op = wr.op;
  t.completion.peer = wr.remote.node;
  PeerQueue& q = peers_[wr.remote.node];
  const uint64_t number = q.next++;
  auto post_below = [&](const WorkRequest& piece) {
    WorkRequest w = piece;
    w.wr_id = next_below_id_++;
    w.signaled = true;  // so every ticket learns when it is done
    below.push_back(w);
    ids.push_back({wr.remote.node, number});
    ++t.pieces_left;
  };
  auto fail = [&](WcStatus status, std::atomic<uint64_t> FaultStats::*counter) {
    t.fault = counter;
    t.completion.status = status;
  };
  const bool on = armed();
  if (on && random_.bernoulli(options_.retry_exceeded)) {
    if (random_.bernoulli(options_.applied)) {
      t.fault = &FaultStats::retry_exceeded_applied;
      t.lose_reply = true;
      post_below(wr);
    } else {
      fail(WcStatus::kRetryExceeded, &FaultStats::retry_exceeded);
    }
  } else if (on && one_sided(wr.op) && random_.bernoulli(options_.remote_access_error)) {
    fail(WcStatus::kRemoteAccessError, &FaultStats::remote_access_error);
  } else if (on && consumes_receive(wr.op) && random_.bernoulli(options_.rnr)) {
    fail(WcStatus::kRnrRetryExceeded, &FaultStats::rnr);
  } else if (on && wr.op == Opcode::kRead && wr.local.length >= 2 * options_.piece_bytes && spare_requests > 0 &&
             random_.bernoulli(options_.split_read)) {
    t.fault = &FaultStats::split_read;
    t.completion.byte_len = wr.local.length;
    // Pieces of piece_bytes, or fewer larger ones where the queue has no
    // room for that many: the batch must stay within the caller's bounds.
    const uint32_t piece = split_piece_bytes(wr.local.length, options_.piece_bytes, spare_requests + 1);
    const uint32_t count = (wr.local.length + piece - 1) / piece;
    spare_requests -= count - 1;
    std::vector<uint32_t> order(count);
    for (uint32_t i = 0; i < count; ++i) order[i] = count - 1 - i;
    if (options_.read_order == ReadOrder::kRandom) {
      for (uint32_t i = count - 1; i > 0; --i) std::swap(order[i], order[random_.uniform(i + 1)]);
    }
    for (uint32_t i : order) {
      WorkRequest p = wr;
      const uint32_t at = i * piece;
      p.remote = wr.remote.plus(at);
      p.local.addr = static_cast<std::byte*>(wr.local.addr) + at;
      p.local.length = std::min(piece, wr.local.length - at);
      post_below(p);
    }
  } else {
    post_below(wr);
  }
  if (on && random_.bernoulli(options_.delay)) {
    t.delayed = true;
    t.due_ns = clock_->now() + static_cast<Nanos>(random_.uniform(static_cast<uint64_t>(options_.max_delay_ns) + 1));
  }
  return t;
}

Status FaultTransport::post(std::span<const WorkRequest> batch) {
  std::vector<WorkRequest> below;
  std::vector<Below> ids;
  std::vector<Ticket> tickets;
  below.reserve(batch.size());
  tickets.reserve(batch.size());
  const uint32_t max_wr = inner_->limits().max_send_wr;
  uint32_t spare = max_wr > batch.size() ? max_wr - static_cast<uint32_t>(batch.size()) : 0;
  for (const WorkRequest& wr : batch) tickets.push_back(plan(wr, below, ids, spare));
  const Status posted = below.empty() ? Status() : inner_->post(below);
  if (!posted.is_ok()) {
    // Nothing was posted: forget the tickets planned, newest first.
    for (auto it = batch.rbegin(); it != batch.rend(); ++it) --peers_[it->remote.node].next;
    next_below_id_ -= below.size();
    return posted;
  }
  for (size_t i = 0; i < below.size(); ++i) below_.emplace(below[i].wr_id, ids[i]);
  for (size_t i = 0; i < batch.size(); ++i) {
    if (tickets[i].fault != nullptr) ++(stats_->*tickets[i].fault);
    if (tickets[i].delayed) ++stats_->delayed;
    peers_[batch[i].remote.node].tickets.push_back(std::move(tickets[i]));
  }
  return Status();
}

void FaultTransport::settle(const Completion& c) {
  auto found = below_.find(c.wr_id);
  if (c.op == Opcode::kRecv || found == below_.end()) {
    ready_.push_back(c);  // a receive: not ours to change
    return;
  }
  const Below b = found->second;
  below_.erase(found);
  PeerQueue& q = peers_[b.peer];
  Ticket& t = q.tickets[b.ticket - q.first];
  if (t.completion.status == WcStatus::kSuccess) t.completion.status = c.status;
  if (t.completion.byte_len == 0) {
    t.completion.byte_len = c.byte_len;
    t.completion.imm = c.imm;
    t.completion.has_imm = c.has_imm;
  }
  if (--t.pieces_left == 0 && t.lose_reply && t.completion.ok()) t.completion.status = WcStatus::kRetryExceeded;
}

void FaultTransport::drain_below() {
  size_t n = 0;
  do {
    n = inner_->poll(scratch_);
    for (size_t i = 0; i < n; ++i) settle(scratch_[i]);
  } while (n == scratch_.size());
}

size_t FaultTransport::deliver(std::span<Completion> out) {
  const Nanos now = clock_->now();
  for (auto& [peer, q] : peers_) {
    while (!q.tickets.empty() && q.tickets.front().pieces_left == 0 && q.tickets.front().due_ns <= now) {
      const Ticket& t = q.tickets.front();
      if (t.signaled || !t.completion.ok()) ready_.push_back(t.completion);
      q.tickets.pop_front();
      ++q.first;
    }
  }
  size_t n = 0;
  while (n < out.size() && !ready_.empty()) {
    out[n++] = ready_.front();
    ready_.pop_front();
  }
  return n;
}

Nanos FaultTransport::next_due() const {
  Nanos due = 0;
  for (const auto& [peer, q] : peers_) {
    if (!q.tickets.empty() && q.tickets.front().pieces_left == 0 && (due == 0 || q.tickets.front().due_ns < due)) {
      due = q.tickets.front().due_ns;
    }
  }
  return due;
}

size_t FaultTransport::poll(std::span<Completion> out) {
  drain_below();
  return deliver(out);
}

size_t FaultTransport::wait(std::span<Completion> out, Nanos timeout) {
  const Nanos deadline = clock_->now() + timeout;
  for (;;) {
    if (const size_t n = poll(out); n > 0) return n;
    const Nanos now = clock_->now();
    if (now >= deadline) return 0;
    Nanos limit = deadline - now;
    // A held completion falls due before the caller's deadline: wake then.
    if (const Nanos due = next_due(); due != 0) limit = std::clamp<Nanos>(due - now, 1, limit);
    const size_t n = inner_->wait(scratch_, limit);
    for (size_t i = 0; i < n; ++i) settle(scratch_[i]);
  }
}

}  // namespace locus::fault
