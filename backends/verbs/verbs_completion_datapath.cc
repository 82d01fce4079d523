// VerbsEndpoint data path, completion side: turning verbs completions into
// the contract's (the caller's wr_id, opcode and peer come from the slot
// tables filled at post time), retiring unsignaled requests, and blocking
// in wait() on the completion channel after a short spin.
#include <arpa/inet.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "backends/verbs/verbs_common.h"
#include "backends/verbs/verbs_endpoint.h"

namespace locus::verbs {

bool VerbsEndpoint::translate_locked(const ibv_wc& wc, Completion* out) {
  const uint32_t index = wr_id_index(wc.wr_id);
  if (wr_id_is_recv(wc.wr_id)) {
    if (index >= recv_slots_.size() || !recv_slots_[index].busy ||
        !wr_id_of_generation(wc.wr_id, recv_slots_[index].generation)) {
      return false;
    }
    RecvSlot& s = recv_slots_[index];
    Completion c;
    c.wr_id = s.user_wr_id;
    c.op = Opcode::kRecv;
    c.status = map_wc_status(wc.status, /*is_recv=*/true);
    auto conn = by_qp_num_.find(wc.qp_num);
    c.peer = conn != by_qp_num_.end() ? conn->second->peer : kInvalidNode;
    if (c.ok()) {
      c.byte_len = wc.byte_len;
      c.has_imm = (wc.wc_flags & IBV_WC_WITH_IMM) != 0;
      if (c.has_imm) c.imm = ntohl(wc.imm_data);
    } else {
      if (conn != by_qp_num_.end()) conn->second->broken = true;  // the QP is in the error state now
      if (trace_) trace_error(wc, c);
    }
    s.busy = false;
    ++s.generation;
    free_recv_.push_back(index);
    *out = c;
    return true;
  }
  if (index >= send_slots_.size() || !send_slots_[index].busy ||
      !wr_id_of_generation(wc.wr_id, send_slots_[index].generation)) {
    return false;  // a late flush of a request already retired with its connection
  }
  SendSlot& s = send_slots_[index];
  Connection* conn = s.conn;
  const auto ring = static_cast<uint32_t>(conn->fifo.size());
  while (conn->fifo_count > 0) {
    const uint32_t front = conn->fifo[conn->fifo_head];
    conn->fifo_head = (conn->fifo_head + 1) % ring;
    --conn->fifo_count;
    if (front == index) break;
    // An unsignaled request before this one: done, successfully.
    SendSlot& earlier = send_slots_[front];
    earlier.busy = false;
    ++earlier.generation;
    free_send_.push_back(front);
  }
  Completion c;
  c.wr_id = s.user_wr_id;
  c.op = s.op;
  c.status = map_wc_status(wc.status, /*is_recv=*/false);
  if (c.ok()) c.status = s.forced;
  c.peer = s.peer;
  c.byte_len = c.ok() ? s.length : 0;
  if (wc.status != IBV_WC_SUCCESS && trace_) trace_error(wc, c);
  if (!c.ok()) conn->broken = true;
  const bool emit = s.signaled || !c.ok();
  s.busy = false;
  ++s.generation;
  free_send_.push_back(index);
  if (emit) *out = c;
  return emit;
}

size_t VerbsEndpoint::poll_locked(std::span<Completion> out) {
  size_t n = 0;
  while (n < out.size() && !synthesized_.empty()) {
    out[n++] = synthesized_.front();
    synthesized_.pop_front();
  }
  while (n < out.size()) {
    const int want = static_cast<int>(std::min(wcs_.size(), out.size() - n));
    const int got = ibv_poll_cq(cq_, want, wcs_.data());
    if (got < 0) {
      log_line(name_ + ": ibv_poll_cq failed (" + std::to_string(got) + ")");
      break;
    }
    for (int i = 0; i < got; ++i) {
      if (translate_locked(wcs_[i], &out[n])) ++n;
    }
    if (got < want) break;
  }
  return n;
}

size_t VerbsEndpoint::poll(std::span<Completion> out) {
  if (out.empty()) return 0;
  std::lock_guard<std::mutex> lock(mu_);
  return poll_locked(out);
}

void VerbsEndpoint::consume_cq_events() {
  ibv_cq* cq = nullptr;
  void* context = nullptr;
  while (ibv_get_cq_event(comp_channel_, &cq, &context) == 0) ibv_ack_cq_events(cq, 1);
}

size_t VerbsEndpoint::wait(std::span<Completion> out, Nanos timeout) {
  if (out.empty()) return 0;
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::nanoseconds(std::max<Nanos>(timeout, 0));
  // A short spin first: on a fast fabric the completion is usually a few
  // microseconds away, far less than a sleep and wake-up.
  const auto spin_until = std::min(deadline, start + std::chrono::microseconds(tuning_.poll_spin_us));
  while (true) {
    if (size_t n = poll(out); n > 0) return n;
    const auto now = Clock::now();
    if (now < spin_until) continue;
    if (now >= deadline) return 0;
    // Arm, then look once more: a completion that arrived before arming
    // raises no event.
    (void)ibv_req_notify_cq(cq_, 0);
    if (size_t n = poll(out); n > 0) return n;
    pollfd fds[3] = {{comp_channel_->fd, POLLIN, 0}, {wake_fd_, POLLIN, 0}, {cm_channel_->fd, POLLIN, 0}};
    // Clients also watch their rdma_cm channel: a server that goes away is
    // noticed (and its connection flushed) while we wait on it.
    const nfds_t nfds = role_ == Role::kClient ? 3 : 2;
    const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - now).count();
    timespec ts{static_cast<time_t>(left / kSecond), static_cast<long>(left % kSecond)};
    if (ppoll(fds, nfds, &ts, nullptr) <= 0) continue;
    if (fds[0].revents != 0) consume_cq_events();
    if (fds[1].revents != 0) {
      uint64_t count = 0;
      (void)!read(wake_fd_, &count, sizeof count);
    }
    if (nfds == 3 && fds[2].revents != 0) drain_client_cm_events();
  }
}

}  // namespace locus::verbs
