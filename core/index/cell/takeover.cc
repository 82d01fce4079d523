// Takeover: see takeover.h.
#include "core/index/cell/takeover.h"

#include <algorithm>

#include "core/index/cell/orphans.h"
#include "core/membership/region_map.h"

namespace locus::cell {
namespace {
constexpr Nanos kSparePoll = kMillisecond;         // how soon a spare notices its assignment
constexpr Nanos kSourceRetry = 10 * kMillisecond;  // a split's source is itself being recovered
}  // namespace

Takeover::Takeover(uint32_t machines, const ServerOptions& options, const SplitDriverOptions& split,
                   SplitWorkerShared& shared)
    : machines_(machines), options_(options), split_(split), shared_(shared), dead_(machines, false) {
  std::vector<membership::Member> members;
  for (uint32_t m = 0; m < machines; ++m) members.push_back({member(m), "machine " + std::to_string(m)});
  auto created = membership::StaticMembership::create(std::move(members));
  if (created.is_ok()) membership_ = std::move(created).value();  // names are valid by construction
}

void Takeover::add_store(uint32_t machine, CellServer* server) {
  std::lock_guard<ShortMutex> lock(mu_);
  hosted_.push_back({machine, server});
}

std::function<CellServer*()> Takeover::add_spare(uint32_t machine, Env env) {
  auto spare = std::make_unique<Spare>();
  spare->machine = machine;
  spare->env = env;
  Spare* s = spare.get();
  spares_.push_back(std::move(spare));
  return [s] { return s->server.load(std::memory_order_acquire); };
}

Status Takeover::set_layout(const Layout& layout) {
  if (membership_ == nullptr) return internal_error("cell takeover: no membership");
  membership::RegionMap map;
  {
    std::lock_guard<ShortMutex> lock(mu_);
    layout_ = layout;
    for (const Hosted& h : hosted_) map[h.server->store().node_region()] = member(h.machine);
  }
  return membership::write_region_map(*membership_, map, membership::Versioned::kAbsent).status();
}

void Takeover::fail(const Status& st) {
  std::lock_guard<ShortMutex> lock(mu_);
  if (stats_.first_error.empty()) stats_.first_error = st.to_string();
}

Status Takeover::machine_died(Env& env, uint32_t machine) {
  if (machine >= machines_) return invalid_argument("cell takeover: no machine " + std::to_string(machine));
  std::vector<CellServer*> fence;
  std::vector<std::string> survivors;
  {
    std::lock_guard<ShortMutex> lock(mu_);
    if (dead_[machine]) return Status();
    dead_[machine] = true;
    ++stats_.machines_died;
    for (const Hosted& h : hosted_) {
      if (h.machine == machine) fence.push_back(h.server);
    }
    for (uint32_t m = 0; m < machines_; ++m) {
      if (!dead_[m]) survivors.push_back(member(m));
    }
  }
  for (CellServer* s : fence) s->fence(*env.clock);
  const Nanos died_at = env.clock->now();
  LOCUS_ASSIGN_OR_RETURN(membership::VersionedRegionMap map,
                         membership::take_over(*membership_, member(machine), survivors));
  Status result;
  std::lock_guard<ShortMutex> lock(mu_);
  std::erase_if(hosted_, [machine](const Hosted& h) { return h.machine == machine; });
  for (const auto& [region, owner] : map.regions) {
    bool moved_here = false;
    for (const Hosted& h : hosted_) moved_here |= h.server->store().node_region() == region;
    for (const auto& s : spares_) moved_here |= s->store.load() == static_cast<int64_t>(region) && !dead_[s->machine];
    if (moved_here) continue;  // served by a live machine already
    Spare* free = nullptr;
    for (const auto& s : spares_) {
      if (member(s->machine) == owner && s->store.load() < 0) {
        free = s.get();
        break;
      }
    }
    if (free == nullptr) {
      ++stats_.stores_unplaced;
      result = resource_exhausted("cell takeover: region " + std::to_string(region) + " went to " + owner +
                                  ", which has no spare endpoint left (index.spares_per_server)");
      continue;
    }
    free->died_at_ns = died_at;
    free->store.store(region, std::memory_order_release);
  }
  if (!result.is_ok() && stats_.first_error.empty()) stats_.first_error = result.to_string();
  return result;
}

void Takeover::run_spare(Env& env, uint32_t index) {
  Spare& spare = *spares_[index];
  int64_t region = -1;
  while (!env.stop_requested() && (region = spare.store.load(std::memory_order_acquire)) < 0) {
    env.clock->sleep_for(kSparePoll);
  }
  if (region < 0) return;
  if (Status st = recover(env, spare, static_cast<CellRegionId>(region)); !st.is_ok()) {
    fail(Status(st.code(), "cell takeover of region " + std::to_string(region) + ": " + st.message()));
  }
}

Status Takeover::recover(Env& env, Spare& spare, CellRegionId region) {
  // Replays the store's log into fresh memory registered on the spare's
  // endpoint (CellServer::create -> open_log); nothing serves it yet.
  LOCUS_ASSIGN_OR_RETURN(auto server, CellServer::create(spare.env, region, options_));
  CellServer* s = server.get();
  LOCUS_RETURN_IF_ERROR(s->abort_pending_splits());  // their drivers died with the machine
  const std::vector<Store::PendingBuild> builds = s->store().pending_builds();
  const log::RecoveryReport replayed = s->recovery();
  {
    std::lock_guard<ShortMutex> lock(mu_);
    layout_.regions[region] = s->node_region();
    layout_.regions[region + 1] = s->extent_region();
    s->set_layout(layout_);
  }
  spare.owned = std::move(server);
  spare.server.store(s, std::memory_order_release);  // the spare endpoint serves it from now
  {
    std::lock_guard<ShortMutex> lock(mu_);
    hosted_.push_back({spare.machine, s});
    for (const Hosted& h : hosted_) h.server->set_layout(layout_);
    ++stats_.stores_recovered;
    stats_.records_replayed += replayed.checkpoint_records + replayed.log.records;
    stats_.longest_recovery_ns = std::max(stats_.longest_recovery_ns, env.clock->now() - spare.died_at_ns);
  }
  run_split_worker(env, *s, split_, shared_,
                   [&](Caller& caller) { return resolve_builds(caller, s->node_id(), region, builds, env); });
  return Status();
}

Status Takeover::resolve_builds(Caller& caller, NodeId self, CellRegionId region,
                                const std::vector<Store::PendingBuild>& builds, Env& env) {
  // Asks `region`'s server whether it linked `b`; retried while that
  // server is itself being taken over.
  auto linked_at = [&](CellRegionId region, const Store::PendingBuild& b) -> StatusOr<bool> {
    while (true) {
      NodeId node = kInvalidNode;
      {
        std::lock_guard<ShortMutex> lock(mu_);
        if (const RegionInfo* info = layout_.region(region)) node = info->server;
      }
      rpc::Writer w(caller.payload_buffer());
      w.put(b.split_id);
      w.put(b.root);
      auto reply = caller.call(node, kSplitStatus, w.size());
      if (reply.is_ok()) {
        rpc::Reader r(*reply);
        uint8_t linked = 0;
        if (!r.get(&linked)) return corruption("cell split_status: malformed reply");
        return linked != 0;
      }
      if (env.stop_requested()) return reply.status();
      env.clock->sleep_for(kSourceRetry);
    }
  };
  auto linked = [&](const Store::PendingBuild& b) -> StatusOr<bool> {
    LOCUS_ASSIGN_OR_RETURN(bool at_root, linked_at(kSuperblockRegion, b));
    if (at_root) return true;
    return linked_at(SplitIds::source_of(b.split_id), b);
  };
  for (const Store::PendingBuild& b : builds) {
    LOCUS_ASSIGN_OR_RETURN(bool is_linked, linked(b));
    rpc::Writer w(caller.payload_buffer());
    w.put(b.root);
    w.put(b.split_id);
    LOCUS_RETURN_IF_ERROR(caller.call(self, is_linked ? kMeganodeLive : kMeganodeAbandon, w.size()).status());
  }
  std::vector<NodeId> others;
  {
    std::lock_guard<ShortMutex> lock(mu_);
    others = layout_.servers();
  }
  std::erase(others, self);
  OrphanStats orphans;
  const Status st = resolve_builds_elsewhere(caller, others, region, linked, &orphans);
  std::lock_guard<ShortMutex> lock(mu_);
  stats_.orphans_abandoned += orphans.abandoned;
  return st;
}

std::vector<CellServer*> Takeover::serving() const {
  std::lock_guard<ShortMutex> lock(mu_);
  std::vector<CellServer*> out;
  for (const Hosted& h : hosted_) out.push_back(h.server);
  return out;
}

TakeoverStats Takeover::stats() const {
  std::lock_guard<ShortMutex> lock(mu_);
  return stats_;
}

}  // namespace locus::cell
