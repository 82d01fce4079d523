// The NAM index's B-link tree (core/index/nam/tree.h) on one local arena:
// a differential test against std::multimap over long random sequences of
// lookups, ranges, inserts and deletes with pages so small that leaves and
// inner nodes split at every level; and the layout's own invariants.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <atomic>
#include <vector>

#include "core/common/random.h"
#include "core/index/nam/arena.h"
#include "core/index/nam/local_access.h"
#include "core/index/nam/protocol.h"
#include "core/index/nam/tree.h"
#include "tests/support/failure_log.h"
#include "tests/support/nam_local.h"
#include "core/workload/keys.h"

namespace locus::nam {
namespace {

using testing::NoClock;
using Reference = testing::NamReference;

std::vector<uint64_t> expected_lookup(const Reference& ref, uint64_t key) {
  std::vector<uint64_t> out;
  for (auto [it, end] = ref.equal_range(key); it != end; ++it) out.push_back(it->second);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<Pair> expected_range(const Reference& ref, Pair from, uint64_t to_key, uint32_t limit) {
  std::vector<Pair> all;
  for (auto it = ref.lower_bound(from.key); it != ref.end() && it->first <= to_key; ++it) {
    if (Pair{it->first, it->second} >= from) all.push_back({it->first, it->second});
  }
  std::sort(all.begin(), all.end());
  if (limit != 0 && all.size() > limit) all.resize(limit);
  return all;
}

bool erase_one(Reference& ref, Pair x) {
  for (auto [it, end] = ref.equal_range(x.key); it != end; ++it) {
    if (it->second == x.payload) {
      ref.erase(it);
      return true;
    }
  }
  return false;
}

// `steps` random operations on keys in [0, key_space) with payloads in
// [0, payload_space); every answer must be the multimap's.
void differential(uint32_t page_bytes, uint64_t key_space, uint64_t payload_space, uint32_t steps, uint64_t seed) {
  testing::LocalArena local(page_bytes);
  BlinkTree tree(local.access);
  Reference ref;
  Random rng(seed);
  uint64_t lookups = 0;
  for (uint32_t step = 0; step < steps; ++step) {
    const uint64_t key = rng.uniform(key_space);
    const uint64_t payload = rng.uniform(payload_space);
    const uint64_t dice = rng.uniform(100);
    if (dice < 45) {
      BOOST_REQUIRE(tree.insert({key, payload}).is_ok());
      ref.emplace(key, payload);
    } else if (dice < 65) {
      auto removed = tree.remove({key, payload});
      BOOST_REQUIRE(removed.is_ok());
      BOOST_REQUIRE_EQUAL(*removed, erase_one(ref, {key, payload}));
    } else if (dice < 90) {
      std::vector<uint64_t> got;
      ++lookups;
      BOOST_REQUIRE(tree.lookup(key, &got).is_ok());
      BOOST_REQUIRE_MESSAGE(got == expected_lookup(ref, key), "lookup of " << key << " at step " << step);
    } else {
      const uint64_t to = key + rng.uniform(key_space / 4 + 1);
      const uint32_t limit = static_cast<uint32_t>(rng.uniform(8));
      std::vector<Pair> got;
      BOOST_REQUIRE(tree.range({key, payload}, to, limit, &got).is_ok());
      BOOST_REQUIRE_MESSAGE(got == expected_range(ref, {key, payload}, to, limit), "range at step " << step);
    }
  }
  // Everything at the end, in one range.
  std::vector<Pair> all;
  BOOST_REQUIRE(tree.range({0, 0}, ~0ull, 0, &all).is_ok());
  BOOST_REQUIRE(all == expected_range(ref, {0, 0}, ~0ull, 0));
  BOOST_TEST_MESSAGE("page " << page_bytes << ": " << tree.stats().splits << " splits, " << tree.stats().root_splits
                             << " root splits, " << ref.size() << " pairs; " << tree.stats().in_place_lookups
                             << " of " << lookups << " lookups searched in place");
  // Both lookup paths answered: in place, and by copies where a key's
  // pairs may go on past a leaf.
  BOOST_REQUIRE_GT(tree.stats().in_place_lookups, 0u);
  BOOST_REQUIRE_GE(tree.stats().root_splits, page_bytes <= 256 ? 3u : 1u);
  // Each root split put one level on top of a one-leaf tree (runs print
  // levels() as nam.tree_levels).
  auto levels = tree.levels();
  BOOST_REQUIRE(levels.is_ok());
  BOOST_REQUIRE_EQUAL(*levels, 1 + tree.stats().root_splits);
}

// Loses the next separator insert (the client splitting a node dies after
// writing both halves, before the parent level): the next install of an
// inner node, or the next new root, fails once.
class LosingSeparator final : public testing::ForwardingAccess {
 public:
  using ForwardingAccess::ForwardingAccess;
  Status install(RemotePtr p, const Node& n) override {
    if (n.level() > 0 && (abort_parents || (aborts_left > 0 && aborts_left--))) {
      return Status(StatusCode::kAborted, "lease ran out (injected)");
    }
    if (armed && n.level() > 0) return lose();
    return inner_.install(p, n);
  }
  StatusOr<bool> swap_root(RemotePtr o, RemotePtr n) override {
    if (armed) return lose();
    if (swaps_to_refuse > 0) {
      --swaps_to_refuse;
      return false;  // as if another split had grown the tree first
    }
    return inner_.swap_root(o, n);
  }
  bool armed = false;
  uint32_t lost = 0;
  bool abort_parents = false;  // every install above the leaves loses its lease
  uint32_t aborts_left = 0;    // the next installs above the leaves lose their lease
  uint32_t swaps_to_refuse = 0;

 private:
  Status lose() {
    armed = false;
    ++lost;
    return unavailable("separator lost");
  }
};

// A tree of several levels (keys 0, 10, ..., 390 in 128-byte pages) whose
// node access loses separators on demand; `next` is the next key / 10.
struct LosingTree {
  explicit LosingTree(uint64_t arena_bytes) : base(128, arena_bytes), local(base.access), losing(local), tree(losing) {
    for (; next < 40; ++next) BOOST_REQUIRE(tree.insert({next * 10, 0}).is_ok());
  }
  testing::LocalArena base;
  LocalAccess& local;
  LosingSeparator losing;
  BlinkTree tree;
  uint64_t next = 0;
};

// The leaf holding x, by walking the leaf level from the leftmost leaf.
uint32_t leaves(NodeAccess& access) {
  std::vector<std::byte> page(access.page_bytes());
  Node n(page.data(), access.page_bytes());
  RemotePtr p = *access.root();
  BOOST_REQUIRE(access.read(p, n).is_ok());
  while (!n.leaf()) {
    p = n.child(0);
    BOOST_REQUIRE(access.read(p, n).is_ok());
  }
  uint32_t count = 1;
  while (!n.sibling().null()) {
    BOOST_REQUIRE(access.read(n.sibling(), n).is_ok());
    ++count;
  }
  return count;
}

// Pages reachable from the root, every level walked along its siblings.
uint64_t reachable_pages(NodeAccess& access) {
  std::vector<std::byte> page(access.page_bytes());
  Node n(page.data(), access.page_bytes());
  RemotePtr first = *access.root();
  uint64_t count = 0;
  for (;;) {
    BOOST_REQUIRE(access.read(first, n).is_ok());
    const RemotePtr down = n.leaf() ? RemotePtr{} : n.child(0);
    for (++count; !n.sibling().null(); ++count) BOOST_REQUIRE(access.read(n.sibling(), n).is_ok());
    if (down.null()) return count;
    first = down;
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(nam_tree)

BOOST_AUTO_TEST_CASE(layout_capacities) {
  BOOST_TEST(leaf_capacity(128) == 4u);
  BOOST_TEST(inner_capacity(128) == 3u);
  BOOST_TEST(leaf_capacity(1024) == 60u);
  BOOST_TEST(inner_capacity(1024) == 40u);
  const RemotePtr p = RemotePtr::make(5, 4096);
  BOOST_TEST(!p.null());
  BOOST_TEST(p.server() == 5u);
  BOOST_TEST(p.offset() == 4096u);
  BOOST_TEST(RemotePtr{}.null());
}

BOOST_AUTO_TEST_CASE(seal_detects_torn_copies) {
  std::vector<std::byte> page(256);
  Node n(page.data(), 256);
  n.init(0);
  n.insert_at(0, {1, 2});
  n.set_word(4);
  n.seal(4);
  BOOST_TEST(n.consistent());
  page[60] ^= std::byte{1};  // a byte from a later write
  BOOST_TEST(!n.consistent());
  page[60] ^= std::byte{1};
  n.set_word(5);  // locked
  BOOST_TEST(!n.consistent());
  n.set_word(6);  // a newer word than the body was written for
  BOOST_TEST(!n.consistent());
}

BOOST_AUTO_TEST_CASE(differential_tiny_pages_many_duplicates) { differential(128, 64, 1u << 20, 60000, 1); }
BOOST_AUTO_TEST_CASE(differential_tiny_pages_wide_keys) { differential(128, 1u << 20, 1u << 30, 60000, 2); }
BOOST_AUTO_TEST_CASE(differential_small_pages) { differential(256, 4096, 16, 60000, 3); }
BOOST_AUTO_TEST_CASE(differential_default_pages) { differential(1024, 1u << 16, 1u << 20, 60000, 4); }

BOOST_AUTO_TEST_CASE(leaf_of_one_pair_refuses_to_split) {
  testing::LocalArena local(128, 1 << 20);
  BlinkTree tree(local.access);
  for (int i = 0; i < 4; ++i) BOOST_REQUIRE(tree.insert({7, 7}).is_ok());
  const Status s = tree.insert({7, 7});
  BOOST_TEST(s.code() == StatusCode::kResourceExhausted);
  BOOST_TEST(s.message().find("index.page_bytes") != std::string::npos);
  // The leaf was unlocked: deletes still take its lock, and a full leaf
  // drops deleted entries before it would split.
  std::vector<uint64_t> got;
  BOOST_REQUIRE(tree.lookup(7, &got).is_ok());
  BOOST_TEST(got.size() == 4u);
  auto removed = tree.remove({7, 7});
  BOOST_REQUIRE(removed.is_ok() && *removed);
  BOOST_REQUIRE(tree.insert({8, 1}).is_ok());
  got.clear();
  BOOST_REQUIRE(tree.lookup(7, &got).is_ok());
  BOOST_TEST(got.size() == 3u);
}

// A leaf split between two keys keeps every pair of its last key
// (Node::split_into): a lookup of that key, or a range ending at it, reads
// its leaf and nothing right of it. Until 2026-11-29 the high key was the
// last pair itself, so such a lookup read the next leaf and then both
// again (the double collect): 2.4% of the lookups of unique keys in 1 KB
// pages, nam.page_reads_per_op 1.095 for hybrid's one-leaf lookups.
class CountingReads final : public testing::ForwardingAccess {
 public:
  using ForwardingAccess::ForwardingAccess;
  Status read(RemotePtr p, Node& out) override {
    ++reads;
    return inner_.read(p, out);
  }
  uint64_t reads = 0;
};

BOOST_AUTO_TEST_CASE(a_lookup_of_a_leafs_last_key_reads_no_other_leaf) {
  testing::LocalArena local(1024, 1 << 24);
  CountingReads counting(local.access);
  BlinkTree tree(counting);
  constexpr uint64_t kKeys = 5000;
  std::vector<uint64_t> keys(kKeys);
  for (uint64_t k = 0; k < kKeys; ++k) keys[k] = 10 * (k + 1);
  Random rng(7);
  for (uint64_t i = kKeys - 1; i > 0; --i) std::swap(keys[i], keys[rng.uniform(i + 1)]);
  for (const uint64_t k : keys) BOOST_REQUIRE(tree.insert({k, 3 * k}).is_ok());
  BOOST_REQUIRE(tree.stats().splits > 50u);
  auto levels = tree.levels();
  BOOST_REQUIRE(levels.is_ok());
  for (uint64_t k = 10; k <= 10 * kKeys; k += 10) {
    const uint64_t before = counting.reads;
    std::vector<uint64_t> got;
    BOOST_REQUIRE(tree.lookup(k, &got).is_ok());
    BOOST_REQUIRE(got == std::vector<uint64_t>({3 * k}));
    BOOST_REQUIRE_MESSAGE(counting.reads - before == *levels, "lookup of " << k << ": " << counting.reads - before
                                                                   << " READs in a tree of " << *levels << " levels");
    std::vector<Pair> range;
    const uint64_t range_before = counting.reads;
    BOOST_REQUIRE(tree.range({k - 9, 0}, k, 0, &range).is_ok());
    BOOST_REQUIRE(range == std::vector<Pair>({{k, 3 * k}}));
    BOOST_REQUIRE_MESSAGE(counting.reads - range_before == *levels, "range ending at " << k);
  }
  // A range that goes on does read the next leaf.
  std::vector<Pair> all;
  BOOST_REQUIRE(tree.range({0, 0}, ~0ull, 0, &all).is_ok());
  BOOST_TEST(all.size() == kKeys);
  // In place (a second tree object over the same pages), every lookup is
  // answered without falling back to the copying path.
  BlinkTree in_place(local.access);
  for (uint64_t k = 10; k <= 10 * kKeys; k += 10) {
    std::vector<uint64_t> got;
    BOOST_REQUIRE(in_place.lookup(k, &got).is_ok());
    BOOST_REQUIRE(got == std::vector<uint64_t>({3 * k}));
  }
  BOOST_TEST(in_place.stats().in_place_lookups == kKeys);
}

// The in-place lookup (tree_in_place.cc) leaves what it cannot answer
// alone to the copying path: a node it finds locked, whose writer the
// copying read waits out, and a key whose pairs go on past a leaf, which
// the copying path's double collect reads whole.
class UnlockOnRead final : public testing::ForwardingAccess {
 public:
  explicit UnlockOnRead(LocalAccess& inner) : ForwardingAccess(inner), local_(inner) {}
  // The writer finishes (installs `body` at `at` and unlocks) before the
  // first copying read after it was armed.
  Status read(RemotePtr p, Node& out) override {
    ++reads;
    if (armed) {
      armed = false;
      BOOST_REQUIRE(inner_.install(at, body).is_ok());
      BOOST_REQUIRE(inner_.unlock(at, held).is_ok());
    }
    return inner_.read(p, out);
  }
  const uint64_t* in_place(RemotePtr p) const override { return local_.in_place(p); }
  bool searches_in_place() const override { return true; }

  bool armed = false;
  RemotePtr at;
  uint64_t held = 0;
  Node body{nullptr, 0};
  uint64_t reads = 0;

 private:
  LocalAccess& local_;
};

BOOST_AUTO_TEST_CASE(in_place_lookup_leaves_a_locked_node_to_the_copying_read) {
  testing::LocalArena arena(1024, 1 << 20);
  LocalAccess& local = arena.access;
  UnlockOnRead access(local);
  BlinkTree tree(access);
  BOOST_REQUIRE(tree.insert({5, 50}).is_ok());
  std::vector<uint64_t> got;
  BOOST_REQUIRE(tree.lookup(5, &got).is_ok());
  BOOST_TEST(got == std::vector<uint64_t>({50}));
  BOOST_TEST(tree.stats().in_place_lookups == 1u);
  const uint64_t reads_in_place = access.reads;

  // A writer holds the root leaf's lock, adding (5, 51).
  auto root = local.root();
  BOOST_REQUIRE(root.is_ok());
  std::vector<std::byte> page(1024);
  Node n(page.data(), 1024);
  BOOST_REQUIRE(local.read(*root, n).is_ok());
  const uint64_t v = n.word();
  BOOST_REQUIRE(local.lock(*root, v).is_ok());
  n.insert_at(n.lower_bound({5, 51}), {5, 51});
  n.seal(v + 2);
  access.at = *root;
  access.held = v | kLockBit;
  access.body = n;
  access.armed = true;
  got.clear();
  BOOST_REQUIRE(tree.lookup(5, &got).is_ok());
  BOOST_TEST(got == std::vector<uint64_t>({50, 51}));
  BOOST_TEST(tree.stats().in_place_lookups == 1u, "the locked leaf was answered in place");
  BOOST_TEST(access.reads > reads_in_place, "the copying path did not run");
  // Unlocked again: in place.
  got.clear();
  BOOST_REQUIRE(tree.lookup(5, &got).is_ok());
  BOOST_TEST(got == std::vector<uint64_t>({50, 51}));
  BOOST_TEST(tree.stats().in_place_lookups == 2u);
}

BOOST_AUTO_TEST_CASE(in_place_lookup_leaves_pairs_past_a_leaf_to_the_double_collect) {
  testing::LocalArena local(128, 1 << 20);  // four pairs a leaf
  BlinkTree tree(local.access);
  std::vector<uint64_t> want;
  for (uint64_t p = 1; p <= 10; ++p) {
    BOOST_REQUIRE(tree.insert({7, p}).is_ok());
    want.push_back(p);
  }
  BOOST_REQUIRE(tree.insert({9, 1}).is_ok());
  std::vector<uint64_t> got;
  BOOST_REQUIRE(tree.lookup(7, &got).is_ok());
  BOOST_TEST(got == want);
  BOOST_TEST(tree.stats().in_place_lookups == 0u, "pairs over three leaves were answered from one");
  got.clear();
  BOOST_REQUIRE(tree.lookup(9, &got).is_ok());
  BOOST_TEST(got == std::vector<uint64_t>({1}));
  BOOST_TEST(tree.stats().in_place_lookups == 1u);
}

// Readers searching in place while writers split leaves and inner nodes
// (small pages) on the same arena: every key a writer has acknowledged is
// found, with its payload, exactly once. (ThreadSanitizer runs it too.)
BOOST_AUTO_TEST_CASE(in_place_lookups_during_splits_find_every_acknowledged_key) {
  testing::LocalArena local(256);
  LocalAccess& access = local.access;
  constexpr uint32_t kWriters = 2, kPerWriter = 20000;
  auto key_of = [](uint64_t n) { return (n * 0x9E3779B97F4A7C15ull) >> 1; };
  std::atomic<uint32_t> done[kWriters] = {};
  std::atomic<bool> writing{true};
  testing::FailureLog failures;
  std::vector<std::thread> threads;
  for (uint32_t w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      BlinkTree tree(access);
      for (uint32_t i = 0; i < kPerWriter; ++i) {
        const uint64_t n = uint64_t{i} * kWriters + w;
        if (Status st = tree.insert({key_of(n), n}); !st.is_ok()) return failures.fail("insert: " + st.to_string());
        done[w].store(i + 1, std::memory_order_release);
      }
    });
  }
  std::atomic<uint64_t> in_place{0}, checked{0};
  for (uint32_t r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      BlinkTree tree(access);
      Random rng(r + 1);
      std::vector<uint64_t> got;
      while (writing.load(std::memory_order_acquire)) {
        const uint32_t w = static_cast<uint32_t>(rng.uniform(kWriters));
        const uint32_t acked = done[w].load(std::memory_order_acquire);
        if (acked == 0) continue;
        const uint64_t n = uint64_t{static_cast<uint32_t>(rng.uniform(acked))} * kWriters + w;
        got.clear();
        if (Status st = tree.lookup(key_of(n), &got); !st.is_ok()) return failures.fail("lookup: " + st.to_string());
        if (got != std::vector<uint64_t>{n}) {
          return failures.fail("key " + std::to_string(n) + " acknowledged, lookup found " +
                               std::to_string(got.size()) + " payloads");
        }
        checked.fetch_add(1, std::memory_order_relaxed);
      }
      in_place.fetch_add(tree.stats().in_place_lookups, std::memory_order_relaxed);
    });
  }
  for (uint32_t w = 0; w < kWriters; ++w) threads[w].join();
  writing.store(false, std::memory_order_release);
  for (size_t t = kWriters; t < threads.size(); ++t) threads[t].join();
  BOOST_REQUIRE_MESSAGE(failures.empty(), failures.first());
  BOOST_TEST_MESSAGE(checked.load() << " lookups during the inserts, " << in_place.load() << " in place");
  BOOST_TEST(checked.load() > 0u);
  BOOST_TEST(in_place.load() > 0u);
}

// A leaf split whose separator never reaches the parent, then many more
// splits of the new right node (ascending inserts land there): every one
// of them must still insert its separator (the general B-link rule: the
// parent entry covering a separator may point at a node left of the one
// that split), every key stays found, and lookups do not walk the lost
// part of the leaf level (the parent level is still a shortcut).
BOOST_AUTO_TEST_CASE(lost_separator_does_not_block_later_splits) {
  LosingTree t(16 << 20);
  LocalAccess& local = t.local;
  LosingSeparator& losing = t.losing;
  BlinkTree& tree = t.tree;
  uint64_t next = t.next;
  const uint64_t splits_before = tree.stats().splits;
  losing.armed = true;
  Status s;
  while (losing.lost == 0) s = tree.insert({next++ * 10, 0});
  BOOST_TEST(s.code() == StatusCode::kUnavailable);  // the split's client "died" at the parent
  for (uint64_t i = 0; i < 200; ++i, ++next) {
    BOOST_REQUIRE_MESSAGE(tree.insert({next * 10, 0}).is_ok(), "insert " << next);
  }
  BOOST_TEST(tree.stats().splits > splits_before + 50);
  for (uint64_t k = 0; k < next; ++k) {
    std::vector<uint64_t> got;
    BOOST_REQUIRE(tree.lookup(k * 10, &got).is_ok());
    BOOST_REQUIRE_MESSAGE(got.size() == 1u, "key " << k * 10);
  }
  // One lost separator costs at most one extra sibling step per lookup.
  const uint64_t moved = tree.stats().moved_right;
  std::vector<uint64_t> got;
  BOOST_REQUIRE(tree.lookup((next - 1) * 10, &got).is_ok());
  BOOST_TEST(tree.stats().moved_right - moved <= 1u);
  BOOST_TEST(leaves(local) > 100u);
}

// A separator that can never land (every install above the leaves loses
// its lease) ends the insert with an error once its restarts run out. The
// insert itself must not start over: x is in its leaf already, and the
// insert, restarted (the separator's give-up was once kAborted, a lost
// lock's code), put x in a second time.
BOOST_AUTO_TEST_CASE(a_separator_that_never_lands_does_not_insert_twice) {
  LosingTree t(16 << 20);
  LosingSeparator& losing = t.losing;
  BlinkTree& tree = t.tree;
  uint64_t next = t.next;
  losing.abort_parents = true;
  Status s;
  for (uint32_t i = 0; i < 20 && s.is_ok(); ++i) s = tree.insert({next++ * 10, 0});
  losing.abort_parents = false;
  BOOST_TEST(s.code() == StatusCode::kUnavailable, s.to_string());
  for (uint64_t k = 0; k < next; ++k) {
    std::vector<uint64_t> got;
    BOOST_REQUIRE(tree.lookup(k * 10, &got).is_ok());
    BOOST_TEST(got.size() == 1u, "key " << k * 10 << ": " << got.size() << " copies");
  }
}

// A split that gives up after allocating its new page (its lease ran out
// before the install, or its new root lost the catalog CAS) once leaked
// that page, one per restart. The page, never reachable, is now the next
// split's: after a thousand of each, the arena has handed out no more
// than the reachable pages and one spare.
BOOST_AUTO_TEST_CASE(aborted_splits_leak_no_pages) {
  LosingTree t(16 << 20);
  t.losing.aborts_left = 1000;
  t.losing.swaps_to_refuse = 1000;
  for (uint64_t i = 0; i < 400; ++i, ++t.next) BOOST_REQUIRE(t.tree.insert({t.next * 10, 0}).is_ok());
  BOOST_REQUIRE_EQUAL(t.losing.aborts_left, 0u);
  BOOST_REQUIRE_EQUAL(t.losing.swaps_to_refuse, 0u);
  BOOST_TEST(t.tree.stats().restarts >= 2000u);
  const uint64_t handed_out = t.base.arena->used_bytes() / 128;
  BOOST_TEST(handed_out <= reachable_pages(t.local) + 1, handed_out << " pages handed out");
}

// Range partitioning of YCSB's hashed keys (which lie in [0, 2^63]) gives
// every memory server a fair share (it once gave half of them nothing).
BOOST_AUTO_TEST_CASE(range_partitioning_spreads_hashed_keys) {
  workload::WorkloadSpec spec;
  spec.insertorder = workload::InsertOrder::kHashed;
  const Partitioner part(Partitioning::kRange, 4, spec);
  std::vector<uint32_t> per_server(4);
  char key[32];
  for (uint64_t i = 0; i < 4000; ++i) {
    const size_t n = workload::build_key(i, true, 0, key, sizeof key);
    auto k = key_number(std::string_view(key, n));
    BOOST_REQUIRE(k.is_ok());
    ++per_server[part.server_of(*k)];
  }
  for (uint32_t s = 0; s < 4; ++s) BOOST_TEST(per_server[s] > 800u, "server " << s << ": " << per_server[s]);
}

// index.key_skew, the calibration's attribute-value skew (80/12/5/3% of
// keys on the four memory servers): the shares land where they say, for
// hashed and ordered key numbers, and the map keeps order (ranges stay
// ranges); ordered keys packed onto a quarter of the space share keys.
BOOST_AUTO_TEST_CASE(key_skew_puts_each_servers_share_in_its_range) {
  const std::vector<double> shares{0.8, 0.12, 0.05, 0.03};
  for (const bool hashed : {true, false}) {
    workload::WorkloadSpec spec;
    spec.insertorder = hashed ? workload::InsertOrder::kHashed : workload::InsertOrder::kOrdered;
    spec.recordcount = 20000;
    const Partitioner part(Partitioning::kRange, 4, spec, shares);
    const Partitioner even(Partitioning::kRange, 4, spec);
    std::vector<uint32_t> per_server(4);
    std::vector<std::pair<uint64_t, uint64_t>> mapped;  // (number, key)
    char key[32];
    for (uint64_t i = 0; i < spec.recordcount; ++i) {
      const size_t n = workload::build_key(i, hashed, 0, key, sizeof key);
      auto number = key_number(std::string_view(key, n));
      BOOST_REQUIRE(number.is_ok());
      const uint64_t k = part.key_of(*number);
      BOOST_REQUIRE(even.key_of(*number) == *number);
      ++per_server[part.server_of(k)];
      mapped.emplace_back(*number, k);
    }
    for (uint32_t s = 0; s < 4; ++s) {
      const double share = static_cast<double>(per_server[s]) / spec.recordcount;
      BOOST_TEST(std::abs(share - shares[s]) < 0.01, (hashed ? "hashed" : "ordered") << " server " << s << ": " << share);
    }
    std::sort(mapped.begin(), mapped.end());
    bool monotone = true;
    for (size_t i = 1; i < mapped.size(); ++i) monotone = monotone && mapped[i - 1].second <= mapped[i].second;
    BOOST_TEST(monotone);
    std::set<uint64_t> distinct;
    for (const auto& m : mapped) distinct.insert(m.second);
    if (hashed) {
      BOOST_TEST(distinct.size() == mapped.size());
    } else {
      BOOST_TEST(distinct.size() < mapped.size());  // 80% of 20000 numbers onto 5000 keys
    }
  }
  BOOST_TEST(parse_shares("0.8, 0.12,0.05,0.03").is_ok());
  for (const char* bad : {"", "0.5,0.4", "0.8,0.2,", "1.2,-0.2", "half,half", "0,1"}) {
    BOOST_TEST(!parse_shares(bad).is_ok(), bad);
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace locus::nam
