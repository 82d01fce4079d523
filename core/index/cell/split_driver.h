// SplitDriver: drives one meganode split through the servers (paper
// section 2.2), and the separate parent insert that follows it, as Sagiv
// propagates node splits. The steps, all requests to servers:
//   1. split_begin on the owner: pick s, lock X_right.
//   2. Pick where the new meganode Y goes (the placement rule below).
//   3. meganode_create / append* / seal on the target: Y, a copy of
//      X_right's entries (for a leaf meganode, keys and values: extents
//      move with their leaves), unreachable so far.
//   4. split_finish on the owner: relink X_left to Y, drop X_right, unlock.
//   5. Insert (s -> Y) into X's parent meganode with a server-side
//      traversal to level + 1; if X is the root meganode, create a new root
//      meganode above X and Y and swing the superblock's root pointer. A
//      parent insert that cannot finish (timeout, shutdown) is abandoned:
//      B-link right links keep Y reachable, only one hop longer.
// A failure before step 4 aborts the split (X unlocked, Y abandoned).
//
// Replies get lost (timeouts, connections that break): every step is
// idempotent (protocol.h), so one that got no answer is sent again, up to
// step_attempts times. Y is abandoned only while it is certainly not in
// the tree: before split_finish is sent, or when an abort of this split
// succeeds after finish failed (an abort answering kAlreadyExists means
// the finish was applied). Likewise a new root meganode is abandoned only
// when kSetRoot answered "not installed". When the outcome stays unknown
// the meganode is kept: a meganode lost to the tree leaks, one freed while
// linked would lose its keys. After linking, Y and a new root are declared
// live (kMeganodeLive), which no abandon can undo.
//
// Placement (the paper's footnote 2): while some server holds fewer than
// spread_until_meganodes meganodes, Y goes to the server holding the
// fewest (spreading a young tree over the cluster); after that it stays
// local (saving network), unless this server has no free meganode.
#pragma once

#include <atomic>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/common/random.h"
#include "core/index/cell/caller.h"
#include "core/index/cell/protocol.h"
#include "core/transport/env.h"

namespace locus::cell {

struct PlacementOptions {
  uint32_t spread_until_meganodes = 2;
};

struct SplitDriverOptions {
  PlacementOptions placement;
  Nanos retry_min_ns = 20 * kMicrosecond;   // backoff while a parent is busy
  Nanos retry_max_ns = 2 * kMillisecond;
  Nanos parent_timeout_ns = 30 * kSecond;   // then the parent insert is abandoned
  uint32_t step_attempts = 8;               // sends of a step that got no answer
};

struct SplitDriverStats {
  uint64_t splits = 0;
  uint64_t remote_placements = 0;
  uint64_t new_roots = 0;
  uint64_t parent_inserts = 0;
  uint64_t parents_abandoned = 0;
  uint64_t aborted = 0;
};

class SplitDriver {
 public:
  // `wait` is called when the driver must wait for another split to make
  // progress (a busy parent, a root not yet installed): sleep in an actor,
  // run the other pending splits in set-up code. `stop` may be null.
  // `ids` are the own server's (CellServer::split_ids()).
  SplitDriver(Caller& caller, const Layout& layout, NodeId own_server, SplitIds& ids,
              const SplitDriverOptions& options, Random& rng, Clock& clock, std::function<void(Nanos)> wait,
              const std::atomic<bool>* stop = nullptr);

  // Splits `meganode` of the own server. OK also when there was nothing to
  // split (the meganode shrank or is already splitting).
  Status run(uint32_t meganode);
  const SplitDriverStats& stats() const { return stats_; }

 private:
  // Sends the request in the payload buffer, again while it gets no answer.
  StatusOr<std::span<const std::byte>> send(NodeId server, uint16_t type, size_t payload_bytes);
  StatusOr<NodeId> choose_target();
  Status copy_right_half(const SplitPlan& plan, NodeId target, uint64_t new_root);
  // After split_finish failed: true if it was applied all the same.
  StatusOr<bool> finished_after_all(uint32_t meganode, NodeId target, uint64_t new_root);
  Status insert_parent(const SplitPlan& plan, uint64_t new_root);
  // True if the new root meganode was installed.
  StatusOr<bool> grow_root(const SplitPlan& plan, uint64_t new_root);
  StatusOr<uint64_t> create(NodeId target, uint64_t split_id, uint32_t level, Bound min, Bound max,
                            uint64_t right);
  // kSplitFinish (with new_root) or kSplitAbort of this split.
  Status source_step(uint16_t type, uint32_t meganode, uint64_t new_root = kNullPtr);
  // kMeganodeSeal, kMeganodeAbandon or kMeganodeLive.
  Status target_step(NodeId target, uint16_t type, uint64_t root, uint64_t split_id);
  Status abort_split(uint32_t meganode, NodeId target, uint64_t new_root);
  bool stopping() const { return stop_ != nullptr && stop_->load(std::memory_order_acquire); }

  Caller& caller_;
  const Layout& layout_;
  NodeId own_;
  SplitIds& ids_;
  uint64_t split_id_ = 0;  // the split run() drives
  SplitDriverOptions options_;
  Random& rng_;
  Clock& clock_;
  std::function<void(Nanos)> wait_;
  const std::atomic<bool>* stop_;
  std::string cursor_;
  std::vector<std::byte> resend_;  // a request kept across a wait (others use the buffer meanwhile)
  SplitDriverStats stats_;
};

}  // namespace locus::cell
