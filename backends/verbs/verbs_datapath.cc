// VerbsEndpoint data path, posting side: validating and posting work
// requests and posting receives to the shared receive queue (completions
// are in verbs_completion_datapath.cc). Runs on the owning actor's thread
// and does not allocate (the slot tables and scratch arrays are sized at
// creation); only failure paths (synthesized completions, reconnects) may.
//
// Every posted request takes a slot that remembers the caller's wr_id,
// opcode and peer: a failed verbs completion carries only the wr_id, and
// the contract wants the operation and peer named. A connection keeps its
// slots in posting order, so that a signaled completion also retires the
// unsignaled requests before it (RC completes in order).
#include <arpa/inet.h>

#include <algorithm>

#include "backends/verbs/verbs_common.h"
#include "backends/verbs/verbs_endpoint.h"

namespace locus::verbs {
namespace {

ibv_wr_opcode verbs_opcode(Opcode op) {
  switch (op) {
    case Opcode::kRead: return IBV_WR_RDMA_READ;
    case Opcode::kWrite: return IBV_WR_RDMA_WRITE;
    case Opcode::kWriteWithImm: return IBV_WR_RDMA_WRITE_WITH_IMM;
    case Opcode::kCas: return IBV_WR_ATOMIC_CMP_AND_SWP;
    case Opcode::kFaa: return IBV_WR_ATOMIC_FETCH_AND_ADD;
    default: return IBV_WR_SEND;
  }
}

bool is_atomic(Opcode op) { return op == Opcode::kCas || op == Opcode::kFaa; }

}  // namespace

bool VerbsEndpoint::local_ok_locked(const LocalBuf& buf) const {
  auto it = regions_by_lkey_.find(buf.lkey);
  if (it == regions_by_lkey_.end()) return false;
  if (buf.length == 0) return true;
  const MemoryRegion& r = it->second;
  const auto* p = static_cast<const std::byte*>(buf.addr);
  return p >= r.base && buf.length <= r.length && static_cast<uint64_t>(p - r.base) <= r.length - buf.length;
}

Status VerbsEndpoint::validate_locked(const WorkRequest& wr) const {
  auto what = [&] { return std::string(opcode_name(wr.op)) + " (wr_id " + std::to_string(wr.wr_id) + ") on " + name_; };
  if (wr.op == Opcode::kRecv) return invalid_argument(what() + ": RECV is posted with post_recv");
  if (is_atomic(wr.op) && wr.local.length < 8) return invalid_argument(what() + ": atomics need an 8-byte local buffer");
  if (wr.op == Opcode::kSend && wr.local.length > tuning_.max_message_bytes) {
    return invalid_argument(what() + ": message of " + std::to_string(wr.local.length) +
                            " bytes exceeds max_message_bytes " + std::to_string(tuning_.max_message_bytes));
  }
  if (!local_ok_locked(wr.local)) {
    return invalid_argument(what() + ": local buffer is not inside a registration with lkey " +
                            std::to_string(wr.local.lkey));
  }
  return Status();
}

void VerbsEndpoint::trace_error(const ibv_wc& wc, const Completion& c) const {
  log_line(name_ + ": " + std::string(opcode_name(c.op)) + " with node " + std::to_string(c.peer) + ": verbs status " +
           ibv_wc_status_str(wc.status) + " (vendor error " + std::to_string(wc.vendor_err) + ") -> " +
           std::string(wc_status_name(c.status)));
}

Connection* VerbsEndpoint::connection_locked(NodeId peer) {
  auto it = by_peer_.find(peer);
  return it == by_peer_.end() ? nullptr : it->second;
}

void VerbsEndpoint::synthesize_locked(const WorkRequest& wr, WcStatus status) {
  Completion c;
  c.wr_id = wr.wr_id;
  c.op = wr.op;
  c.status = status;
  c.peer = wr.remote.node;
  synthesized_.push_back(c);
}

Status VerbsEndpoint::post(std::span<const WorkRequest> batch) {
  if (batch.empty()) return Status();
  if (batch.size() > tuning_.max_send_wr) {
    return resource_exhausted("post: batch of " + std::to_string(batch.size()) + " exceeds max_send_wr " +
                              std::to_string(tuning_.max_send_wr));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const WorkRequest& wr : batch) LOCUS_RETURN_IF_ERROR(validate_locked(wr));
    if (free_send_.size() < batch.size()) {
      return resource_exhausted("post: send queue full on " + name_ + " (" +
                                std::to_string(tuning_.max_send_wr - free_send_.size()) +
                                " outstanding, max_send_wr " + std::to_string(tuning_.max_send_wr) + ")");
    }
  }
  ensure_connected(batch);  // clients: set-up on first use of a peer, or after an error
  std::lock_guard<std::mutex> lock(mu_);
  size_t i = 0;
  while (i < batch.size()) {
    size_t j = i + 1;
    while (j < batch.size() && batch[j].remote.node == batch[i].remote.node) ++j;
    post_run_locked(batch.subspan(i, j - i), batch[i].remote.node);
    i = j;
  }
  return Status();
}

