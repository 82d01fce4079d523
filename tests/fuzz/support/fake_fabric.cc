// FakeFabric: see fake_fabric.h.
#include "tests/fuzz/support/fake_fabric.h"

namespace locus::fuzz {

FakeTransport::FakeTransport(FakeFabric& fabric, NodeId id) : fabric_(fabric), id_(id) {}

TransportLimits FakeTransport::limits() const {
  // One thread: a WRITE is copied whole between the steps that could read it.
  return {FakeFabric::kMaxSendWr, FakeFabric::kMaxRecvWr, FakeFabric::kMaxMessageBytes, true};
}

StatusOr<Region> FakeTransport::register_memory(void* addr, uint64_t length, Access access) {
  if (addr == nullptr && length > 0) return invalid_argument("fake transport: null registration");
  Region r;
  r.node = id_;
  r.id = fabric_.next_region_id();
  r.lkey = r.rkey = r.id * 2654435761u;
  r.base = static_cast<std::byte*>(addr);
  r.length = length;
  r.access = access;
  regions_[r.id] = r;
  return r;
}

Status FakeTransport::deregister_memory(const Region& region) {
  if (regions_.erase(region.id) == 0) return invalid_argument("fake transport: no such region");
  return Status();
}

const Region* FakeTransport::region(RegionId id) const {
  auto it = regions_.find(id);
  return it == regions_.end() ? nullptr : &it->second;
}

bool FakeTransport::local_ok(const LocalBuf& b) const {
  for (const auto& [id, r] : regions_) {
    if (r.lkey == b.lkey && r.contains(b.addr, b.length)) return true;
  }
  return false;
}

Status FakeTransport::post(std::span<const WorkRequest> batch) {
  for (const WorkRequest& wr : batch) {
    const bool atomic = wr.op == Opcode::kCas || wr.op == Opcode::kFaa;
    LocalBuf local = wr.local;
    if (atomic) local.length = 8;
    LOCUS_RETURN_IF_ERROR(check_work_request(wr, FakeFabric::kMaxMessageBytes, local_ok(local), "fake"));
  }
  for (const WorkRequest& wr : batch) {
    const WcStatus status = execute(wr);
    if (wr.signaled || status != WcStatus::kSuccess) {
      Completion c;
      c.wr_id = wr.wr_id;
      c.op = wr.op;
      c.status = status;
      c.peer = wr.remote.node;
      c.byte_len = wr.local.length;
      complete(c);
    }
    if (status == WcStatus::kSuccess && (wr.op == Opcode::kSend || wr.op == Opcode::kWriteWithImm)) {
      FakeTransport* target = fabric_.node(wr.remote.node);
      if (target != nullptr && target->on_message) target->on_message(id_);
    }
  }
  return Status();
}

Completion FakeTransport::take_recv(NodeId from, uint32_t imm) {
  Completion rc;
  rc.wr_id = recvs_.front().wr_id;
  rc.op = Opcode::kRecv;
  rc.peer = from;
  rc.imm = imm;
  recvs_.pop_front();
  return rc;
}

WcStatus FakeTransport::execute(const WorkRequest& wr) {
  FakeTransport* target = fabric_.node(wr.remote.node);
  if (target == nullptr) return WcStatus::kRetryExceeded;
  const bool message = wr.op == Opcode::kSend || wr.op == Opcode::kWriteWithImm;
  if (message && target->recvs_.empty()) return WcStatus::kRnrRetryExceeded;
  if (wr.op == Opcode::kSend) {
    const RecvRequest recv = target->recvs_.front();
    Completion rc = target->take_recv(id_, wr.imm);
    WcStatus sender = WcStatus::kSuccess;
    if (!target->local_ok(recv.local)) {
      rc.status = WcStatus::kFlushed;
      sender = WcStatus::kRemoteOperationError;
    } else if (wr.local.length > recv.local.length) {
      rc.status = WcStatus::kLocalLengthError;
      sender = WcStatus::kRemoteOperationError;
    } else {
      if (wr.local.length > 0) std::memmove(recv.local.addr, wr.local.addr, wr.local.length);
      rc.byte_len = wr.local.length;
    }
    target->complete(rc);
    return sender;
  }
  const bool atomic = wr.op == Opcode::kCas || wr.op == Opcode::kFaa;
  const uint64_t len = atomic ? 8 : wr.local.length;
  const Region* r = target->region(wr.remote.region);
  if (r == nullptr || r->rkey != wr.remote.rkey || !range_within(wr.remote.offset, len, r->length) ||
      (r->access & required_access(wr.op)) != required_access(wr.op)) {
    return WcStatus::kRemoteAccessError;
  }
  std::byte* at = r->base + wr.remote.offset;
  auto* local = static_cast<std::byte*>(wr.local.addr);
  switch (wr.op) {
    case Opcode::kRead:
      if (len > 0) std::memmove(local, at, len);
      return WcStatus::kSuccess;
    case Opcode::kWrite:
    case Opcode::kWriteWithImm: {
      if (len > 0) std::memmove(at, local, len);
      if (wr.op == Opcode::kWriteWithImm) {
        Completion rc = target->take_recv(id_, wr.imm);
        rc.byte_len = static_cast<uint32_t>(len);
        rc.has_imm = true;
        target->complete(rc);
      }
      return WcStatus::kSuccess;
    }
    case Opcode::kCas:
    case Opcode::kFaa: {
      if (reinterpret_cast<uintptr_t>(at) % 8 != 0) return WcStatus::kRemoteOperationError;
      uint64_t old;
      std::memcpy(&old, at, 8);
      const uint64_t now = wr.op == Opcode::kFaa ? old + wr.compare_add
                                                 : (old == wr.compare_add ? wr.swap : old);
      std::memcpy(at, &now, 8);
      std::memcpy(local, &old, 8);
      return WcStatus::kSuccess;
    }
    default: return WcStatus::kRemoteOperationError;
  }
}

Status FakeTransport::post_recv(std::span<const RecvRequest> batch) {
  if (recvs_.size() + batch.size() > FakeFabric::kMaxRecvWr) {
    return resource_exhausted("fake transport: receive queue full");
  }
  for (const RecvRequest& r : batch) {
    if (!local_ok(r.local)) return invalid_argument("fake transport: receive buffer not registered");
  }
  for (const RecvRequest& r : batch) recvs_.push_back(r);
  return Status();
}

size_t FakeTransport::poll(std::span<Completion> out) {
  size_t n = 0;
  while (n < out.size() && !completions_.empty()) {
    out[n++] = completions_.front();
    completions_.pop_front();
  }
  return n;
}

size_t FakeTransport::wait(std::span<Completion> out, Nanos timeout) {
  const size_t n = poll(out);
  if (n == 0) fabric_.clock().advance(timeout > 0 ? timeout : 1);
  return n;
}

FakeTransport& FakeFabric::add_node(NodeId id) {
  auto& slot = nodes_[id];
  slot = std::make_unique<FakeTransport>(*this, id);
  return *slot;
}

FakeTransport* FakeFabric::node(NodeId id) {
  auto it = nodes_.find(id);
  return it == nodes_.end() ? nullptr : it->second.get();
}

Env FakeFabric::env(NodeId id) {
  Env e;
  e.transport = node(id);
  e.clock = &clock_;
  e.cpu = &cpu_;
  e.random = &random_;
  e.sync = &sync_;
  return e;
}

}  // namespace locus::fuzz
