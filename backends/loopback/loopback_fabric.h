// Internals of the loopback backend: the fabric (all nodes of one process)
// and each node's emulated NIC. A node owns its registered regions, its
// completion queue, its posted receives and an inbound queue of requests
// other nodes aimed at it; its NIC thread serves that queue, touching the
// node's memory concurrently with the node's CPU exactly as a real NIC's
// DMA engine would.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "backends/loopback/loopback_runtime.h"
#include "core/transport/transport.h"

namespace locus::loopback {

class Fabric;

struct RegionEntry {
  std::byte* base = nullptr;
  uint64_t length = 0;
  Access access = kLocalOnly;
  uint32_t rkey = 0;
};

// One request in flight: built at post time, executed by the target's NIC.
struct InboundOp {
  WorkRequest wr;
  NodeId source = kInvalidNode;
  Nanos ready_at_ns = 0;       // post time + configured latency
  Nanos rnr_deadline_ns = 0;   // when a SEND stalled on no receive gives up
};

class Node;

// The region locks of a target node and the initiator of a request, held
// shared for one copy: neither may deregister (and free) the memory the
// NIC is copying from or into meanwhile. Taken in node-id order, so two
// NICs copying between the same nodes never wait on each other.
class RegionLocks {
 public:
  RegionLocks(const Node& target, const Node* initiator);
  RegionLocks(const RegionLocks&) = delete;
  RegionLocks& operator=(const RegionLocks&) = delete;

 private:
  std::shared_lock<std::shared_mutex> first_, second_;
};

class Node {
 public:
  Node(Fabric& fabric, NodeId id, std::string name);
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  NodeId id() const { return id_; }
  const std::string& name() const { return name_; }
  Fabric& fabric() { return fabric_; }

  // --- regions (control path) ---
  StatusOr<Region> register_memory(void* addr, uint64_t length, Access access);
  Status deregister_memory(const Region& region);
  // True if [addr, addr+len) lies in a live local registration with this lkey.
  bool local_buffer_ok(const LocalBuf& buf) const;
  // The same, with regions_mu_ already held (RegionLocks).
  bool local_buffer_ok_locked(const LocalBuf& buf) const;

  // --- data path, called by initiators ---
  void enqueue_inbound(const InboundOp* ops, size_t n);
  void push_recvs(const RecvRequest* reqs, size_t n);
  void complete(const Completion& c);  // into this node's CQ
  size_t poll(Completion* out, size_t cap);
  size_t wait(Completion* out, size_t cap, Nanos timeout);

  std::atomic<uint32_t>& outstanding_send() { return outstanding_send_; }
  std::atomic<uint32_t>& posted_recvs() { return posted_recvs_; }
  bool crashed() const { return crashed_.load(std::memory_order_acquire); }
  void crash();
  void revive() { crashed_.store(false, std::memory_order_release); }
  void stop_nic();

  // --- fences (Transport::fence_peer / rejoin) ---
  // After fence() returns no request from `source` touches this node's
  // memory (the one being copied now has finished) until rejoin(source).
  void fence(NodeId source);
  // True if `source` was fenced (and is no longer).
  bool rejoin(NodeId source);

 private:
  // Whether requests from `source` are fenced off; regions_mu_ held (so a
  // fence() waits for the copy this guards).
  bool fenced_locked(NodeId source) const;
  void nic_loop();
  // Executes one inbound op (the target is this node). Returns false if it
  // is a message that must wait for a receive to be posted.
  bool try_execute(InboundOp& op, std::unique_lock<std::mutex>& nic_lock);
  void execute_one_sided(const InboundOp& op);
  void finish_initiator(const InboundOp& op, WcStatus status);
  // Pops the oldest posted receive (nic_lock held on entry, released on
  // return) and starts its completion.
  Completion take_recv(std::unique_lock<std::mutex>& nic_lock, NodeId source);
  // Looks up a live region by id; on success holds regions_mu_ shared in `lock`.
  const RegionEntry* find_remote(const RemoteAddr& a, uint64_t len, Access need,
                                 WcStatus* err) const;

  Fabric& fabric_;
  const NodeId id_;
  const std::string name_;

  mutable std::shared_mutex regions_mu_;  // shared while a NIC touches a region
  friend class RegionLocks;
  std::unordered_map<RegionId, RegionEntry> regions_;

  std::mutex nic_mu_;  // guards inbound_, recvs_, nic_stop_
  std::condition_variable nic_cv_;
  std::deque<InboundOp> inbound_;
  std::deque<RecvRequest> recvs_;
  bool nic_stop_ = false;

  std::mutex cq_mu_;
  std::condition_variable cq_cv_;
  std::deque<Completion> cq_;

  std::atomic<uint32_t> outstanding_send_{0};
  std::atomic<uint32_t> posted_recvs_{0};
  std::atomic<bool> crashed_{false};
  mutable std::mutex fence_mu_;  // guards fenced_
  std::unordered_set<NodeId> fenced_;
  std::atomic<uint32_t> fenced_count_{0};  // fenced_.size(): the data path skips the lock at 0
  std::thread nic_thread_;
};

// All nodes of one loopback runtime. Node slots are a fixed array so NIC
// threads can look peers up without locks while nodes are being added.
class Fabric {
 public:
  static constexpr uint32_t kMaxNodes = 4096;

  explicit Fabric(const LoopbackOptions& options);
  ~Fabric();

  const LoopbackOptions& options() const { return options_; }
  StatusOr<Node*> add_node(std::string name);
  Node* node(NodeId id) const {
    return id < kMaxNodes ? nodes_[id].load(std::memory_order_acquire) : nullptr;
  }
  RegionId next_region_id() { return next_region_.fetch_add(1, std::memory_order_relaxed); }
  uint32_t make_rkey(RegionId id) const;
  Nanos now_ns() const;

 private:
  LoopbackOptions options_;
  std::mutex add_mu_;
  uint32_t node_count_ = 0;
  std::array<std::atomic<Node*>, kMaxNodes> nodes_{};
  std::deque<std::unique_ptr<Node>> owned_;
  std::atomic<RegionId> next_region_{1};
};

}  // namespace locus::loopback
