// The NAM tree's epoch-based garbage collection (core/index/nam/gc.cc,
// epoch.h) on local arenas (the coarse-grained design's access): a
// differential test against std::multimap through rounds of growth and
// mass deletion with GC passes in between, in pages small enough that
// leaves and inner nodes merge, whose freed pages the next growth reuses;
// the reclaimer's epochs; and readers (lookups and scans) and writers on
// threads while a collector merges, their history checked for
// linearizability with scans as operations.
#include <algorithm>
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/check/history.h"
#include "core/check/linearizability.h"
#include "core/check/models.h"
#include "core/common/random.h"
#include "core/index/nam/arena.h"
#include "core/index/nam/local_access.h"
#include "core/index/nam/tree.h"
#include "tests/support/nam_local.h"

namespace locus::nam {
namespace {

using testing::NoClock;
using Reference = testing::NamReference;

std::vector<Pair> all_of(const Reference& ref) {
  std::vector<Pair> v;
  for (auto [k, p] : ref) v.push_back({k, p});
  std::sort(v.begin(), v.end());
  return v;
}

// Walks every level from its leftmost node: no merged node is reachable,
// by sibling or child pointer. The count of reachable nodes.
uint64_t check_structure(NodeAccess& access) {
  std::vector<std::byte> page(access.page_bytes()), child_page(access.page_bytes());
  Node n(page.data(), access.page_bytes()), c(child_page.data(), access.page_bytes());
  RemotePtr first = *access.root();
  uint64_t nodes = 0;
  for (;;) {
    BOOST_REQUIRE(access.read(first, n).is_ok());
    const RemotePtr down = n.leaf() ? RemotePtr{} : n.child(0);
    for (;;) {
      ++nodes;
      BOOST_REQUIRE(!n.dead());
      for (uint32_t i = 0; !n.leaf() && i < n.count(); ++i) {
        BOOST_REQUIRE(access.read(n.child(i), c).is_ok());
        BOOST_REQUIRE_MESSAGE(!c.dead(), "a parent names a merged node");
      }
      if (n.sibling().null()) break;
      BOOST_REQUIRE(access.read(n.sibling(), n).is_ok());
    }
    if (down.null()) return nodes;
    first = down;
  }
}

struct LocalTree : testing::LocalArena {
  explicit LocalTree(uint32_t page_bytes, uint32_t slots = 4) : LocalArena(page_bytes), reclaimer(slots) {}
  std::unique_ptr<BlinkTree> tree() {
    auto t = std::make_unique<BlinkTree>(access);
    BOOST_REQUIRE(t->set_reclaimer(&reclaimer).is_ok());
    return t;
  }
  LocalReclaimer reclaimer;
};

// Replays old copies of inner nodes: a reader that read the parents before
// a merge and reaches the merged node afterwards. Records the inner nodes
// it reads while `record`, returns those copies while `replay`.
class StaleParents final : public testing::ForwardingAccess {
 public:
  using ForwardingAccess::ForwardingAccess;
  Status read(RemotePtr p, Node& out) override {
    if (auto it = copies_.find(p.raw); replay && it != copies_.end()) {
      std::memcpy(out.data(), it->second.data(), page_bytes());
      return Status();
    }
    LOCUS_RETURN_IF_ERROR(inner_.read(p, out));
    if (record && !out.leaf()) copies_[p.raw].assign(out.data(), out.data() + page_bytes());
    return Status();
  }
  bool record = false, replay = false;

