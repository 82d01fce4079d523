// Loopback Transport and Runtime: post-time validation of work requests
// against the endpoint's registrations and queue bounds, hand-off to the
// target's NIC, and actors as OS threads.
#include "backends/loopback/loopback_runtime.h"

#include <thread>
#include <vector>

#include "backends/loopback/loopback_fabric.h"
#include "backends/os/thread_actors.h"

namespace locus::loopback {
namespace {

class LoopbackTransport final : public Transport {
 public:
  explicit LoopbackTransport(Node& node) : node_(node) {}

  NodeId node_id() const override { return node_.id(); }
  TransportLimits limits() const override {
    const auto& o = node_.fabric().options();
    // The loopback NIC copies a WRITE a word at a time in ascending order;
    // x86's stores become visible in program order (TSO), other CPUs'
    // need not.
#if defined(__x86_64__)
    constexpr bool kInOrder = true;
#else
    constexpr bool kInOrder = false;
#endif
    return {o.max_send_wr, o.max_recv_wr, o.max_message_bytes, kInOrder};
  }

  StatusOr<Region> register_memory(void* addr, uint64_t length, Access access) override {
    return node_.register_memory(addr, length, access);
  }
  Status deregister_memory(const Region& region) override {
    return node_.deregister_memory(region);
  }

  Status post(std::span<const WorkRequest> batch) override {
    if (batch.empty()) return Status();
    const auto& opt = node_.fabric().options();
    if (batch.size() > opt.max_send_wr) {
      return resource_exhausted("post: batch of " + std::to_string(batch.size()) +
                                " exceeds max_send_wr " + std::to_string(opt.max_send_wr));
    }
    for (const WorkRequest& wr : batch) {
      LOCUS_RETURN_IF_ERROR(check_work_request(wr, opt.max_message_bytes,
                                               node_.local_buffer_ok(wr.local), node_.name()));
    }
    // Reserve send-queue slots for the whole batch, or post nothing.
    auto& outstanding = node_.outstanding_send();
    uint32_t cur = outstanding.load(std::memory_order_acquire);
    do {
      if (cur + batch.size() > opt.max_send_wr) {
        return resource_exhausted("post: send queue full on " + node_.name() + " (" +
                                  std::to_string(cur) + " outstanding, max_send_wr " +
                                  std::to_string(opt.max_send_wr) + ")");
      }
    } while (!outstanding.compare_exchange_weak(cur, cur + static_cast<uint32_t>(batch.size()),
                                                std::memory_order_acq_rel));
    const Nanos now = node_.fabric().now_ns();
    // Requests go to their target's NIC in posting order, one target at a time.
    size_t i = 0;
    while (i < batch.size()) {
      const NodeId target_id = batch[i].remote.node;
      size_t n = 0;
      while (i + n < batch.size() && batch[i + n].remote.node == target_id && n < kChunk) {
        InboundOp& op = scratch_[n];
        op.wr = batch[i + n];
        op.source = node_.id();
        op.ready_at_ns = now + opt.op_latency;
        op.rnr_deadline_ns = now + opt.op_latency + opt.rnr_timeout;
        ++n;
      }
      Node* target = node_.fabric().node(target_id);
      if (node_.crashed() || target == nullptr) {
        const WcStatus st = node_.crashed() ? WcStatus::kFlushed : WcStatus::kRetryExceeded;
        for (size_t k = 0; k < n; ++k) fail_locally(scratch_[k], st);
      } else {
        target->enqueue_inbound(scratch_, n);
      }
      i += n;
    }
    return Status();
  }

  Status post_recv(std::span<const RecvRequest> batch) override {
    const auto& opt = node_.fabric().options();
    for (const RecvRequest& r : batch) {
      if (!node_.local_buffer_ok(r.local)) {
        return invalid_argument("post_recv: buffer of " + std::to_string(r.local.length) +
                                " bytes is not inside a registration with lkey " +
                                std::to_string(r.local.lkey) + " on " + node_.name());
      }
    }
    auto& posted = node_.posted_recvs();
    uint32_t cur = posted.load(std::memory_order_acquire);
    do {
      if (cur + batch.size() > opt.max_recv_wr) {
        return resource_exhausted("post_recv: receive queue full on " + node_.name() +
                                  " (max_recv_wr " + std::to_string(opt.max_recv_wr) + ")");
      }
    } while (!posted.compare_exchange_weak(cur, cur + static_cast<uint32_t>(batch.size()),
                                           std::memory_order_acq_rel));
    node_.push_recvs(batch.data(), batch.size());
    return Status();
  }

  Status fence_peer(NodeId peer) override {
    if (node_.fabric().node(peer) == nullptr) return not_found("fence_peer: no node " + std::to_string(peer));
    node_.fence(peer);
    return Status();
  }
  bool rejoin(NodeId peer) override {
    Node* target = node_.fabric().node(peer);
    return target != nullptr && target->rejoin(node_.id());
  }

  size_t poll(std::span<Completion> out) override { return node_.poll(out.data(), out.size()); }
  size_t wait(std::span<Completion> out, Nanos timeout) override {
    return node_.wait(out.data(), out.size(), timeout);
  }

 private:
  static constexpr size_t kChunk = 64;

  void fail_locally(const InboundOp& op, WcStatus st) {
    Completion c;
    c.wr_id = op.wr.wr_id;
    c.op = op.wr.op;
    c.status = st;
    c.peer = op.wr.remote.node;
    node_.outstanding_send().fetch_sub(1, std::memory_order_acq_rel);
    node_.complete(c);
  }

  Node& node_;
  InboundOp scratch_[kChunk];
};

class LoopbackRuntime final : public Runtime {
 public:
  explicit LoopbackRuntime(const LoopbackOptions& options) : fabric_(options), actors_(options.seed) {}

  // Daemons stop before the transports they use go.
  ~LoopbackRuntime() override { actors_.join_daemons(); }

  std::string_view backend_name() const override { return "loopback"; }

  StatusOr<NodeId> add_node(const NodeOptions& options) override {
    LOCUS_ASSIGN_OR_RETURN(Node * node, fabric_.add_node(options.name));
    transports_.resize(node->id() + 1);
    transports_[node->id()] = std::make_unique<LoopbackTransport>(*node);
    return node->id();
  }

  Status spawn(NodeId node, std::string name, ActorKind kind,
               std::function<void(Env&)> fn) override {
    if (node >= transports_.size() || !transports_[node]) {
      return invalid_argument("spawn " + name + ": no node " + std::to_string(node));
    }
    actors_.spawn(transports_[node].get(), std::move(name), kind, std::move(fn));
    return Status();
  }

  Status run() override { return actors_.run(); }

  Env setup_env(NodeId node) override { return actors_.setup_env(transports_.at(node).get()); }

  Status crash_node(NodeId node) override {
    Node* n = fabric_.node(node);
    if (n == nullptr) return invalid_argument("crash_node: no node " + std::to_string(node));
    n->crash();
    return Status();
  }

  Status revive_node(NodeId node) override {
    Node* n = fabric_.node(node);
    if (n == nullptr) return invalid_argument("revive_node: no node " + std::to_string(node));
    n->revive();
    return Status();
  }

 private:
  Fabric fabric_;
  std::vector<std::unique_ptr<LoopbackTransport>> transports_;
  os::ThreadActors actors_;  // after the transports: destroyed (joined) first
};

}  // namespace

std::unique_ptr<Runtime> make_loopback_runtime(const LoopbackOptions& options) {
  return std::make_unique<LoopbackRuntime>(options);
}

}  // namespace locus::loopback
