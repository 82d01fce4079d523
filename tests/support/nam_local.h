// What the NAM tree's local tests share (nam_tree_test, nam_gc_test): a
// clock for trees on local arenas, where nothing waits, an arena holding
// an empty tree, the multimap they are checked against, and a base for
// NodeAccess decorators.
#pragma once

#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <map>
#include <memory>

#include "core/index/nam/arena.h"
#include "core/index/nam/local_access.h"
#include "core/index/nam/tree.h"
#include "core/transport/env.h"

namespace locus::testing {

class NoClock final : public Clock {
 public:
  Nanos now() const override { return 0; }
  void sleep_for(Nanos) override {}
};

// An arena in this process of `arena_bytes` with pages of `page_bytes`,
// holding an empty tree, and its local access.
struct LocalArena {
  explicit LocalArena(uint32_t page_bytes, uint64_t arena_bytes = 64ull << 20)
      : arena(make(page_bytes, arena_bytes)), access(*arena, clock) {
    BOOST_REQUIRE(nam::BlinkTree::create_empty(access).is_ok());
  }
  static std::unique_ptr<nam::Arena> make(uint32_t page_bytes, uint64_t arena_bytes) {
    auto a = nam::Arena::create(Env{}, 0, arena_bytes, page_bytes, false);
    BOOST_REQUIRE_MESSAGE(a.is_ok(), a.status().to_string());
    return std::move(*a);
  }
  NoClock clock;
  std::unique_ptr<nam::Arena> arena;
  nam::LocalAccess access;
};

using NamReference = std::multimap<uint64_t, uint64_t>;

// Forwards every call to `inner`, so that a test's decorator overrides only
// what it changes. Not in_place(): a decorator sees every node a lookup
// reads unless it opts in to the in-place search.
class ForwardingAccess : public nam::NodeAccess {
 public:
  explicit ForwardingAccess(nam::NodeAccess& inner) : inner_(inner) {}
  uint32_t page_bytes() const override { return inner_.page_bytes(); }
  Status read(nam::RemotePtr p, nam::Node& out) override { return inner_.read(p, out); }
  Status lock(nam::RemotePtr p, uint64_t version) override { return inner_.lock(p, version); }
  Status install(nam::RemotePtr p, const nam::Node& n) override { return inner_.install(p, n); }
  Status create(nam::RemotePtr p, const nam::Node& n) override { return inner_.create(p, n); }
  Status unlock(nam::RemotePtr p, uint64_t held) override { return inner_.unlock(p, held); }
  StatusOr<nam::RemotePtr> allocate(uint8_t level) override { return inner_.allocate(level); }
  StatusOr<nam::RemotePtr> root() override { return inner_.root(); }
  StatusOr<bool> swap_root(nam::RemotePtr old_root, nam::RemotePtr new_root) override {
    return inner_.swap_root(old_root, new_root);
  }

 protected:
  nam::NodeAccess& inner_;
};

}  // namespace locus::testing