 private:
  std::map<uint64_t, std::vector<std::byte>> copies_;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(nam_gc)

// A lookup that descends through parents read before a merge reaches the
// merged node: it must go on at the node that took the entries (which has
// seen a delete since), not answer from the merged node's old entries.
BOOST_AUTO_TEST_CASE(a_reader_with_old_parents_follows_the_merge) {
  LocalTree t(256);
  auto tree = t.tree();
  auto gc = t.tree();
  for (uint64_t k = 0; k < 120; ++k) BOOST_REQUIRE(tree->insert({k, 0}).is_ok());
  for (uint64_t k = 0; k < 120; ++k) {
    if (k % 10 != 0) BOOST_REQUIRE(*tree->remove({k, 0}));
  }
  StaleParents stale(t.access);
  BlinkTree reader(stale);
  std::vector<uint64_t> got;
  stale.record = true;
  for (uint64_t k = 0; k < 120; k += 10) BOOST_REQUIRE(reader.lookup(k, &got).is_ok());
  stale.record = false;
  BOOST_REQUIRE(gc->collect_garbage().is_ok());
  BOOST_REQUIRE(gc->stats().merges > 3u);
  stale.replay = true;
  for (uint64_t k = 0; k < 120; k += 10) {
    BOOST_REQUIRE(*tree->remove({k, 0}));
    got.clear();
    BOOST_REQUIRE(reader.lookup(k, &got).is_ok());
    BOOST_TEST(got.empty(), "key " << k << " deleted after the merge, still found");
  }
  BOOST_TEST(reader.stats().dead_forwards > 0u);
}

BOOST_AUTO_TEST_CASE(reclaimer_frees_only_after_every_older_reader) {
  LocalReclaimer r(2);
  const uint32_t reader = *r.join(), other = *r.join();
  BOOST_REQUIRE(r.enter(reader).is_ok());  // holds epoch 1
  r.retire(RemotePtr::make(0, 64), 0);
  BOOST_TEST(r.advance() == 0u);  // the reader may hold it
  BOOST_REQUIRE(r.enter(other).is_ok());  // announces epoch 2: cannot reach it
  BOOST_TEST(r.advance() == 0u);
  r.exit(reader);
  BOOST_TEST(r.advance() == 1u);
  BOOST_TEST(r.take(1).null());  // pages go back to their level
  BOOST_TEST(r.take(0).raw == RemotePtr::make(0, 64).raw);
  BOOST_TEST(r.take(0).null());
  // A tree object that found no slot could hold any page: nothing is
  // freed from then on.
  LocalReclaimer full(1);
  BOOST_REQUIRE(full.join().is_ok());
  BOOST_TEST(full.join().status().code() == StatusCode::kResourceExhausted);
  full.retire(RemotePtr::make(0, 64), 0);
  full.advance();
  BOOST_TEST(full.advance() == 0u);
}

// Rounds of growth to a few thousand pairs and deletion to a few dozen,
// lookups and ranges checked against the multimap throughout, a GC pass
// every 200 operations. 256-byte pages: 12 pairs a leaf, 8 entries an
// inner node, so the tree has four levels and merges at every one.
BOOST_AUTO_TEST_CASE(differential_with_gc_merges_at_every_level) {
  LocalTree t(256);
  auto tree = t.tree();
  auto gc = t.tree();
  Reference ref;
  Random rng(7);
  uint64_t used_after_first_round = 0;
  for (int round = 0; round < 4; ++round) {
    for (int phase = 0; phase < 2; ++phase) {
      const bool grow = phase == 0;
      for (uint32_t step = 0; grow ? ref.size() < 3000 : ref.size() > 40; ++step) {
        const uint64_t key = rng.uniform(1u << 16);
        const uint64_t dice = rng.uniform(100);
        if (dice < (grow ? 70u : 15u)) {
          const uint64_t payload = rng.uniform(4);
          BOOST_REQUIRE(tree->insert({key, payload}).is_ok());
          ref.emplace(key, payload);
        } else if (dice < 90) {
          // Mostly a pair the multimap holds.
          auto it = ref.lower_bound(key);
          if (it == ref.end()) it = ref.begin();
          const Pair x = it == ref.end() ? Pair{key, 0} : Pair{it->first, it->second};
          auto removed = tree->remove(x);
          BOOST_REQUIRE(removed.is_ok());
          BOOST_REQUIRE(*removed == (it != ref.end()));
          if (it != ref.end()) ref.erase(it);
        } else {
          std::vector<uint64_t> got, want;
          BOOST_REQUIRE(tree->lookup(key, &got).is_ok());
          for (auto [it, end] = ref.equal_range(key); it != end; ++it) want.push_back(it->second);
          std::sort(want.begin(), want.end());
          BOOST_REQUIRE(got == want);
        }
        if (step % 200 == 199) {
          BOOST_REQUIRE(gc->collect_garbage().is_ok());
          std::vector<Pair> all;
          BOOST_REQUIRE(tree->range({0, 0}, ~0ull, 0, &all).is_ok());
          BOOST_REQUIRE_MESSAGE(all == all_of(ref), "round " << round << " step " << step);
        }
      }
    }
    BOOST_REQUIRE(gc->collect_garbage().is_ok());
    BOOST_REQUIRE(gc->collect_garbage().is_ok());  // frees what the last pass retired
    const uint64_t nodes = check_structure(t.access);
    BOOST_TEST_MESSAGE("round " << round << ": " << nodes << " nodes for " << ref.size() << " pairs, "
                                << t.arena->used_bytes() / 256 << " pages handed out");
    BOOST_TEST(nodes < 40u);  // merged down from hundreds
    if (round == 0) used_after_first_round = t.arena->used_bytes();
  }
  const TreeStats& s = gc->stats();
  BOOST_TEST_MESSAGE("merges " << s.merges << " (inner " << s.inner_merges << "), collected " << s.entries_collected
                               << ", freed " << s.pages_freed);
  BOOST_TEST(s.merges > 100u);
  BOOST_TEST(s.inner_merges > 10u);
  BOOST_TEST(s.entries_collected > 100u);
  BOOST_TEST(s.pages_freed > 100u);
  // Later rounds grew into the freed pages: the arena barely grew.
  BOOST_TEST(t.arena->used_bytes() < used_after_first_round * 5 / 4);
}

// A collector that dies between the two installs of a merge, at each
// merge of a pass in turn (leaves and inner nodes): the merged node is
// installed first, so the half-done merge is one that the next operation
// to follow the left node's sibling pointer undoes. Then every pair is
// where a multimap says, through deletes, lookups and a full scan, and no
// merged node is reachable. Installed the other way round, a collector
// dying after the left node's install left the right one live beside the
// left one's copy of its entries: a delete through the parent reached the
// right node and the scan still returned the pair from the left one.
BOOST_AUTO_TEST_CASE(a_merge_its_collector_died_in_is_undone_by_the_next_to_meet_it) {
  uint32_t inner_deaths = 0, undone = 0, n = 0;
  for (;; ++n) {
    LocalTree t(256);
    auto tree = t.tree();
    Reference ref;
    for (uint64_t k = 0; k < 400; ++k) BOOST_REQUIRE(tree->insert({k, 0}).is_ok());
    for (uint64_t k = 0; k < 400; ++k) {
      if (k % 10 == 0) {
        ref.emplace(k, 0);
      } else {
        BOOST_REQUIRE(*tree->remove({k, 0}));
      }
    }
    testing::MergerDiesBetweenInstalls dying(t.access);
    dying.merges_to_finish = n;
    BlinkTree gc(dying);
    const Status pass = gc.collect_garbage();
    if (!dying.died) {  // the pass had fewer merges than n
      BOOST_REQUIRE(pass.is_ok());
      break;
    }
    BOOST_REQUIRE(pass.code() == StatusCode::kUnavailable);
    inner_deaths += dying.died_at_level > 0 ? 1 : 0;
    // Two in three of the remaining pairs deleted, then every key looked
    // up and the whole tree scanned.
    for (uint64_t k = 0; k < 400; k += 10) {
      if (k % 30 == 0) continue;
      auto removed = tree->remove({k, 0});
      BOOST_REQUIRE(removed.is_ok());
      BOOST_REQUIRE_MESSAGE(*removed, "merge " << n << ": key " << k << " not found to delete");
      ref.erase(k);
    }
    for (uint64_t k = 0; k < 400; ++k) {
      std::vector<uint64_t> got;
      BOOST_REQUIRE(tree->lookup(k, &got).is_ok());
      BOOST_REQUIRE_MESSAGE(got.size() == ref.count(k), "merge " << n << ": key " << k);
    }
    std::vector<Pair> all;
    BOOST_REQUIRE(tree->range({0, 0}, ~0ull, 0, &all).is_ok());
    BOOST_REQUIRE_MESSAGE(all == all_of(ref), "merge " << n << ": the scan disagrees with the multimap");
    undone += tree->stats().merges_undone;
    // A healthy collector's pass leaves no merged node reachable.
    auto healthy = t.tree();
    BOOST_REQUIRE(healthy->collect_garbage().is_ok());
    check_structure(t.access);
  }
  BOOST_TEST_MESSAGE(n << " merges in a pass, " << inner_deaths << " of them above the leaves; undone " << undone);
  BOOST_TEST(n > 10u);
  BOOST_TEST(inner_deaths > 0u);
  BOOST_TEST(undone == n);  // each half-done merge undone once, by the client that met it
}

// Two writers insert and delete (the tree shrinks as it runs), two readers
// look up keys and scan short ranges (atomic ranges: a double collect), a
// collector runs GC passes back to back; all on threads over one arena.
// The history, scans included, must be linearizable as a multimap, and
// the collector must have merged and freed pages while it was recorded.
BOOST_AUTO_TEST_CASE(readers_and_writers_during_gc_are_linearizable) {
  constexpr uint64_t kKeys = 48;
  constexpr uint32_t kOps = 1500;
  LocalTree t(256, 8);
  check::HistoryRecorder recorder;
  const auto start = std::chrono::steady_clock::now();
  auto now = [&] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count() +
           2000;
  };
  auto name = [](uint64_t key) {
    char b[8];
    std::snprintf(b, sizeof b, "%04llu", static_cast<unsigned long long>(key));
    return std::string(b);
  };
  {
    auto loader = t.tree();
    check::ClientHistory& h = recorder.client(99);
    for (uint64_t i = 0; i < 900; ++i) {
      const Pair x{i % kKeys, 1000 + i};
      BOOST_REQUIRE(loader->insert(x).is_ok());
      check::Operation o;
      o.kind = check::OpKind::kInsert;
      o.key = name(x.key);
      o.value = x.payload;
      h.respond(h.invoke(o, 2 * i), check::Outcome::kOk, 2 * i + 1);  // one after another
    }
  }
  std::atomic<uint32_t> writers_left{2};
  std::atomic<bool> collecting{false};
  std::atomic<uint64_t> pass_count{0};
  std::atomic<uint64_t> failed{0};
  std::vector<std::thread> threads;
  auto gc = t.tree();
  for (uint32_t c = 0; c < 4; ++c) {
    threads.emplace_back([&, c, tree = t.tree()] {
      check::ClientHistory& h = recorder.client(c);
      while (!collecting.load()) std::this_thread::yield();
      Random rng(100 + c);
      const bool writer = c < 2;
      for (uint32_t i = 0; i < kOps; ++i) {
        // Writers let a whole GC pass run every 100 operations, so that
        // passes interleave with the deletes whatever the scheduling.
        if (writer && i % 100 == 99) {
          const uint64_t seen = pass_count.load();
          while (pass_count.load() < seen + 2) std::this_thread::yield();
        }
        const uint64_t key = rng.uniform(kKeys);
        check::Operation o;
        o.key = name(key);
        const uint64_t dice = rng.uniform(100);
        if (writer && dice < 25) {
          o.kind = check::OpKind::kInsert;
          o.value = (uint64_t{c} << 32) | i;
          const size_t at = h.invoke(o, now());
          if (!tree->insert({key, o.value}).is_ok()) ++failed;
          h.respond(at, check::Outcome::kOk, now());
        } else if (writer) {
          o.kind = check::OpKind::kDelete;
          o.value = 1000 + key + kKeys * rng.uniform(900 / kKeys);  // a loaded pair of the key
          const size_t at = h.invoke(o, now());
          auto removed = tree->remove({key, o.value});
          if (!removed.is_ok()) ++failed;
          h.respond(at, removed.is_ok() && *removed ? check::Outcome::kOk : check::Outcome::kNotFound, now());
        } else if (dice < 40) {
          o.kind = check::OpKind::kLookup;
          const size_t at = h.invoke(o, now());
          std::vector<uint64_t> got;
          if (!tree->lookup(key, &got).is_ok()) ++failed;
          h.op(at).result_ids = got;
          h.respond(at, got.empty() ? check::Outcome::kNotFound : check::Outcome::kOk, now());
        } else {
          // Keys [key, key + 3), or its first `limit` pairs.
          o.kind = check::OpKind::kScan;
          o.bounded = true;
          o.end_key = name(key + 3);
          o.limit = dice < 70 ? 0 : static_cast<uint32_t>(rng.uniform(20) + 1);
          tree->set_atomic_ranges(true);
          const size_t at = h.invoke(o, now());
          std::vector<Pair> got;
          if (!tree->range({key, 0}, key + 2, o.limit, &got).is_ok()) ++failed;
          for (const Pair& x : got) {
            h.op(at).result_keys.push_back(name(x.key));
            h.op(at).result_ids.push_back(x.payload);
          }
          h.respond(at, check::Outcome::kOk, now());
        }
      }
      if (writer) --writers_left;
    });
  }
  uint64_t passes = 0, passes_during_writes = 0;
  while (writers_left.load() > 0 || !collecting.load()) {
    BOOST_REQUIRE(gc->collect_garbage().is_ok());
    ++passes;
    pass_count.store(passes);
    if (writers_left.load() == 2) ++passes_during_writes;
    collecting.store(true);
  }
  for (auto& th : threads) th.join();
  BOOST_TEST(failed.load() == 0u);
  const TreeStats& s = gc->stats();
  BOOST_TEST_MESSAGE(passes << " passes (" << passes_during_writes << " while both wrote): merges " << s.merges
                            << " (inner " << s.inner_merges << "), collected " << s.entries_collected << ", freed "
                            << s.pages_freed << ", restarts " << s.restarts);
  BOOST_TEST(passes_during_writes > 10u);
  BOOST_TEST(s.merges > 5u);
  BOOST_TEST(s.pages_freed > 0u);
  BOOST_TEST(s.entries_collected > 100u);
  check_structure(t.access);

