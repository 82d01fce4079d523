// Loopback control path: node creation, memory registration, crash
// injection and the completion queue. The NIC's data path is in
// loopback_nic.cc.
#include <chrono>
#include <cstring>

#include "backends/loopback/loopback_fabric.h"
#include "core/common/check.h"

namespace locus::loopback {

Fabric::Fabric(const LoopbackOptions& options) : options_(options) {}

Fabric::~Fabric() {
  // Stop every NIC before any node goes away: NICs reach into peers.
  for (auto& n : owned_) n->stop_nic();
}

StatusOr<Node*> Fabric::add_node(std::string name) {
  std::lock_guard<std::mutex> lock(add_mu_);
  if (node_count_ >= kMaxNodes) {
    return resource_exhausted("loopback fabric is full (" + std::to_string(kMaxNodes) + " nodes)");
  }
  const NodeId id = node_count_++;
  owned_.push_back(std::make_unique<Node>(*this, id, std::move(name)));
  nodes_[id].store(owned_.back().get(), std::memory_order_release);
  return owned_.back().get();
}

uint32_t Fabric::make_rkey(RegionId id) const {
  // Not guessable from the region id alone; a wrong rkey is an access error.
  uint64_t x = (static_cast<uint64_t>(id) << 32) ^ (options_.seed * 0x9E3779B97F4A7C15ULL);
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 32;
  return static_cast<uint32_t>(x) | 1u;
}

Nanos Fabric::now_ns() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Node::Node(Fabric& fabric, NodeId id, std::string name)
    : fabric_(fabric), id_(id), name_(std::move(name)) {
  nic_thread_ = std::thread([this] { nic_loop(); });
}

Node::~Node() { stop_nic(); }

void Node::stop_nic() {
  {
    std::lock_guard<std::mutex> lock(nic_mu_);
    nic_stop_ = true;
  }
  nic_cv_.notify_all();
  if (nic_thread_.joinable()) nic_thread_.join();
}

StatusOr<Region> Node::register_memory(void* addr, uint64_t length, Access access) {
  if (addr == nullptr && length > 0) return invalid_argument("register_memory: null address");
  const RegionId rid = fabric_.next_region_id();
  RegionEntry e{static_cast<std::byte*>(addr), length, access, fabric_.make_rkey(rid)};
  {
    std::unique_lock<std::shared_mutex> lock(regions_mu_);
    regions_.emplace(rid, e);
  }
  return Region{id_, rid, rid, e.rkey, e.base, length, access};
}

Status Node::deregister_memory(const Region& region) {
  // The exclusive lock waits for any NIC access in progress on this node.
  std::unique_lock<std::shared_mutex> lock(regions_mu_);
  if (region.node != id_ || regions_.erase(region.id) == 0) {
    return not_found("deregister_memory: region " + std::to_string(region.id) +
                     " is not registered on node " + name_);
  }
  return Status();
}

RegionLocks::RegionLocks(const Node& target, const Node* initiator) {
  const Node* a = &target;
  const Node* b = initiator == nullptr || initiator == &target ? nullptr : initiator;
  if (b != nullptr && b->id() < a->id()) std::swap(a, b);
  first_ = std::shared_lock<std::shared_mutex>(a->regions_mu_);
  if (b != nullptr) second_ = std::shared_lock<std::shared_mutex>(b->regions_mu_);
}

bool Node::local_buffer_ok(const LocalBuf& buf) const {
  std::shared_lock<std::shared_mutex> lock(regions_mu_);
  return local_buffer_ok_locked(buf);
}

bool Node::local_buffer_ok_locked(const LocalBuf& buf) const {
  auto it = regions_.find(buf.lkey);
  if (it == regions_.end()) return false;
  const RegionEntry& e = it->second;
  auto* p = static_cast<const std::byte*>(buf.addr);
  if (buf.length == 0) return true;
  return p >= e.base && range_within(static_cast<uint64_t>(p - e.base), buf.length, e.length);
}

void Node::crash() {
  crashed_.store(true, std::memory_order_release);
  nic_cv_.notify_all();
}

void Node::complete(const Completion& c) {
  {
    std::lock_guard<std::mutex> lock(cq_mu_);
    cq_.push_back(c);
  }
  cq_cv_.notify_one();
}

size_t Node::poll(Completion* out, size_t cap) {
  std::lock_guard<std::mutex> lock(cq_mu_);
  size_t n = 0;
  while (n < cap && !cq_.empty()) {
    out[n++] = cq_.front();
    cq_.pop_front();
  }
  return n;
}

size_t Node::wait(Completion* out, size_t cap, Nanos timeout) {
  std::unique_lock<std::mutex> lock(cq_mu_);
  if (cq_.empty() && timeout > 0) {
    cq_cv_.wait_for(lock, std::chrono::nanoseconds(timeout), [this] { return !cq_.empty(); });
  }
  size_t n = 0;
  while (n < cap && !cq_.empty()) {
    out[n++] = cq_.front();
    cq_.pop_front();
  }
  return n;
}

void Node::enqueue_inbound(const InboundOp* ops, size_t n) {
  {
    std::lock_guard<std::mutex> lock(nic_mu_);
    for (size_t i = 0; i < n; ++i) inbound_.push_back(ops[i]);
  }
  nic_cv_.notify_one();
}

void Node::push_recvs(const RecvRequest* reqs, size_t n) {
  {
    std::lock_guard<std::mutex> lock(nic_mu_);
    for (size_t i = 0; i < n; ++i) recvs_.push_back(reqs[i]);
  }
  nic_cv_.notify_one();
}

}  // namespace locus::loopback
