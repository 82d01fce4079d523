// Orphaned builds: see orphans.h.
#include "core/index/cell/orphans.h"

namespace locus::cell {

Status resolve_builds_elsewhere(Caller& caller, const std::vector<NodeId>& servers, CellRegionId source,
                                const std::function<StatusOr<bool>(const Store::PendingBuild&)>& linked,
                                OrphanStats* stats) {
  for (NodeId server : servers) {
    std::vector<Store::PendingBuild> builds;
    {
      rpc::Writer w(caller.payload_buffer());
      w.put(source);
      auto reply = caller.call(server, kPendingBuilds, w.size());
      // A server that does not answer is dead or moving too: its stores'
      // own recovery resolves their builds (asking this source).
      if (!reply.is_ok()) {
        if (stats != nullptr) ++stats->unreachable;
        continue;
      }
      rpc::Reader r(*reply);
      uint32_t n = 0;
      bool ok = r.get(&n);
      for (uint32_t i = 0; ok && i < n; ++i) {
        Store::PendingBuild& b = builds.emplace_back();
        ok = r.get(&b.root) && r.get(&b.split_id);
      }
      if (!ok || !r.at_end()) return corruption("cell pending_builds: malformed reply");
    }
    for (const Store::PendingBuild& b : builds) {
      LOCUS_ASSIGN_OR_RETURN(bool is_linked, linked(b));
      rpc::Writer w(caller.payload_buffer());
      w.put(b.root);
      w.put(b.split_id);
      LOCUS_RETURN_IF_ERROR(caller.call(server, is_linked ? kMeganodeLive : kMeganodeAbandon, w.size()).status());
      if (stats != nullptr) ++(is_linked ? stats->declared_live : stats->abandoned);
    }
  }
  return Status();
}

}  // namespace locus::cell
