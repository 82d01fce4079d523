// ShadowTransport: the stand-in for a server entry that another process
// serves (`locus serve --node K`). Designs whose load spans servers (the
// NAM index's fine-grained tree, Nessie's cuckoo walk over every node's
// index table) lay out every server's memory in one deterministic load;
// each process runs that same load and keeps a shadow of every other
// server: memory the load writes into, never registered with the NIC
// (register_memory only names it) and never reachable (post fails). Only
// the process's own entry listens and registers its memory for real.
#pragma once

#include <string>

#include "backends/verbs/cluster_config.h"
#include "core/transport/transport.h"

namespace locus::verbs {

class Directory;

class ShadowTransport final : public Transport {
 public:
  ShadowTransport(Directory& directory, NodeId id);

  NodeId node_id() const override { return id_; }
  TransportLimits limits() const override;
  // A Region naming the memory (a fresh id, keys 0): no pinning, no NIC.
  StatusOr<Region> register_memory(void* addr, uint64_t length, Access access) override;
  Status deregister_memory(const Region& region) override;
  // Refused: this node serves nothing here (the runner spawns no worker on it).
  Status post(std::span<const WorkRequest> batch) override;
  // Accepted and never completed: an RpcServer set up on a shadow posts its receives.
  Status post_recv(std::span<const RecvRequest> batch) override;
  size_t poll(std::span<Completion> out) override;
  size_t wait(std::span<Completion> out, Nanos timeout) override;

 private:
  Directory& directory_;
  NodeId id_;
};

}  // namespace locus::verbs
