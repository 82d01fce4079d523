// Orphaned builds: the meganodes that live servers hold half built for
// meganode splits whose driver died with its server (Cell paper, section
// 2.6: the split records let recovery find and remove orphaned meganodes).
//
// A split's new meganode Y is built on a target server, unreachable, until
// the source's split_finish links it. When the source's machine dies mid
// split, its driver dies too and nothing would ever finish or abandon Y on
// the (live) target: it leaked until that server restarted. The server
// that takes the source's store over knows what was in flight: it replayed
// the split records and aborted the splits begun and not finished. So,
// before it splits anything itself (its own splits would name the same
// source), it asks every other server for the builds that name the dead
// store as source (kPendingBuilds) and, for each, whether it was linked
// (the split finished with Y, or the superblock names it as the new root):
// linked ones are declared live (a split that finished before its
// kMeganodeLive), others abandoned (an aborted split's Y, or a new root
// meganode whose kSetRoot never came), freeing the meganode.
#pragma once

#include <functional>
#include <vector>

#include "core/index/cell/caller.h"
#include "core/index/cell/store.h"

namespace locus::cell {

struct OrphanStats {
  uint64_t declared_live = 0;
  uint64_t abandoned = 0;
  uint64_t unreachable = 0;  // servers that did not answer (skipped)
};

// Resolves the builds named by `source`'s splits on each of `servers`
// (skipping none: leave the caller's own server out). `linked` says
// whether a build was linked into the tree.
Status resolve_builds_elsewhere(Caller& caller, const std::vector<NodeId>& servers, CellRegionId source,
                                const std::function<StatusOr<bool>(const Store::PendingBuild&)>& linked,
                                OrphanStats* stats = nullptr);

}  // namespace locus::cell
