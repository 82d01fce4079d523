// Loopback data path: the emulated NIC of one node. It serves the requests
// other nodes aimed at this node, one at a time, in posting order per
// source; a SEND that finds no posted receive stalls only its own
// connection (RNR retry) until a receive arrives or the RNR budget ends.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>

#include "backends/loopback/loopback_fabric.h"
#include "core/common/dma_copy.h"

namespace locus::loopback {
namespace {

bool is_message(Opcode op) { return op == Opcode::kSend || op == Opcode::kWriteWithImm; }

}  // namespace

const RegionEntry* Node::find_remote(const RemoteAddr& a, uint64_t len, Access need,
                                     WcStatus* err) const {
  auto it = regions_.find(a.region);
  if (a.node != id_ || it == regions_.end() || it->second.rkey != a.rkey ||
      (it->second.access & need) != need || !range_within(a.offset, len, it->second.length)) {
    *err = WcStatus::kRemoteAccessError;
    return nullptr;
  }
  return &it->second;
}

bool Node::fenced_locked(NodeId source) const {
  if (fenced_count_.load(std::memory_order_acquire) == 0) return false;
  std::lock_guard<std::mutex> lock(fence_mu_);
  return fenced_.count(source) != 0;
}

void Node::fence(NodeId source) {
  {
    std::lock_guard<std::mutex> lock(fence_mu_);
    if (fenced_.insert(source).second) fenced_count_.fetch_add(1, std::memory_order_acq_rel);
  }
  // Every copy checks for fences under regions_mu_ held shared: taking it
  // exclusively waits out the copy in progress, and later ones see the fence.
  std::unique_lock<std::shared_mutex> drain(regions_mu_);
}

bool Node::rejoin(NodeId source) {
  std::lock_guard<std::mutex> lock(fence_mu_);
  if (fenced_.erase(source) == 0) return false;
  fenced_count_.fetch_sub(1, std::memory_order_acq_rel);
  return true;
}

void Node::finish_initiator(const InboundOp& op, WcStatus status) {
  Node* src = fabric_.node(op.source);
  if (src == nullptr) return;
  // Free the send-queue slot before the completion is visible: a caller
  // that sees the completion may post again at once.
  src->outstanding_send().fetch_sub(1, std::memory_order_acq_rel);
  if (op.wr.signaled || status != WcStatus::kSuccess) {
    Completion c;
    c.wr_id = op.wr.wr_id;
    c.op = op.wr.op;
    c.status = status;
    c.peer = id_;
    c.byte_len = op.wr.local.length;
    src->complete(c);
  }
}

void Node::execute_one_sided(const InboundOp& op) {
  const WorkRequest& wr = op.wr;
  auto* local = static_cast<std::byte*>(wr.local.addr);
  const bool atomic = wr.op == Opcode::kCas || wr.op == Opcode::kFaa;
  const uint64_t len = atomic ? 8 : wr.local.length;
  WcStatus status = WcStatus::kSuccess;
  {
    // The initiator's buffer too: it may have given up on this request
    // (a timed-out wait), deregistered and freed the buffer meanwhile.
    const Node* initiator = fabric_.node(op.source);
    RegionLocks locks(*this, initiator);
    const RegionEntry* r = nullptr;
    if (fenced_locked(op.source)) {
      status = WcStatus::kRetryExceeded;  // its connection is gone (Transport::fence_peer)
    } else {
      r = find_remote(wr.remote, len, required_access(wr.op), &status);
    }
    if (r != nullptr && initiator != nullptr && !initiator->local_buffer_ok_locked({local, static_cast<uint32_t>(len), wr.local.lkey})) {
      status = WcStatus::kFlushed;
      r = nullptr;
    }
    if (r != nullptr) {
      std::byte* target = r->base + wr.remote.offset;
      switch (wr.op) {
        case Opcode::kRead: dma_read(local, target, len); break;
        case Opcode::kWrite:
        case Opcode::kWriteWithImm: dma_copy(target, local, len); break;
        case Opcode::kCas:
        case Opcode::kFaa: {
          if (reinterpret_cast<uintptr_t>(target) % 8 != 0) {
            status = WcStatus::kRemoteOperationError;
            break;
          }
          auto* word = reinterpret_cast<uint64_t*>(target);
          uint64_t old;
          if (wr.op == Opcode::kCas) {
            old = wr.compare_add;
            __atomic_compare_exchange_n(word, &old, wr.swap, false, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST);
          } else {
            old = __atomic_fetch_add(word, wr.compare_add, __ATOMIC_SEQ_CST);
          }
          std::memcpy(local, &old, 8);
          break;
        }
        default: status = WcStatus::kRemoteOperationError; break;
      }
    }
  }
  if (wr.op == Opcode::kWriteWithImm && status == WcStatus::kSuccess) {
    // Only a WRITE that succeeded consumes the receive it waited for.
    std::unique_lock<std::mutex> lock(nic_mu_);
    Completion c = take_recv(lock, op.source);
    c.byte_len = static_cast<uint32_t>(len);
    c.imm = wr.imm;
    c.has_imm = true;
    complete(c);
  }
  finish_initiator(op, status);
}

Completion Node::take_recv(std::unique_lock<std::mutex>& nic_lock, NodeId source) {
  const RecvRequest recv = recvs_.front();
  recvs_.pop_front();
  nic_lock.unlock();
  posted_recvs_.fetch_sub(1, std::memory_order_acq_rel);
  Completion c;
  c.wr_id = recv.wr_id;
  c.op = Opcode::kRecv;
  c.peer = source;
  return c;
}

bool Node::try_execute(InboundOp& op, std::unique_lock<std::mutex>& nic_lock) {
  if (op.wr.op == Opcode::kSend) {
    // Both buffers stay registered (and allocated) until the copy is done.
    const Node* sender = fabric_.node(op.source);
    std::optional<RegionLocks> locks(std::in_place, *this, sender);
    if (fenced_locked(op.source)) {
      locks.reset();
      nic_lock.unlock();
      finish_initiator(op, WcStatus::kRetryExceeded);  // the receive stays posted
      nic_lock.lock();
      return true;
    }
    if (sender != nullptr && !sender->local_buffer_ok_locked(op.wr.local)) {
      // The sender gave up on this message (a timed-out wait) and freed
      // its buffer: nothing to deliver, and the receive stays posted
      // (issue 16: a heap use after free under ASan).
      locks.reset();
      nic_lock.unlock();
      finish_initiator(op, WcStatus::kFlushed);
      nic_lock.lock();
      return true;
    }
    const RecvRequest recv = recvs_.front();
    Completion rc = take_recv(nic_lock, op.source);
    WcStatus sender_status = WcStatus::kSuccess;
    {
      if (!local_buffer_ok_locked(recv.local)) {
        // The receiver deregistered the buffer it had posted.
        rc.status = WcStatus::kFlushed;
        sender_status = WcStatus::kRemoteOperationError;
      } else if (op.wr.local.length > recv.local.length) {
        rc.status = WcStatus::kLocalLengthError;
        sender_status = WcStatus::kRemoteOperationError;
      } else {
        dma_copy(static_cast<std::byte*>(recv.local.addr),
                 static_cast<const std::byte*>(op.wr.local.addr), op.wr.local.length);
        rc.byte_len = op.wr.local.length;
        rc.imm = op.wr.imm;
      }
    }
    locks.reset();
    complete(rc);
    finish_initiator(op, sender_status);
  } else {
    nic_lock.unlock();
    execute_one_sided(op);
  }
  nic_lock.lock();
  return true;
}

void Node::nic_loop() {
  const LoopbackOptions& opt = fabric_.options();
  std::unique_lock<std::mutex> lock(nic_mu_);
  // Sources whose head-of-line message waits for a receive (few at once).
  std::vector<NodeId> stalled;
  while (!nic_stop_) {
    if (inbound_.empty()) {
      nic_cv_.wait(lock);
      continue;
    }
    const Nanos now = fabric_.now_ns();
    Nanos wake_at = INT64_MAX;
    bool progressed = false;
    stalled.clear();
    for (auto it = inbound_.begin(); it != inbound_.end(); ++it) {
      if (it->ready_at_ns > now) {
        wake_at = std::min(wake_at, it->ready_at_ns);
        break;  // later entries were posted later, so are not ready either
      }
      if (std::find(stalled.begin(), stalled.end(), it->source) != stalled.end()) continue;
      InboundOp op = *it;
      if (crashed()) {
        // Unanswered: the initiator's transport retries run out.
        const Nanos fails_at = op.ready_at_ns + opt.retry_exceeded_after;
        if (now < fails_at) {
          wake_at = std::min(wake_at, fails_at);
          break;  // later entries were posted later
        }
        inbound_.erase(it);
        lock.unlock();
        finish_initiator(op, WcStatus::kRetryExceeded);
        lock.lock();
        progressed = true;
        break;
      }
      const bool wants_recv = is_message(op.wr.op);
      if (wants_recv && recvs_.empty()) {
        if (opt.no_recv_policy == NoRecvPolicy::kFail || now >= op.rnr_deadline_ns) {
          inbound_.erase(it);
          lock.unlock();
          finish_initiator(op, WcStatus::kRnrRetryExceeded);
          lock.lock();
          progressed = true;
          break;
        }
        stalled.push_back(op.source);
        wake_at = std::min(wake_at, op.rnr_deadline_ns);
        continue;
      }
      inbound_.erase(it);
      try_execute(op, lock);
      progressed = true;
      break;  // the deque may have changed while unlocked: rescan
    }
    if (progressed) continue;
    if (wake_at == INT64_MAX) {
      nic_cv_.wait(lock);
    } else {
      nic_cv_.wait_for(lock, std::chrono::nanoseconds(std::max<Nanos>(wake_at - now, 1000)));
    }
  }
}

}  // namespace locus::loopback