void VerbsEndpoint::post_run_locked(std::span<const WorkRequest> run, NodeId peer) {
  Connection* c = crashed_.load(std::memory_order_acquire) ? nullptr : connection_locked(peer);
  if (c == nullptr) {
    const WcStatus st = crashed_.load(std::memory_order_acquire) ? WcStatus::kFlushed : WcStatus::kRetryExceeded;
    for (const WorkRequest& wr : run) synthesize_locked(wr, st);
    return;
  }
  const auto ring = static_cast<uint32_t>(c->fifo.size());
  for (size_t k = 0; k < run.size(); ++k) {
    const WorkRequest& wr = run[k];
    const uint32_t index = free_send_.back();
    free_send_.pop_back();
    SendSlot& s = send_slots_[index];
    s.user_wr_id = wr.wr_id;
    s.conn = c;
    s.peer = peer;
    s.length = wr.local.length;
    s.op = wr.op;
    s.signaled = wr.signaled;
    s.busy = true;
    const uint64_t remote_addr = wr.remote.base_addr + wr.remote.offset;
    // The target would refuse a misaligned atomic (kRemoteOperationError);
    // some providers refuse it at post time instead, failing the whole chain.
    const bool misaligned_atomic = is_atomic(wr.op) && remote_addr % 8 != 0;
    s.forced = misaligned_atomic ? WcStatus::kRemoteOperationError : WcStatus::kSuccess;
    c->fifo[(c->fifo_head + c->fifo_count) % ring] = index;
    ++c->fifo_count;

    const uint32_t length = misaligned_atomic ? 0 : is_atomic(wr.op) ? 8 : wr.local.length;
    sges_[k] = ibv_sge{reinterpret_cast<uint64_t>(wr.local.addr), length, wr.local.lkey};
    ibv_send_wr& w = send_wrs_[k];
    w = ibv_send_wr{};
    w.wr_id = encode_wr_id(false, s.generation, index);
    w.next = k + 1 < run.size() ? &send_wrs_[k + 1] : nullptr;
    w.sg_list = &sges_[k];
    w.num_sge = length > 0 ? 1 : 0;
    w.opcode = misaligned_atomic ? IBV_WR_RDMA_READ : verbs_opcode(wr.op);
    w.send_flags = wr.signaled || misaligned_atomic ? IBV_SEND_SIGNALED : 0;
    if (wr.fence) w.send_flags |= IBV_SEND_FENCE;
    // Unsigned wrap-around is what a NIC computes too; the target's bounds
    // check rejects any address outside the registration.
    if (is_atomic(wr.op) && !misaligned_atomic) {
      w.wr.atomic.remote_addr = remote_addr;
      w.wr.atomic.rkey = wr.remote.rkey;
      w.wr.atomic.compare_add = wr.compare_add;
      w.wr.atomic.swap = wr.swap;
    } else if (wr.op != Opcode::kSend) {
      w.wr.rdma.remote_addr = remote_addr;
      w.wr.rdma.rkey = wr.remote.rkey;
    }
    if (wr.op == Opcode::kWriteWithImm) w.imm_data = htonl(wr.imm);
  }
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(c->qp, send_wrs_.data(), &bad); rc != 0) {
    // Requests from `bad` on were not posted; they are the newest in the
    // ring, so they come off its tail, and complete as flushed.
    const size_t first_bad = bad != nullptr ? static_cast<size_t>(bad - send_wrs_.data()) : 0;
    log_line(name_ + ": ibv_post_send to node " + std::to_string(peer) + ": " + errno_text(rc));
    for (size_t k = run.size(); k > first_bad; --k) {
      const uint32_t index = c->fifo[(c->fifo_head + c->fifo_count - 1) % ring];
      --c->fifo_count;
      SendSlot& s = send_slots_[index];
      s.busy = false;
      ++s.generation;
      free_send_.push_back(index);
    }
    for (size_t k = first_bad; k < run.size(); ++k) synthesize_locked(run[k], WcStatus::kFlushed);
    c->broken = true;
  }
}

Status VerbsEndpoint::post_recv(std::span<const RecvRequest> batch) {
  if (batch.empty()) return Status();
  std::lock_guard<std::mutex> lock(mu_);
  for (const RecvRequest& r : batch) {
    if (!local_ok_locked(r.local)) {
      return invalid_argument("post_recv: buffer of " + std::to_string(r.local.length) +
                              " bytes is not inside a registration with lkey " + std::to_string(r.local.lkey) +
                              " on " + name_);
    }
  }
  if (free_recv_.size() < batch.size()) {
    return resource_exhausted("post_recv: receive queue full on " + name_ + " (max_recv_wr " +
                              std::to_string(tuning_.max_recv_wr) + ")");
  }
  for (size_t k = 0; k < batch.size(); ++k) {
    const uint32_t index = free_recv_.back();
    free_recv_.pop_back();
    RecvSlot& s = recv_slots_[index];
    s.user_wr_id = batch[k].wr_id;
    s.busy = true;
    sges_[k] = ibv_sge{reinterpret_cast<uint64_t>(batch[k].local.addr), batch[k].local.length, batch[k].local.lkey};
    ibv_recv_wr& w = recv_wrs_[k];
    w = ibv_recv_wr{};
    w.wr_id = encode_wr_id(true, s.generation, index);
    w.next = k + 1 < batch.size() ? &recv_wrs_[k + 1] : nullptr;
    w.sg_list = &sges_[k];
    w.num_sge = batch[k].local.length > 0 ? 1 : 0;
  }
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv_post_srq_recv(srq_, recv_wrs_.data(), &bad); rc != 0) {
    const size_t first_bad = bad != nullptr ? static_cast<size_t>(bad - recv_wrs_.data()) : 0;
    for (size_t k = first_bad; k < batch.size(); ++k) {
      const uint32_t index = wr_id_index(recv_wrs_[k].wr_id);
      recv_slots_[index].busy = false;
      ++recv_slots_[index].generation;
      free_recv_.push_back(index);
    }
    return internal_error("post_recv: ibv_post_srq_recv on " + name_ + ": " + errno_text(rc) + " (" +
                          std::to_string(first_bad) + " of " + std::to_string(batch.size()) + " posted)");
  }
  return Status();
}

}  // namespace locus::verbs
