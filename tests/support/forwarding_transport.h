// ForwardingTransport: a Transport that passes every call to another one,
// for test decorators that change only a few (which requests they post,
// which completions they hand back) and forward the rest.
#pragma once

#include "core/transport/transport.h"

namespace locus::testing {

class ForwardingTransport : public Transport {
 public:
  explicit ForwardingTransport(Transport& inner) : inner_(inner) {}

  NodeId node_id() const override { return inner_.node_id(); }
  TransportLimits limits() const override { return inner_.limits(); }
  StatusOr<Region> register_memory(void* addr, uint64_t length, Access access) override {
    return inner_.register_memory(addr, length, access);
  }
  Status deregister_memory(const Region& region) override { return inner_.deregister_memory(region); }
  Status post(std::span<const WorkRequest> batch) override { return inner_.post(batch); }
  Status post_recv(std::span<const RecvRequest> batch) override { return inner_.post_recv(batch); }
  size_t poll(std::span<Completion> out) override { return inner_.poll(out); }
  size_t wait(std::span<Completion> out, Nanos timeout) override { return inner_.wait(out, timeout); }
  void reset_peer(NodeId peer) override { inner_.reset_peer(peer); }
  Status fence_peer(NodeId peer) override { return inner_.fence_peer(peer); }
  bool rejoin(NodeId peer) override { return inner_.rejoin(peer); }

 protected:
  Transport& inner_;
};

}  // namespace locus::testing