  check::History history = recorder.merge();
  const auto count = [&](check::OpKind kind, check::Outcome outcome) {
    return std::count_if(history.begin(), history.end(),
                         [&](const check::Operation& o) { return o.kind == kind && o.outcome == outcome; });
  };
  BOOST_TEST_MESSAGE(count(check::OpKind::kDelete, check::Outcome::kOk)
                     << " deletes, " << count(check::OpKind::kScan, check::Outcome::kOk) << " scans");
  check::CheckOptions options;
  options.time_budget_ns = 0;
  const check::CheckResult verdict = check::check_history(check::MultimapModel(), history, options);
  BOOST_TEST(verdict.linearizable(), verdict.report(history));
  // The check is real: a scan that misses a pair no one ever deleted is
  // caught.
  auto never_deleted = [&](const std::string& key, uint64_t payload) {
    return std::none_of(history.begin(), history.end(), [&](const check::Operation& o) {
      return o.kind == check::OpKind::kDelete && o.key == key && o.value == payload;
    });
  };
  bool dropped = false;
  for (check::Operation& o : history) {
    if (o.kind != check::OpKind::kScan) continue;
    for (size_t j = 0; j < o.result_keys.size() && !dropped; ++j) {
      if (!never_deleted(o.result_keys[j], o.result_ids[j])) continue;
      o.result_keys.erase(o.result_keys.begin() + static_cast<long>(j));
      o.result_ids.erase(o.result_ids.begin() + static_cast<long>(j));
      dropped = true;
    }
    if (dropped) break;
  }
  BOOST_REQUIRE(dropped);
  BOOST_TEST(
      (check::check_history(check::MultimapModel(), history, options).verdict == check::Verdict::kNotLinearizable));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace locus::nam
