// ShadowTransport: see shadow_transport.h.
#include "backends/verbs/shadow_transport.h"

#include "backends/verbs/verbs_endpoint.h"

namespace locus::verbs {

ShadowTransport::ShadowTransport(Directory& directory, NodeId id) : directory_(directory), id_(id) {}

TransportLimits ShadowTransport::limits() const {
  const VerbsTuning& t = directory_.tuning();
  return {t.max_send_wr, t.max_recv_wr, t.max_message_bytes, false};
}

StatusOr<Region> ShadowTransport::register_memory(void* addr, uint64_t length, Access access) {
  if (addr == nullptr && length > 0) return invalid_argument("register_memory: null address");
  Region r;
  r.node = id_;
  r.id = directory_.next_region_id();
  r.base = static_cast<std::byte*>(addr);
  r.length = length;
  r.access = access;
  return r;
}

Status ShadowTransport::deregister_memory(const Region&) { return Status(); }

Status ShadowTransport::post(std::span<const WorkRequest>) {
  return unavailable("node " + std::to_string(id_) +
                     " is served by another process (locus serve --node): this process only holds its "
                     "share of the load");
}

Status ShadowTransport::post_recv(std::span<const RecvRequest>) { return Status(); }

size_t ShadowTransport::poll(std::span<Completion>) { return 0; }

size_t ShadowTransport::wait(std::span<Completion>, Nanos) { return 0; }

}  // namespace locus::verbs
