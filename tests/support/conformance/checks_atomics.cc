// Conformance: CAS and FAA. Nessie's index entries and the NAM index's
// lock words are changed only by these, so they must return the old value,
// leave memory alone on a failed compare, wrap like uint64_t, and be atomic
// with respect to each other when several clients hammer one word.
#include <algorithm>
#include <numeric>

#include <boost/test/unit_test.hpp>

#include "tests/support/conformance/conformance_checks.h"
#include "tests/support/conformance/conformance_harness.h"

namespace locus::conformance {
namespace {
constexpr Access kAtomicRw = kRemoteRead | kRemoteWrite | kRemoteAtomic;
}  // namespace

void check_cas_success_and_failure(const BackendUnderTest& b) {
  World w(b, "cas_success_and_failure");
  const NodeId server = w.add_node("server0", true);
  const NodeId client = w.add_node("client0", false);
  GuardedBuffer& target = w.buffer(4096, 9);
  GuardedBuffer& local = w.buffer(4096, 10);
  const Region tr = w.register_region(server, target, kAtomicRw);
  const Region lr = w.register_region(client, local, kLocalOnly);
  constexpr uint64_t kWord = 64, kA = 0x1111222233334444, kB = 0x5555666677778888, kC = 0x9999aaaabbbbcccc;
  const uint64_t last = target.size() - 8;
  constexpr uint64_t kX = 7, kY = 0xffffffffffffffff;
  target.store_u64(kWord, kA);
  target.store_u64(last, kX);

  w.spawn(client, "client0", [&](Actor& a) {
    auto c = a.exec(cas_wr(1, remote_at(tr.remote(), kWord), lr, 0, kA, kB), "CAS that matches");
    CONF_EXPECT_WC(a, c, 1, Opcode::kCas, WcStatus::kSuccess, server);
    CONF_EXPECT_EQ(a.probe, local.load_u64(0), kA);

    // A failed compare is still a successful completion; the returned value
    // is what the word holds now.
    c = a.exec(cas_wr(2, remote_at(tr.remote(), kWord), lr, 8, kA, kC), "CAS that does not match");
    CONF_EXPECT_WC(a, c, 2, Opcode::kCas, WcStatus::kSuccess, server);
    CONF_EXPECT_EQ(a.probe, local.load_u64(8), kB);

    c = a.exec(read_wr(3, remote_at(tr.remote(), kWord), lr, 16, 8), "READ of the CAS word");
    CONF_EXPECT_WC(a, c, 3, Opcode::kRead, WcStatus::kSuccess, server);
    CONF_EXPECT_EQ(a.probe, local.load_u64(16), kB);

    c = a.exec(cas_wr(4, remote_at(tr.remote(), last), lr, 24, kX, kY), "CAS of the region's last word");
    CONF_EXPECT_WC(a, c, 4, Opcode::kCas, WcStatus::kSuccess, server);
    CONF_EXPECT_EQ(a.probe, local.load_u64(24), kX);
    a.expect_quiet("after CAS");
  });
  w.run();

  BOOST_TEST(target.load_u64(kWord) == kB);
  BOOST_TEST(target.load_u64(last) == kY);
  BOOST_TEST(target.first_change(0, kWord) == -1);
  BOOST_TEST(target.first_change(kWord + 8, last) == -1);
  BOOST_TEST(target.guards_intact());
  // Only the 8-byte result slots of the local buffer were written.
  BOOST_TEST(local.first_change(32, local.size()) == -1);
  BOOST_TEST(local.guards_intact());
}

void check_faa_returns_old_and_adds(const BackendUnderTest& b) {
  World w(b, "faa_returns_old_and_adds");
  const NodeId server = w.add_node("server0", true);
  const NodeId client = w.add_node("client0", false);
  GuardedBuffer& target = w.buffer(4096, 11);
  GuardedBuffer& local = w.buffer(4096, 12);
  const Region tr = w.register_region(server, target, kAtomicRw);
  const Region lr = w.register_region(client, local, kLocalOnly);
  constexpr uint64_t kWord = 128, kWrapWord = 136;
  target.store_u64(kWord, 1000);
  target.store_u64(kWrapWord, UINT64_MAX - 1);

  w.spawn(client, "client0", [&](Actor& a) {
    auto c = a.exec(faa_wr(1, remote_at(tr.remote(), kWord), lr, 0, 5), "FAA +5");
    CONF_EXPECT_WC(a, c, 1, Opcode::kFaa, WcStatus::kSuccess, server);
    CONF_EXPECT_EQ(a.probe, local.load_u64(0), uint64_t{1000});
    c = a.exec(faa_wr(2, remote_at(tr.remote(), kWord), lr, 8, 0), "FAA +0");
    CONF_EXPECT_WC(a, c, 2, Opcode::kFaa, WcStatus::kSuccess, server);
    CONF_EXPECT_EQ(a.probe, local.load_u64(8), uint64_t{1005});
    // Adding 2^64 - 1 subtracts one: FAA is modular, which the NAM index's
    // FAA unlock relies on.
    c = a.exec(faa_wr(3, remote_at(tr.remote(), kWord), lr, 16, UINT64_MAX), "FAA -1");
    CONF_EXPECT_WC(a, c, 3, Opcode::kFaa, WcStatus::kSuccess, server);
    CONF_EXPECT_EQ(a.probe, local.load_u64(16), uint64_t{1005});
    c = a.exec(faa_wr(4, remote_at(tr.remote(), kWrapWord), lr, 24, 3), "FAA that wraps");
    CONF_EXPECT_WC(a, c, 4, Opcode::kFaa, WcStatus::kSuccess, server);
    CONF_EXPECT_EQ(a.probe, local.load_u64(24), UINT64_MAX - 1);
    a.expect_quiet("after FAA");
  });
  w.run();

  BOOST_TEST(target.load_u64(kWord) == 1004u);
  BOOST_TEST(target.load_u64(kWrapWord) == 1u);
  BOOST_TEST(target.first_change(0, kWord) == -1);
  BOOST_TEST(target.first_change(kWrapWord + 8, target.size()) == -1);
  BOOST_TEST(target.guards_intact());
}

void check_concurrent_faa_sums_exactly(const BackendUnderTest& b) {
  World w(b, "concurrent_faa_sums_exactly");
  constexpr int kClients = 4;
  constexpr uint64_t kPerClient = 400;
  constexpr uint64_t kWord = 0;
  const NodeId server = w.add_node("server0", true);
  GuardedBuffer& target = w.buffer(64, 13);
  const Region tr = w.register_region(server, target, kAtomicRw);
  target.store_u64(kWord, 0);
  // Every FAA returns a distinct old value; together they are exactly
  // 0 .. kClients*kPerClient-1 if and only if no increment was lost or
  // duplicated.
  std::vector<std::vector<uint64_t>> olds(kClients);

  for (int i = 0; i < kClients; ++i) {
    const NodeId client = w.add_node("client" + std::to_string(i), false);
    GuardedBuffer& local = w.buffer(8 * 64, static_cast<uint8_t>(20 + i));
    const Region lr = w.register_region(client, local, kLocalOnly);
    w.spawn(client, "client" + std::to_string(i), [&, i, lr, server](Actor& a) {
      // Keep several FAAs in flight so they really overlap at the target.
      // Half the queue, so this check is about atomicity alone; reusing a
      // full queue is send_queue_reuse's business.
      const uint64_t window = std::clamp<uint64_t>(a.transport().limits().max_send_wr / 2, 1, 16);
      std::vector<WorkRequest> batch;
      uint64_t issued = 0;
      while (issued < kPerClient) {
        batch.clear();
        for (uint64_t k = 0; k < window && issued + k < kPerClient; ++k) {
          batch.push_back(faa_wr(issued + k, remote_at(tr.remote(), kWord), lr, 8 * k, 1));
        }
        const Status s = a.post(batch);
        CONF_EXPECT(a.probe, s.is_ok());
        if (!s.is_ok()) return;
        for (uint64_t k = 0; k < batch.size(); ++k) {
          auto c = a.next("FAA in a window");
          CONF_EXPECT_WC(a, c, issued + k, Opcode::kFaa, WcStatus::kSuccess, server);
          if (!c) return;
        }
        for (uint64_t k = 0; k < batch.size(); ++k) olds[i].push_back(local.load_u64(8 * k));
        issued += batch.size();
      }
      a.expect_quiet("after concurrent FAA");
    });
  }
  w.run();

  std::vector<uint64_t> all;
  for (const auto& v : olds) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  std::vector<uint64_t> expected(kClients * kPerClient);
  std::iota(expected.begin(), expected.end(), 0);
  BOOST_TEST(target.load_u64(kWord) == kClients * kPerClient);
  BOOST_TEST(all == expected, "old values returned by FAA are exactly 0..n-1");
  BOOST_TEST(target.guards_intact());
}

void check_concurrent_cas_increments(const BackendUnderTest& b) {
  World w(b, "concurrent_cas_increments");
  constexpr int kClients = 3;
  constexpr uint64_t kPerClient = 150;
  constexpr uint64_t kMaxAttempts = 1'000'000;
  constexpr uint64_t kWord = 8;
  const NodeId server = w.add_node("server0", true);
  GuardedBuffer& target = w.buffer(64, 14);
  const Region tr = w.register_region(server, target, kAtomicRw);
  target.store_u64(kWord, 0);
  std::vector<std::vector<uint64_t>> won(kClients);  // values each client moved from v to v+1

  for (int i = 0; i < kClients; ++i) {
    const NodeId client = w.add_node("client" + std::to_string(i), false);
    GuardedBuffer& local = w.buffer(64, static_cast<uint8_t>(30 + i));
    const Region lr = w.register_region(client, local, kLocalOnly);
    w.spawn(client, "client" + std::to_string(i), [&, i, lr, server](Actor& a) {
      // The optimistic-lock loop of the NAM index: guess, CAS, learn the
      // real value from a failed CAS, retry.
      uint64_t guess = 0, attempts = 0;
      while (won[i].size() < kPerClient && attempts++ < kMaxAttempts) {
        auto c = a.exec(cas_wr(attempts, remote_at(tr.remote(), kWord), lr, 0, guess, guess + 1), "CAS increment");
        if (!c || c->wr_id != attempts || c->status != WcStatus::kSuccess) {
          CONF_EXPECT_WC(a, c, attempts, Opcode::kCas, WcStatus::kSuccess, server);
          return;
        }
        const uint64_t old = local.load_u64(0);
        if (old == guess) {
          won[i].push_back(guess);
          ++guess;
        } else {
          guess = old;
        }
      }
      CONF_EXPECT_EQ(a.probe, won[i].size(), kPerClient);
      a.expect_quiet("after CAS increments");
    });
  }
  w.run();

  std::vector<uint64_t> all;
  for (const auto& v : won) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  std::vector<uint64_t> expected(kClients * kPerClient);
  std::iota(expected.begin(), expected.end(), 0);
  BOOST_TEST(target.load_u64(kWord) == kClients * kPerClient);
  BOOST_TEST(all == expected, "each value was won by exactly one successful CAS");
  BOOST_TEST(target.guards_intact());
}

void check_misaligned_atomics(const BackendUnderTest& b) {
  World w(b, "misaligned_atomics");
  const NodeId server = w.add_node("server0", true);
  GuardedBuffer& target = w.buffer(256, 15);
  const Region tr = w.register_region(server, target, kAtomicRw);
  const uint64_t expected_at_4 = target.load_u64(4);

  struct Case {
    const char* name;
    Opcode op;
    uint64_t offset;
  };
  const Case cases[] = {{"cas_at_4", Opcode::kCas, 4}, {"faa_at_12", Opcode::kFaa, 12}, {"cas_at_1", Opcode::kCas, 1}};
  for (const Case& k : cases) {
    const NodeId client = w.add_node(std::string("client_") + k.name, false);
    GuardedBuffer& local = w.buffer(64, 16);
    const Region lr = w.register_region(client, local, kLocalOnly);
    w.spawn(client, k.name, [&, k, lr, server](Actor& a) {
      const WorkRequest wr = k.op == Opcode::kCas
                                 ? cas_wr(1, remote_at(tr.remote(), k.offset), lr, 0, expected_at_4, 42)
                                 : faa_wr(1, remote_at(tr.remote(), k.offset), lr, 0, 42);
      auto c = a.exec(wr, k.name);
      CONF_EXPECT_WC(a, c, 1, k.op, WcStatus::kRemoteOperationError, server);
      a.expect_quiet(k.name);
    });
  }
  w.run();

  BOOST_TEST(target.first_change(0, target.size()) == -1);
  BOOST_TEST(target.guards_intact());
}

}  // namespace locus::conformance
