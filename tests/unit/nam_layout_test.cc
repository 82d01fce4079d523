// The NAM node layout's searches (layout.h) against std::lower_bound:
// first_key_at_least, the branch-free search the in-place lookup runs over
// a page's keys, and Node::lower_bound over (key, payload) pairs, on random
// pages full of duplicate keys at every count a page of each kind can hold,
// so every window boundary of the halving is crossed. Also: entries survive
// the moves of insert, erase, split and compact.
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <limits>
#include <ostream>
#include <vector>

#include "core/common/random.h"
#include "core/index/nam/layout.h"

namespace locus::nam {

// For Boost.Test's messages.
std::ostream& operator<<(std::ostream& os, const Pair& p) { return os << '(' << p.key << ", " << p.payload << ')'; }
std::ostream& operator<<(std::ostream& os, const RemotePtr& p) { return os << p.raw; }

namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

// n ascending keys drawn from `distinct` values (few: many duplicates),
// spread over the whole 64-bit range so the top bit is exercised too.
std::vector<uint64_t> sorted_keys(Random& rng, uint32_t n, uint64_t distinct) {
  std::vector<uint64_t> keys(n);
  const uint64_t step = kMax / distinct;
  for (auto& k : keys) k = rng.uniform(distinct) * step;
  std::sort(keys.begin(), keys.end());
  return keys;
}

// Probes: every key, its neighbours, the ends of the range, a few random.
std::vector<uint64_t> probes(Random& rng, const std::vector<uint64_t>& keys) {
  std::vector<uint64_t> out = {0, 1, kMax - 1, kMax};
  for (uint64_t k : keys) {
    out.push_back(k);
    out.push_back(k - 1);
    out.push_back(k + 1);
  }
  for (int i = 0; i < 8; ++i) out.push_back(rng.next_u64());
  return out;
}

// Sorted pairs with duplicate keys, payloads from a small set, and some
// pairs repeated (a leaf may hold equal pairs).
std::vector<Pair> sorted_pairs(Random& rng, uint32_t n) {
  std::vector<Pair> pairs(n);
  for (auto& p : pairs) p = {rng.uniform(n / 4 + 2) * 1000, rng.uniform(6)};
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(nam_layout)

BOOST_AUTO_TEST_CASE(first_key_at_least_is_lower_bound) {
  Random rng(19);
  // Every count up to past the largest capacity of a 4 KB page, and a few
  // of the largest pages'.
  std::vector<uint32_t> counts;
  for (uint32_t n = 0; n <= leaf_capacity(4096) + 1; ++n) counts.push_back(n);
  for (uint32_t n : {inner_capacity(kMaxPageBytes), leaf_capacity(kMaxPageBytes)}) counts.push_back(n);
  uint64_t checked = 0;
  for (uint32_t n : counts) {
    for (uint64_t distinct : {uint64_t{1}, uint64_t{3}, uint64_t{n / 2 + 1}, uint64_t{1} << 40}) {
      const std::vector<uint64_t> keys = sorted_keys(rng, n, distinct);
      for (uint64_t key : probes(rng, keys)) {
        const auto want = static_cast<uint32_t>(std::lower_bound(keys.begin(), keys.end(), key) - keys.begin());
        const uint32_t got = first_key_at_least(n, key, [&](uint32_t i) { return keys.at(i); });
        if (got != want) BOOST_FAIL("n " << n << " key " << key << ": " << got << " instead of " << want);
        ++checked;
      }
    }
  }
  BOOST_TEST(checked > 100000u);
}

BOOST_AUTO_TEST_CASE(node_lower_bound_is_lower_bound_over_pairs) {
  Random rng(20);
  for (uint32_t page : {kMinPageBytes, 256u, 1024u, 4096u}) {
    std::vector<std::byte> bytes(page);
    Node node(bytes.data(), page);
    for (uint8_t level : {uint8_t{0}, uint8_t{1}}) {
      node.init(level);
      const uint32_t cap = node.capacity();
      BOOST_TEST(cap == (level == 0 ? leaf_capacity(page) : inner_capacity(page)));
      for (uint32_t n = 0; n <= cap; ++n) {
        for (int round = 0; round < 4; ++round) {
          const std::vector<Pair> pairs = sorted_pairs(rng, n);
          node.init(level);
          // Built by insert_at in a random order, each at its lower bound.
          std::vector<Pair> shuffled = pairs;
          for (size_t i = shuffled.size(); i > 1; --i) std::swap(shuffled[i - 1], shuffled[rng.uniform(i)]);
          for (const Pair& p : shuffled) node.insert_at(node.lower_bound(p), p, RemotePtr::make(1, p.key + p.payload));
          BOOST_REQUIRE(node.count() == n);
          for (uint32_t i = 0; i < n; ++i) {
            BOOST_REQUIRE(node.pair(i) == pairs[i]);
            if (level > 0) BOOST_REQUIRE(node.child(i) == RemotePtr::make(1, pairs[i].key + pairs[i].payload));
          }
          std::vector<Pair> xs = {{0, 0}, {kMax, kMax}};
          for (const Pair& p : pairs) {
            for (uint64_t dp : {uint64_t{0}, uint64_t{1}}) {
              xs.push_back({p.key, p.payload + dp});
              xs.push_back({p.key, p.payload - dp});
              xs.push_back({p.key + 1, dp});
              xs.push_back({p.key - 1, kMax - dp});
            }
          }
          for (const Pair& x : xs) {
            const auto want = static_cast<uint32_t>(std::lower_bound(pairs.begin(), pairs.end(), x) - pairs.begin());
            if (node.lower_bound(x) != want) {
              BOOST_FAIL("page " << page << " level " << int{level} << " n " << n << " (" << x.key << ", "
                                 << x.payload << "): " << node.lower_bound(x) << " instead of " << want);
            }
          }
        }
      }
    }
  }
}

// A leaf splits between two keys where it can (its high key then keeps
// every pair of its last key), else between two pairs of one key.
BOOST_AUTO_TEST_CASE(a_leaf_splits_between_keys_where_it_can) {
  constexpr uint32_t kPage = 1024;
  std::vector<std::byte> a(kPage), b(kPage);
  auto fill = [&](Node& n, uint64_t run_from, uint64_t run_to) {
    // Keys 0, 1, 2, ... except positions [run_from, run_to), all key 1000.
    n.init(0);
    for (uint32_t i = 0; i < n.capacity(); ++i) {
      const uint64_t key = i >= run_from && i < run_to ? 1000 : (i < run_from ? i : 2000 + i);
      n.insert_at(i, {key, i});
    }
  };
  Node left(a.data(), kPage), right(b.data(), kPage);
  left.init(0);
  const uint32_t cap = left.capacity();
  // A run of one key across the middle, short of a quarter on each side:
  // the split goes to the run's nearer end.
  fill(left, cap / 2 - 3, cap / 2 + 5);
  uint32_t at = left.split_point();
  BOOST_TEST(at == cap / 2 - 3);
  left.split_into(at, right, RemotePtr::make(1, 0));
  BOOST_TEST(left.high() == (Pair{left.pair(at - 1).key, kMaxPayload}));
  BOOST_TEST(!left.pairs_may_follow(left.pair(at - 1).key));
  BOOST_TEST(left.pairs_may_follow(1000));
  BOOST_TEST(left.covers({left.pair(at - 1).key, 123456}));
  BOOST_TEST(!left.covers({1000, 0}));
  // A run over the whole middle half: between two pairs of the run, whose
  // key may then go on right.
  fill(left, cap / 4 - 1, cap - cap / 4 + 2);
  at = left.split_point();
  BOOST_TEST(at == cap / 2);
  left.split_into(at, right, RemotePtr::make(1, 0));
  BOOST_TEST(left.high() == left.pair(at - 1));
  BOOST_TEST(left.pairs_may_follow(1000));
}

BOOST_AUTO_TEST_CASE(entry_arrays_survive_erase_split_and_compact) {
  for (uint32_t page : {kMinPageBytes, 1024u}) {
    for (uint8_t level : {uint8_t{0}, uint8_t{1}}) {
      std::vector<std::byte> a(page), b(page);
      Node left(a.data(), page), right(b.data(), page);
      left.init(level);
      const uint32_t cap = left.capacity();
      std::vector<Pair> pairs;
      for (uint32_t i = 0; i < cap; ++i) pairs.push_back({(i + 1) * 10, i});
      for (uint32_t i = 0; i < cap; ++i) left.insert_at(i, pairs[i], RemotePtr::make(2, i));
      if (level == 0) {
        for (uint32_t i = 0; i < cap; i += 3) left.set_deleted(i, true);
      }
      // Erase one in the middle, then split the rest at the middle.
      const uint32_t gone = cap / 2;
      left.erase_at(gone);
      pairs.erase(pairs.begin() + gone);
      auto child_of = [&](uint32_t i) { return RemotePtr::make(2, i < gone ? i : i + 1); };
      auto deleted_of = [&](uint32_t i) { return level == 0 && (i < gone ? i : i + 1) % 3 == 0; };
      const uint32_t at = left.split_point();
      BOOST_REQUIRE(at > 0);
      left.split_into(at, right, RemotePtr::make(3, 0));
      BOOST_REQUIRE(left.count() + right.count() == cap - 1);
      for (uint32_t i = 0; i < cap - 1; ++i) {
        const Node& n = i < at ? left : right;
        const uint32_t j = i < at ? i : i - at;
        BOOST_REQUIRE(n.pair(j) == pairs[i]);
        if (level > 0) BOOST_REQUIRE(n.child(j) == child_of(i));
        if (level == 0) BOOST_REQUIRE(n.deleted(j) == deleted_of(i));
      }
      // A leaf split between two keys keeps every pair of its last key.
      BOOST_TEST(left.high() == (level == 0 ? Pair{pairs[at - 1].key, kMaxPayload} : pairs[at - 1]));
      if (level == 0) {
        // Compact the right half: the live pairs stay, in order.
        std::vector<Pair> live;
        for (uint32_t i = at; i < cap - 1; ++i) {
          if (!deleted_of(i)) live.push_back(pairs[i]);
        }
        right.compact();
        BOOST_REQUIRE(right.count() == live.size());
        for (uint32_t j = 0; j < right.count(); ++j) {
          BOOST_REQUIRE(right.pair(j) == live[j]);
          BOOST_REQUIRE(!right.deleted(j));
        }
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace locus::nam
