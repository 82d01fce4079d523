// SplitDriver: see split_driver.h.
#include "core/index/cell/split_driver.h"

#include <algorithm>
#include <vector>

namespace locus::cell {
namespace {
constexpr uint32_t kMaxRedirects = 256;  // a parent traversal crosses few servers
constexpr size_t kAppendHeaderBytes = 8 + 8 + 4;  // root, split id, chunk
}  // namespace

SplitDriver::SplitDriver(Caller& caller, const Layout& layout, NodeId own_server, SplitIds& ids,
                         const SplitDriverOptions& options, Random& rng, Clock& clock,
                         std::function<void(Nanos)> wait, const std::atomic<bool>* stop)
    : caller_(caller),
      layout_(layout),
      own_(own_server),
      ids_(ids),
      options_(options),
      rng_(rng),
      clock_(clock),
      wait_(std::move(wait)),
      stop_(stop) {}

StatusOr<std::span<const std::byte>> SplitDriver::send(NodeId server, uint16_t type, size_t payload_bytes) {
  auto body = caller_.call(server, type, payload_bytes);
  Nanos backoff = options_.retry_min_ns;
  for (uint32_t sent = 1; sent < options_.step_attempts && !body.is_ok() && is_unanswered(body.status()); ++sent) {
    const std::span<std::byte> payload = caller_.payload_buffer();
    resend_.assign(payload.begin(), payload.begin() + static_cast<ptrdiff_t>(payload_bytes));
    wait_(backoff);  // may run other splits on this caller
    backoff = std::min(2 * backoff, options_.retry_max_ns);
    std::copy(resend_.begin(), resend_.end(), payload.begin());
    body = caller_.call(server, type, payload_bytes);
  }
  return body;
}

Status SplitDriver::source_step(uint16_t type, uint32_t meganode, uint64_t new_root) {
  rpc::Writer w(caller_.payload_buffer());
  w.put(meganode);
  if (type == kSplitFinish) w.put(new_root);
  w.put(split_id_);
  return send(own_, type, w.size()).status();
}

Status SplitDriver::target_step(NodeId target, uint16_t type, uint64_t root, uint64_t split_id) {
  rpc::Writer w(caller_.payload_buffer());
  w.put(root);
  w.put(split_id);
  return send(target, type, w.size()).status();
}

Status SplitDriver::abort_split(uint32_t meganode, NodeId target, uint64_t new_root) {
  ++stats_.aborted;
  Status st = source_step(kSplitAbort, meganode);
  // Only for failures before split_finish was sent: Y is not in the tree.
  if (new_root != kNullPtr) (void)target_step(target, kMeganodeAbandon, new_root, split_id_);
  return st;
}

StatusOr<NodeId> SplitDriver::choose_target() {
  struct Count {
    NodeId server;
    uint32_t in_use;
    uint32_t capacity;
  };
  std::vector<Count> counts;  // a split is rare: set-up-like cost is fine here
  for (NodeId s : layout_.servers()) {
    LOCUS_ASSIGN_OR_RETURN(auto body, send(s, kMeganodeCount, 0));
    rpc::Reader r(body);
    Count c{s, 0, 0};
    if (!(r.get(&c.in_use) && r.get(&c.capacity) && r.at_end())) {
      return corruption("cell: malformed meganode count from server " + std::to_string(s));
    }
    if (c.in_use < c.capacity) counts.push_back(c);
  }
  if (counts.empty()) return resource_exhausted("cell: every server's meganodes are in use");
  uint32_t fewest = UINT32_MAX;
  for (const Count& c : counts) fewest = std::min(fewest, c.in_use);
  const auto own = std::find_if(counts.begin(), counts.end(), [&](const Count& c) { return c.server == own_; });
  if (fewest >= options_.placement.spread_until_meganodes && own != counts.end()) return own_;
  std::vector<NodeId> least;
  for (const Count& c : counts) {
    if (c.in_use == fewest) least.push_back(c.server);
  }
  return least[rng_.uniform(least.size())];
}

StatusOr<uint64_t> SplitDriver::create(NodeId target, uint64_t split_id, uint32_t level, Bound min, Bound max,
                                       uint64_t right) {
  rpc::Writer w(caller_.payload_buffer());
  w.put(split_id);
  w.put(static_cast<uint8_t>(level));
  put_bound(w, min);
  put_bound(w, max);
  w.put(right);
  LOCUS_ASSIGN_OR_RETURN(auto body, send(target, kMeganodeCreate, w.size()));
  rpc::Reader r(body);
  uint64_t root = kNullPtr;
  if (!(r.get(&root) && r.at_end())) return corruption("cell: malformed meganode_create response");
  return root;
}

Status SplitDriver::copy_right_half(const SplitPlan& plan, NodeId target, uint64_t new_root) {
  cursor_.assign(plan.split_key);
  bool exclusive = false;
  uint32_t chunk = 0;
  const std::span<std::byte> payload = caller_.payload_buffer();
  while (true) {
    rpc::Writer w(payload);
    w.put(plan.meganode);
    w.blob(cursor_);
    w.put<uint8_t>(exclusive ? 1 : 0);
    w.put(static_cast<uint32_t>(payload.size() - kAppendHeaderBytes));
    LOCUS_ASSIGN_OR_RETURN(auto body, send(own_, kSplitScan, w.size()));
    rpc::Reader r(body);
    uint8_t done = 0, has_last = 0;
    std::string_view last;
    if (!(r.get(&done) && r.get(&has_last) && r.blob(&last))) {
      return corruption("cell: malformed split_scan response");
    }
    const std::span<const std::byte> entries = body.subspan(2 + 4 + last.size());
    if (has_last != 0) {
      rpc::Writer a(payload);
      a.put(new_root);
      a.put(split_id_);
      a.put(chunk++);
      a.bytes(entries.data(), entries.size());
      if (!a.ok()) return internal_error("cell: split chunk exceeds the append message");
      cursor_.assign(last);  // `last` views the response: copy before the next call
      exclusive = true;
      LOCUS_RETURN_IF_ERROR(send(target, kMeganodeAppend, a.size()).status());
    } else if (done == 0) {
      return internal_error("cell: split_scan made no progress");
    }
    if (done != 0) return Status();
  }
}

StatusOr<bool> SplitDriver::finished_after_all(uint32_t meganode, NodeId target, uint64_t new_root) {
  // Only an abort of this split tells: it succeeds while the split is
  // still under way (then Y is in no tree), and answers kAlreadyExists
  // once it finished.
  const Status aborted = source_step(kSplitAbort, meganode);
  if (aborted.code() == StatusCode::kAlreadyExists) return true;
  if (!aborted.is_ok()) return aborted;  // unknown: Y is kept
  ++stats_.aborted;
  (void)target_step(target, kMeganodeAbandon, new_root, split_id_);
  return false;
}

Status SplitDriver::run(uint32_t meganode) {
  split_id_ = ids_.next();
  rpc::Writer w(caller_.payload_buffer());
  w.put(meganode);
  w.put(split_id_);
  auto begun = send(own_, kSplitBegin, w.size());
  if (!begun.is_ok()) {
    // Nothing to do: the meganode is already splitting or no longer needs it.
    if (begun.status().code() == StatusCode::kAborted) return Status();
    if (is_unanswered(begun.status())) (void)source_step(kSplitAbort, meganode);  // in case it began
    return begun.status();
  }
  SplitPlan plan;
  rpc::Reader r(*begun);
  if (!decode_plan(r, &plan)) {
    (void)abort_split(meganode, kInvalidNode, kNullPtr);
    return corruption("cell: malformed split plan");
  }

  auto target = choose_target();
  if (!target.is_ok()) {
    (void)abort_split(meganode, kInvalidNode, kNullPtr);
    return target.status();
  }
  auto new_root = create(*target, split_id_, plan.level, Bound{plan.split_key, false},
                         Bound{plan.max_key, plan.max_inf}, plan.right);
  if (!new_root.is_ok()) {
    (void)abort_split(meganode, *target, kNullPtr);
    return new_root.status();
  }
  Status st = copy_right_half(plan, *target, *new_root);
  if (st.is_ok()) st = target_step(*target, kMeganodeSeal, *new_root, split_id_);
  if (!st.is_ok()) {
    (void)abort_split(meganode, *target, *new_root);
    return st;
  }
  st = source_step(kSplitFinish, meganode, *new_root);
  if (!st.is_ok()) {
    auto finished = finished_after_all(meganode, *target, *new_root);
    if (!finished.is_ok()) {
      return Status(st.code(), st.message() + "; whether split " + std::to_string(split_id_) +
                                   " finished is unknown (" + finished.status().to_string() +
                                   "), its new meganode is kept");
    }
    if (!*finished) return st;
  }
  (void)target_step(*target, kMeganodeLive, *new_root, split_id_);  // else it stays abandonable by this split only
  ++stats_.splits;
  if (*target != own_) ++stats_.remote_placements;
  st = insert_parent(plan, *new_root);
  if (st.code() == StatusCode::kAborted) {
    ++stats_.parents_abandoned;  // safe: Y stays reachable through X's right links
    return Status();
  }
  return st;
}

StatusOr<bool> SplitDriver::grow_root(const SplitPlan& plan, uint64_t new_root) {
  const uint64_t id = ids_.next();  // each attempt builds a root meganode of its own
  LOCUS_ASSIGN_OR_RETURN(NodeId target, choose_target());
  LOCUS_ASSIGN_OR_RETURN(uint64_t root,
                         create(target, id, plan.level + 1u, Bound{{}, true}, Bound{{}, true}, kNullPtr));
  rpc::Writer a(caller_.payload_buffer());
  a.put(root);
  a.put(id);
  a.put(uint32_t{0});          // the only chunk
  a.blob(std::string_view());  // entry 0: from -inf, the old root meganode
  a.put(plan.root);
  a.blob(plan.split_key);
  a.put(new_root);
  Status st = send(target, kMeganodeAppend, a.size()).status();
  if (st.is_ok()) st = target_step(target, kMeganodeSeal, root, id);
  if (!st.is_ok()) {
    (void)target_step(target, kMeganodeAbandon, root, id);
    return st;
  }
  rpc::Writer w(caller_.payload_buffer());
  w.put(plan.root);
  w.put(root);
  w.put(static_cast<uint32_t>(plan.level + 1u));
  auto body = send(layout_.bootstrap(), kSetRoot, w.size());
  // With no answer the root may be installed: keep it.
  if (!body.is_ok() && is_unanswered(body.status())) return body.status();
  const bool installed = body.is_ok() && !body->empty() && (*body)[0] == std::byte{1};
  (void)target_step(target, installed ? kMeganodeLive : kMeganodeAbandon, root, id);
  if (!body.is_ok()) return body.status();
  if (installed) ++stats_.new_roots;
  return installed;
}

Status SplitDriver::insert_parent(const SplitPlan& plan, uint64_t new_root) {
  const Nanos deadline = clock_.now() + options_.parent_timeout_ns;
  Nanos backoff = options_.retry_min_ns;
  auto pause = [&] {
    wait_(backoff);
    backoff = std::min(2 * backoff, options_.retry_max_ns);
  };
  while (true) {
    if (stopping() || clock_.now() > deadline) {
      return Status(StatusCode::kAborted, "cell: parent insert abandoned");
    }
    LOCUS_ASSIGN_OR_RETURN(auto body, send(layout_.bootstrap(), kGetRoot, 0));
    rpc::Reader r(body);
    uint64_t root = kNullPtr;
    uint32_t root_level = 0;
    if (!(r.get(&root) && r.get(&root_level))) return corruption("cell: malformed root response");
    if (root_level <= plan.level) {
      // X is on the top level: only the root meganode (the leftmost one)
      // grows the tree; a sibling waits for that new root to appear.
      if (plan.min_inf && root == plan.root) {
        LOCUS_ASSIGN_OR_RETURN(bool installed, grow_root(plan, new_root));
        if (installed) return Status();
      }
      pause();
      continue;
    }
    uint64_t p = root;
    for (uint32_t hops = 0; hops < kMaxRedirects; ++hops) {
      if (stopping() || clock_.now() > deadline) break;
      rpc::Writer w(caller_.payload_buffer());
      OpRequest q;
      q.op = OpKind::kInsertChild;
      q.level = static_cast<uint8_t>(plan.level + 1);
      q.start = p;
      q.key = plan.split_key;
      q.child = new_root;
      encode_op_request(q, w);
      LOCUS_ASSIGN_OR_RETURN(auto resp_body, send(layout_.server_of(p), kOp, w.size()));
      rpc::Reader rr(resp_body);
      OpResponse resp;
      if (!decode_op_response(rr, &resp)) return corruption("cell: malformed insert_child response");
      if (resp.outcome == Outcome::kDone) {
        ++stats_.parent_inserts;
        return Status();
      }
      if (resp.outcome == Outcome::kRestart) break;
      if (resp.outcome == Outcome::kRedirect) {
        p = resp.next;
      } else {
        pause();  // busy: the parent is splitting or full
      }
    }
  }
}

}  // namespace locus::cell
