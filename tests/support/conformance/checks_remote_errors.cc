// Conformance: the target's checks. A one-sided request that leaves its
// region (including by 64-bit wrap-around), names a wrong key or a dead
// registration, or lacks the region's right completes kRemoteAccessError
// and touches nothing; a request to a crashed node completes
// kRetryExceeded. These are what keep a buggy or stale client from
// corrupting a server, so "nothing touched" is checked byte for byte.
//
// Each bad request is posted from its own client node: on verbs an error
// completion moves the queue pair to the error state, so one bad request
// per connection keeps the checks independent of that.
#include <boost/test/unit_test.hpp>

#include <cstring>

#include "tests/support/conformance/conformance_checks.h"
#include "tests/support/conformance/conformance_harness.h"

namespace locus::conformance {
namespace {

// One bad request and the completion status it must get.
struct BadRequest {
  std::string name;
  Opcode op;
  RemoteAddr remote;
  uint32_t length;  // READ/WRITE only
};

// Posts each request from a fresh client node and expects `status`.
void post_each_from_own_node(World& w, NodeId server, const std::vector<BadRequest>& requests, WcStatus status) {
  for (const BadRequest& r : requests) {
    const NodeId client = w.add_node("client_" + r.name, false);
    GuardedBuffer& local = w.buffer(256, 70);
    const Region lr = w.register_region(client, local, kLocalOnly);
    w.spawn(client, r.name, [r, lr, server, status](Actor& a) {
      WorkRequest wr;
      switch (r.op) {
        case Opcode::kRead: wr = read_wr(1, r.remote, lr, 0, r.length); break;
        case Opcode::kWrite: wr = write_wr(1, r.remote, lr, 0, r.length); break;
        case Opcode::kCas: wr = cas_wr(1, r.remote, lr, 0, 0, 0x77); break;
        case Opcode::kFaa: wr = faa_wr(1, r.remote, lr, 0, 0x77); break;
        default: CONF_FAIL(a.probe, "unsupported opcode in a bad-request case"); return;
      }
      auto c = a.exec(wr, r.name);
      CONF_EXPECT_WC(a, c, 1, r.op, status, server);
      if (c && c->status != status) CONF_FAIL(a.probe, "case " + r.name);
      a.expect_quiet(r.name);
    });
  }
}

BadRequest bad(std::string name, Opcode op, const RemoteRegion& region, uint64_t offset, uint32_t length = 8) {
  return BadRequest{std::move(name), op, remote_at(region, offset), length};
}

}  // namespace

void check_out_of_bounds(const BackendUnderTest& b) {
  World w(b, "out_of_bounds");
  // The region sits inside a larger buffer: bytes outside it are ordinary
  // memory a wrong bounds check would write without crashing.
  constexpr uint64_t kBefore = 512, kLength = 4096, kAfter = 512;
  constexpr uint64_t kTop = UINT64_MAX;
  const NodeId server = w.add_node("server0", true);
  GuardedBuffer& target = w.buffer(kBefore + kLength + kAfter, 71);
  const Region tr = w.register_region(server, target, kRemoteRead | kRemoteWrite | kRemoteAtomic, kBefore, kLength);
  const RemoteRegion r = tr.remote();

  post_each_from_own_node(w, server,
                          {
                              bad("read_just_past_end", Opcode::kRead, r, kLength, 1),
                              bad("read_across_end", Opcode::kRead, r, kLength - 4, 8),
                              bad("write_just_past_end", Opcode::kWrite, r, kLength, 8),
                              bad("write_across_end", Opcode::kWrite, r, kLength - 8, 16),
                              bad("write_far_past_end", Opcode::kWrite, r, 1ull << 40, 8),
                              // offset + length wraps to a small in-bounds value.
                              bad("write_wrapping_offset", Opcode::kWrite, r, kTop - 3, 8),
                              bad("read_wrapping_offset", Opcode::kRead, r, kTop, 1),
                              bad("write_offset_2_pow_63", Opcode::kWrite, r, 1ull << 63, 16),
                              bad("cas_just_past_end", Opcode::kCas, r, kLength),
                              bad("faa_wrapping_offset", Opcode::kFaa, r, kTop - 7),
                          },
                          WcStatus::kRemoteAccessError);
  w.run();

  BOOST_TEST(target.first_change(0, target.size()) == -1);
  BOOST_TEST(target.guards_intact());
}

void check_wrong_rkey(const BackendUnderTest& b) {
  World w(b, "wrong_rkey");
  const NodeId server = w.add_node("server0", true);
  GuardedBuffer& target = w.buffer(1024, 72);
  GuardedBuffer& other = w.buffer(1024, 73);
  const Region tr = w.register_region(server, target, kRemoteRead | kRemoteWrite | kRemoteAtomic);
  // A second live region, so "wrong" cannot accidentally mean "not found".
  const Region orr = w.register_region(server, other, kRemoteRead | kRemoteWrite | kRemoteAtomic);
  RemoteRegion r = tr.remote();
  r.rkey = tr.rkey ^ 0x5A5A5A5Au;
  if (r.rkey == orr.rkey) r.rkey ^= 0x00010000u;
  // The right region with the other region's key.
  RemoteRegion swapped = tr.remote();
  swapped.rkey = orr.rkey;
  BOOST_REQUIRE(tr.rkey != orr.rkey);

  post_each_from_own_node(w, server,
                          {
                              bad("read_wrong_rkey", Opcode::kRead, r, 0, 64),
                              bad("write_wrong_rkey", Opcode::kWrite, r, 0, 64),
                              bad("cas_wrong_rkey", Opcode::kCas, r, 8),
                              bad("write_other_regions_rkey", Opcode::kWrite, swapped, 0, 64),
                          },
                          WcStatus::kRemoteAccessError);
  w.run();

  BOOST_TEST(target.first_change(0, target.size()) == -1);
  BOOST_TEST(other.first_change(0, other.size()) == -1);
  BOOST_TEST(target.guards_intact());
}

void check_deregistered_region(const BackendUnderTest& b) {
  World w(b, "deregistered_region");
  const NodeId server = w.add_node("server0", true);
  GuardedBuffer& target = w.buffer(1024, 74);
  const Region old_region = w.register_region(server, target, kRemoteRead | kRemoteWrite | kRemoteAtomic);
  const Status s = w.setup_env(server).transport->deregister_memory(old_region);
  BOOST_REQUIRE_MESSAGE(s.is_ok(), "deregister_memory: " << s.to_string());
  // The same memory registered again: an address naming the old
  // registration must not reach the new one (region ids are never reused).
  const Region new_region = w.register_region(server, target, kRemoteRead | kRemoteWrite | kRemoteAtomic);
  BOOST_TEST(new_region.id != old_region.id);
  const RemoteRegion stale = old_region.remote();
  RemoteRegion unknown = old_region.remote();
  unknown.region = new_region.id + old_region.id + 1000;

  post_each_from_own_node(w, server,
                          {
                              bad("read_deregistered", Opcode::kRead, stale, 0, 64),
                              bad("write_deregistered", Opcode::kWrite, stale, 0, 64),
                              bad("faa_deregistered", Opcode::kFaa, stale, 8),
                              bad("write_unknown_region", Opcode::kWrite, unknown, 0, 64),
                          },
                          WcStatus::kRemoteAccessError);
  w.run();

  BOOST_TEST(target.first_change(0, target.size()) == -1);
  BOOST_TEST(target.guards_intact());
}

void check_missing_rights(const BackendUnderTest& b) {
  World w(b, "missing_rights");
  const NodeId server = w.add_node("server0", true);
  GuardedBuffer& read_only = w.buffer(256, 75);
  GuardedBuffer& write_only = w.buffer(256, 76);
  GuardedBuffer& local_only = w.buffer(256, 77);
  GuardedBuffer& no_atomic = w.buffer(256, 78);
  const RemoteRegion ro = w.register_region(server, read_only, kRemoteRead).remote();
  const RemoteRegion wo = w.register_region(server, write_only, kRemoteWrite).remote();
  const RemoteRegion lo = w.register_region(server, local_only, kLocalOnly).remote();
  const RemoteRegion rw = w.register_region(server, no_atomic, kRemoteRead | kRemoteWrite).remote();

  post_each_from_own_node(w, server,
                          {
                              bad("write_to_read_only", Opcode::kWrite, ro, 0, 64),
                              bad("cas_on_read_only", Opcode::kCas, ro, 8),
                              bad("read_from_write_only", Opcode::kRead, wo, 0, 64),
                              bad("read_from_local_only", Opcode::kRead, lo, 0, 64),
                              bad("write_to_local_only", Opcode::kWrite, lo, 0, 64),
                              bad("cas_without_atomic", Opcode::kCas, rw, 8),
                              bad("faa_without_atomic", Opcode::kFaa, rw, 16),
                          },
                          WcStatus::kRemoteAccessError);
  w.run();

  for (GuardedBuffer* buf : {&read_only, &write_only, &local_only, &no_atomic}) {
    BOOST_TEST(buf->first_change(0, buf->size()) == -1);
    BOOST_TEST(buf->guards_intact());
  }
}

void check_crashed_peer(const BackendUnderTest& b) {
  if (!b.supports_crash_node) {
    BOOST_TEST_MESSAGE("backend " << b.name << " cannot crash nodes; skipped");
    BOOST_TEST(true);
    return;
  }
  World w(b, "crashed_peer");
  const NodeId server = w.add_node("server0", true);
  GuardedBuffer& target = w.buffer(256, 79);
  const RemoteRegion r = w.register_region(server, target, kRemoteRead | kRemoteWrite | kRemoteAtomic).remote();
  const Status s = w.runtime().crash_node(server);
  BOOST_REQUIRE_MESSAGE(s.is_ok(), "crash_node: " << s.to_string());

  post_each_from_own_node(w, server,
                          {
                              bad("read_from_crashed", Opcode::kRead, r, 0, 64),
                              bad("write_to_crashed", Opcode::kWrite, r, 0, 64),
                              bad("cas_on_crashed", Opcode::kCas, r, 8),
                          },
                          WcStatus::kRetryExceeded);
  // A SEND needs no region: a dead peer fails it the same way.
  const NodeId client = w.add_node("client_send_to_crashed", false);
  GuardedBuffer& outbox = w.buffer(64, 80);
  const Region orr = w.register_region(client, outbox, kLocalOnly);
  w.spawn(client, "send_to_crashed", [&, orr, server](Actor& a) {
    auto c = a.exec(send_wr(1, server, orr, 0, 16), "SEND to a crashed node");
    CONF_EXPECT_WC(a, c, 1, Opcode::kSend, WcStatus::kRetryExceeded, server);
    a.expect_quiet("after SEND to a crashed node");
  });
  w.run();
}

// Transport::fence_peer / rejoin: once the fence returned, no request the
// fenced client posts lands (however many it posts) until it rejoins; then
// its requests land again. What came before the fence stays.
void check_fenced_peer(const BackendUnderTest& b) {
  World w(b, "fenced_peer");
  const NodeId server = w.add_node("server0", true);
  GuardedBuffer& target = w.buffer(256, 81);
  const Region tr = w.register_region(server, target, kRemoteRead | kRemoteWrite | kRemoteAtomic);
  const NodeId client = w.add_node("client_fenced", false);
  GuardedBuffer& outbox = w.buffer(64, 82);
  const Region orr = w.register_region(client, outbox, kLocalOnly);
  Latch& written = w.latch(client);  // the first WRITE has completed
  Latch& fenced = w.latch(server);   // fence_peer returned
  constexpr int kMaxTries = 8;       // WRITEs while fenced before rejoin must say so
  bool rejoined = false;

  w.spawn(server, "fencer", [&](Actor& a) {
    CONF_EXPECT(a.probe, written.wait(b.completion_timeout));
    const Status s = a.transport().fence_peer(client);
    CONF_EXPECT(a.probe, s.is_ok());
    if (!s.is_ok()) BOOST_TEST_MESSAGE("fence_peer: " << s.to_string());
    fenced.open();
    a.expect_quiet("fencer");
  });
  w.spawn(client, "fenced", [&](Actor& a) {
    uint64_t id = 0;
    auto c = a.exec(write_wr(++id, remote_at(tr.remote(), 0), orr, 0, 32), "WRITE before the fence");
    CONF_EXPECT_WC(a, c, id, Opcode::kWrite, WcStatus::kSuccess, server);
    written.open();
    CONF_EXPECT(a.probe, fenced.wait(b.completion_timeout));
    for (int i = 0; i < kMaxTries && !rejoined; ++i) {
      c = a.exec(write_wr(++id, remote_at(tr.remote(), 64), orr, 0, 32), "WRITE while fenced");
      CONF_EXPECT(a.probe, c.has_value() && c->status != WcStatus::kSuccess);
      if (!c || c->status == WcStatus::kSuccess) return;
      rejoined = a.transport().rejoin(server);
    }
    CONF_EXPECT(a.probe, rejoined);
    c = a.exec(write_wr(++id, remote_at(tr.remote(), 128), orr, 0, 32), "WRITE after rejoining");
    CONF_EXPECT_WC(a, c, id, Opcode::kWrite, WcStatus::kSuccess, server);
    a.expect_quiet("fenced client");
  });
  w.run();
  BOOST_TEST(rejoined);
  const std::vector<std::byte> sent = pattern(82, 0, 32);
  BOOST_TEST(std::memcmp(target.data(), sent.data(), 32) == 0, "the WRITE before the fence landed");
  BOOST_TEST(target.first_change(64, 96) == -1, "no WRITE landed while fenced");
  BOOST_TEST(std::memcmp(target.data() + 128, sent.data(), 32) == 0, "the WRITE after rejoining landed");
  BOOST_TEST(target.guards_intact());
}

}  // namespace locus::conformance
