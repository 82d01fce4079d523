// SplitDriver: see split_driver.h.
#include "core/index/cell/split_driver.h"

#include <algorithm>
#include <vector>

namespace locus::cell {
namespace {
constexpr uint32_t kMaxRedirects = 256;  // a parent traversal crosses few servers
constexpr size_t kAppendHeaderBytes = 16;
}  // namespace

SplitDriver::SplitDriver(Caller& caller, const Layout& layout, NodeId own_server,
                         const SplitDriverOptions& options, Random& rng, Clock& clock,
                         std::function<void(Nanos)> wait, const std::atomic<bool>* stop)
    : caller_(caller),
      layout_(layout),
      own_(own_server),
      options_(options),
      rng_(rng),
      clock_(clock),
      wait_(std::move(wait)),
      stop_(stop) {}

Status SplitDriver::simple(NodeId server, uint16_t type, uint64_t a, uint64_t b, bool two) {
  rpc::Writer w(caller_.payload_buffer());
  if (type == kSplitFinish || type == kSplitAbort) {
    w.put(static_cast<uint32_t>(a));
  } else {
    w.put(a);
  }
  if (two) w.put(b);
  return caller_.call(server, type, w.size()).status();
}

Status SplitDriver::abort_split(uint32_t meganode, NodeId target, uint64_t new_root) {
  ++stats_.aborted;
  Status st = simple(own_, kSplitAbort, meganode);
  if (new_root != kNullPtr) (void)simple(target, kMeganodeAbandon, new_root);
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
    LOCUS_ASSIGN_OR_RETURN(auto body, caller_.call(s, kMeganodeCount, 0));
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

StatusOr<uint64_t> SplitDriver::create(NodeId target, uint32_t level, Bound min, Bound max, uint64_t right) {
  rpc::Writer w(caller_.payload_buffer());
  w.put(static_cast<uint8_t>(level));
  put_bound(w, min);
  put_bound(w, max);
  w.put(right);
  LOCUS_ASSIGN_OR_RETURN(auto body, caller_.call(target, kMeganodeCreate, w.size()));
  rpc::Reader r(body);
  uint64_t root = kNullPtr;
  if (!(r.get(&root) && r.at_end())) return corruption("cell: malformed meganode_create response");
  return root;
}

Status SplitDriver::copy_right_half(const SplitPlan& plan, NodeId target, uint64_t new_root) {
  cursor_.assign(plan.split_key);
  bool exclusive = false;
  const std::span<std::byte> payload = caller_.payload_buffer();
  while (true) {
    rpc::Writer w(payload);
    w.put(plan.meganode);
    w.blob(cursor_);
    w.put<uint8_t>(exclusive ? 1 : 0);
    w.put(static_cast<uint32_t>(payload.size() - kAppendHeaderBytes));
    LOCUS_ASSIGN_OR_RETURN(auto body, caller_.call(own_, kSplitScan, w.size()));
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
      a.bytes(entries.data(), entries.size());
      if (!a.ok()) return internal_error("cell: split chunk exceeds the append message");
      cursor_.assign(last);  // `last` views the response: copy before the next call
      exclusive = true;
      LOCUS_RETURN_IF_ERROR(caller_.call(target, kMeganodeAppend, a.size()).status());
    } else if (done == 0) {
      return internal_error("cell: split_scan made no progress");
    }
    if (done != 0) return Status();
  }
}

Status SplitDriver::run(uint32_t meganode) {
  rpc::Writer w(caller_.payload_buffer());
  w.put(meganode);
  auto begun = caller_.call(own_, kSplitBegin, w.size());
  if (!begun.is_ok()) {
    // Nothing to do: the meganode is already splitting or no longer needs it.
    return begun.status().code() == StatusCode::kAborted ? Status() : begun.status();
  }
  SplitPlan plan;
  rpc::Reader r(*begun);
  if (!decode_plan(r, &plan)) return corruption("cell: malformed split plan");

  auto target = choose_target();
  if (!target.is_ok()) {
    (void)abort_split(meganode, kInvalidNode, kNullPtr);
    return target.status();
  }
  auto new_root = create(*target, plan.level, Bound{plan.split_key, false}, Bound{plan.max_key, plan.max_inf},
                         plan.right);
  if (!new_root.is_ok()) {
    (void)abort_split(meganode, *target, kNullPtr);
    return new_root.status();
  }
  Status st = copy_right_half(plan, *target, *new_root);
  if (st.is_ok()) st = simple(*target, kMeganodeSeal, *new_root);
  if (st.is_ok()) st = simple(own_, kSplitFinish, meganode, *new_root, true);
  if (!st.is_ok()) {
    (void)abort_split(meganode, *target, *new_root);
    return st;
  }
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
  LOCUS_ASSIGN_OR_RETURN(NodeId target, choose_target());
  LOCUS_ASSIGN_OR_RETURN(uint64_t root, create(target, plan.level + 1u, Bound{{}, true}, Bound{{}, true}, kNullPtr));
  rpc::Writer a(caller_.payload_buffer());
  a.put(root);
  a.blob(std::string_view());  // entry 0: from -inf, the old root meganode
  a.put(plan.root);
  a.blob(plan.split_key);
  a.put(new_root);
  Status st = caller_.call(target, kMeganodeAppend, a.size()).status();
  if (st.is_ok()) st = simple(target, kMeganodeSeal, root);
  bool installed = false;
  if (st.is_ok()) {
    rpc::Writer w(caller_.payload_buffer());
    w.put(plan.root);
    w.put(root);
    w.put(static_cast<uint32_t>(plan.level + 1u));
    auto body = caller_.call(layout_.bootstrap(), kSetRoot, w.size());
    st = body.status();
    if (st.is_ok()) installed = !body->empty() && (*body)[0] == std::byte{1};
  }
  if (!installed) (void)simple(target, kMeganodeAbandon, root);
  if (!st.is_ok()) return st;
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
    LOCUS_ASSIGN_OR_RETURN(auto body, caller_.call(layout_.bootstrap(), kGetRoot, 0));
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
      LOCUS_ASSIGN_OR_RETURN(auto resp_body, caller_.call(layout_.server_of(p), kOp, w.size()));
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
