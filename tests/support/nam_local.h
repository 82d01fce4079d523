// What the NAM tree's local tests share (nam_tree_test, nam_gc_test): a
// clock for trees on local arenas, where nothing waits, an arena holding
// an empty tree, the multimap they are checked against, and a base for
// NodeAccess decorators.
#pragma once

#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

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

// A compute server that dies in the middle of a merge (gc.cc), between
// its two node installs: the second install of its merge number
// merges_to_finish + 1 (the node the
// first one marked merged names, or a merged node after the node it
// names) never happens, and neither does any later call. Its locks are
// released as a lock breaker would after their lease: a node it installed
// keeps that body, the others keep the body it read, resealed. Records
// the copies it reads and the locks it takes to do so.
class MergerDiesBetweenInstalls final : public ForwardingAccess {
 public:
  using ForwardingAccess::ForwardingAccess;
  Status read(nam::RemotePtr p, nam::Node& out) override {
    if (died) return gone();
    LOCUS_RETURN_IF_ERROR(inner_.read(p, out));
    read_[p.raw].assign(out.data(), out.data() + page_bytes());
    return Status();
  }
  Status lock(nam::RemotePtr p, uint64_t version) override {
    if (died) return gone();
    LOCUS_RETURN_IF_ERROR(inner_.lock(p, version));
    held_[p.raw] = {version | nam::kLockBit, false};
    return Status();
  }
  Status install(nam::RemotePtr p, const nam::Node& n) override {
    if (died) return gone();
    const bool second = (n.dead() && last_ == n.sibling()) || (last_dead_ && last_forward_ == p);
    if (second && merges_to_finish-- == 0) {
      died_at_level = n.level();
      return die();
    }
    last_ = p, last_dead_ = n.dead(), last_forward_ = n.sibling();
    LOCUS_RETURN_IF_ERROR(inner_.install(p, n));
    held_[p.raw].installed = true;
    return Status();
  }
  Status unlock(nam::RemotePtr p, uint64_t held) override {
    if (died) return gone();
    held_.erase(p.raw);
    last_ = {}, last_dead_ = false;  // the next install is another merge's (or none's)
    return inner_.unlock(p, held);
  }
  Status create(nam::RemotePtr p, const nam::Node& n) override { return died ? gone() : inner_.create(p, n); }
  StatusOr<nam::RemotePtr> allocate(uint8_t level) override { return died ? gone() : inner_.allocate(level); }
  StatusOr<nam::RemotePtr> root() override { return died ? gone() : inner_.root(); }

  uint32_t merges_to_finish = 0;  // merges it completes before it dies at one
  bool died = false;
  uint8_t died_at_level = 0;

 private:
  struct Held {
    uint64_t word = 0;
    bool installed = false;
  };
  static Status gone() { return Status(StatusCode::kUnavailable, "test: the merger died"); }
  Status die() {
    died = true;
    for (auto& [raw, h] : held_) {
      const nam::RemotePtr p{raw};
      if (!h.installed) {
        std::vector<std::byte> copy = read_.at(raw);
        nam::Node n(copy.data(), page_bytes());
        n.set_word(h.word);
        n.seal(h.word + 1);
        BOOST_REQUIRE(inner_.install(p, n).is_ok());
      }
      BOOST_REQUIRE(inner_.unlock(p, h.word).is_ok());
    }
    held_.clear();
    return gone();
  }
  std::map<uint64_t, std::vector<std::byte>> read_;
  std::map<uint64_t, Held> held_;
  nam::RemotePtr last_, last_forward_;
  bool last_dead_ = false;
};

}  // namespace locus::testing
