// Conformance: the posting side. post() and post_recv() validate a whole
// batch (local buffers against this endpoint's registrations, size against
// the queue bounds) before posting any of it; unsignaled requests complete
// silently unless they fail; poll() and wait() report exactly what is
// there. "Nothing was posted" is shown by ordering, not by waiting: a
// later READ to the same peer completes first and sees untouched memory.
#include <algorithm>
#include <array>

#include <boost/test/unit_test.hpp>

#include "tests/support/conformance/conformance_checks.h"
#include "tests/support/conformance/conformance_harness.h"

namespace locus::conformance {

void check_bad_local_buffer_rejected(const BackendUnderTest& b) {
  World w(b, "bad_local_buffer_rejected");
  const NodeId server = w.add_node("server0", true);
  const NodeId client = w.add_node("client0", false);
  GuardedBuffer& target = w.buffer(1024, 90);
  GuardedBuffer& local = w.buffer(1024, 91);
  GuardedBuffer& other_local = w.buffer(1024, 92);
  GuardedBuffer& unregistered = w.buffer(1024, 93);
  const Region tr = w.register_region(server, target, kRemoteRead | kRemoteWrite | kRemoteAtomic);
  const Region lr = w.register_region(client, local, kLocalOnly);
  const Region lr2 = w.register_region(client, other_local, kLocalOnly);

  w.spawn(client, "client0", [&](Actor& a) {
    const RemoteAddr dst = remote_at(tr.remote(), 0);
    auto with_local = [](WorkRequest wr, void* addr, uint32_t length, uint32_t lkey) {
      wr.local = LocalBuf{addr, length, lkey};
      return wr;
    };
    uint32_t garbage_lkey = lr.lkey ^ 0x5A5A5A5Au;
    if (garbage_lkey == lr2.lkey || garbage_lkey == tr.lkey) garbage_lkey ^= 0x00100000u;
    const WorkRequest good = write_wr(1, dst, lr, 0, 64);
    struct Case {
      const char* name;
      std::vector<WorkRequest> batch;
    };
    const std::vector<Case> cases = {
        {"WRITE from unregistered memory", {with_local(good, unregistered.data(), 64, lr.lkey)}},
        {"WRITE with a garbage lkey", {with_local(good, local.data(), 64, garbage_lkey)}},
        {"WRITE with another region's lkey", {with_local(good, local.data(), 64, lr2.lkey)}},
        {"WRITE across the end of the local region", {with_local(good, local.data() + local.size() - 4, 8, lr.lkey)}},
        {"WRITE from memory registered by another node", {with_local(good, target.data(), 64, tr.lkey)}},
        {"READ into unregistered memory", {with_local(read_wr(2, dst, lr, 0, 64), unregistered.data(), 64, lr.lkey)}},
        {"CAS result into unregistered memory",
         {with_local(cas_wr(3, dst, lr, 0, 0, 1), unregistered.data(), 8, lr.lkey)}},
        {"SEND from unregistered memory",
         {with_local(send_wr(4, server, lr, 0, 16), unregistered.data(), 16, lr.lkey)}},
        {"a good WRITE batched with a bad one", {good, with_local(good, unregistered.data(), 64, lr.lkey)}},
        {"a bad WRITE batched before a good one", {with_local(good, local.data(), 64, garbage_lkey), good}},
    };
    for (const Case& k : cases) {
      const Status s = a.post(k.batch);
      a.probe.expect(!s.is_ok(), __FILE__, __LINE__, std::string("post() accepted ") + k.name);
    }
    // Had any of those been posted, its WRITE would execute (and complete)
    // before this READ to the same peer.
    auto c = a.exec(read_wr(100, dst, lr, 512, 64), "READ after the rejected batches");
    CONF_EXPECT_WC(a, c, 100, Opcode::kRead, WcStatus::kSuccess, server);
    const std::vector<std::byte> expected = pattern(90, 0, 64);
    CONF_EXPECT_BYTES(a.probe, local.data() + 512, expected.data(), 64);
    a.expect_quiet("after the rejected batches");
  });
  w.run();

  BOOST_TEST(target.first_change(0, target.size()) == -1);
  BOOST_TEST(unregistered.first_change(0, unregistered.size()) == -1);
  BOOST_TEST(target.guards_intact());
}

void check_bad_receive_buffer_rejected(const BackendUnderTest& b) {
  World w(b, "bad_receive_buffer_rejected");
  const NodeId server = w.add_node("server0", true);
  const NodeId client = w.add_node("client0", false);
  GuardedBuffer& inbox = w.buffer(1024, 94);
  GuardedBuffer& unregistered = w.buffer(1024, 95);
  GuardedBuffer& outbox = w.buffer(256, 96);
  const Region ir = w.register_region(server, inbox, kLocalOnly);
  const Region orr = w.register_region(client, outbox, kLocalOnly);
  const uint32_t max_recv_wr = w.setup_env(server).transport->limits().max_recv_wr;
  Latch& posted = w.latch(server);
  constexpr uint32_t kMessage = 16;

  w.spawn(server, "receiver", [&](Actor& a) {
    RecvRequest in_unregistered = recv_req(2, ir, 0, 64);
    in_unregistered.local.addr = unregistered.data();
    RecvRequest garbage_lkey = recv_req(3, ir, 0, 64);
    garbage_lkey.local.lkey = ir.lkey ^ 0x5A5A5A5Au;
    RecvRequest across_end = recv_req(4, ir, inbox.size() - 8, 64);
    const RecvRequest good_then_bad[] = {recv_req(1, ir, 0, 64), in_unregistered};
    a.probe.expect(!a.post_recv(good_then_bad).is_ok(), __FILE__, __LINE__,
                   "post_recv() accepted a batch with a receive in unregistered memory");
    CONF_EXPECT(a.probe, !a.post_recv(garbage_lkey).is_ok());
    CONF_EXPECT(a.probe, !a.post_recv(across_end).is_ok());
    // One more receive than the queue holds, all into the first slot.
    std::vector<RecvRequest> too_many(uint64_t{max_recv_wr} + 1, recv_req(5, ir, 0, 64));
    CONF_EXPECT(a.probe, !a.post_recv(too_many).is_ok());

    // Had any rejected receive been posted, the message would land in it
    // (receives are consumed oldest first), not in this one.
    CONF_EXPECT(a.probe, a.post_recv(recv_req(6, ir, 512, 64)).is_ok());
    posted.open();
    auto c = a.next("receive after the rejected batches");
    CONF_EXPECT_WC(a, c, 6, Opcode::kRecv, WcStatus::kSuccess, client);
    if (c) CONF_EXPECT_EQ(a.probe, c->byte_len, kMessage);
    const std::vector<std::byte> expected = pattern(96, 0, kMessage);
    CONF_EXPECT_BYTES(a.probe, inbox.data() + 512, expected.data(), kMessage);
    CONF_EXPECT_UNTOUCHED(a.probe, inbox, 0, 512);
    a.expect_quiet("receiver");
  });
  w.spawn(client, "sender", [&](Actor& a) {
    CONF_EXPECT(a.probe, posted.wait(b.completion_timeout));
    auto c = a.exec(send_wr(1, server, orr, 0, kMessage), "SEND");
    CONF_EXPECT_WC(a, c, 1, Opcode::kSend, WcStatus::kSuccess, server);
    a.expect_quiet("sender");
  });
  w.run();
  BOOST_TEST(unregistered.first_change(0, unregistered.size()) == -1);
}

void check_send_batch_bounds(const BackendUnderTest& b) {
  World w(b, "send_batch_bounds");
  const NodeId server = w.add_node("server0", true);
  const NodeId client = w.add_node("client0", false);
  const uint32_t max_send_wr = w.setup_env(client).transport->limits().max_send_wr;
  BOOST_REQUIRE(max_send_wr >= 1);
  GuardedBuffer& target = w.buffer(64, 97);
  GuardedBuffer& local = w.buffer(8 * (uint64_t{max_send_wr} + 2), 98);
  const Region tr = w.register_region(server, target, kRemoteRead | kRemoteWrite);
  const Region lr = w.register_region(client, local, kLocalOnly);

  w.spawn(client, "client0", [&](Actor& a) {
    const RemoteAddr dst = remote_at(tr.remote(), 0);
    std::vector<WorkRequest> batch;
    for (uint64_t i = 0; i <= max_send_wr; ++i) {
      local.store_u64(8 * i, 5000 + i);
      batch.push_back(write_wr(1 + i, dst, lr, 8 * i, 8));
    }
    CONF_EXPECT(a.probe, !a.post(batch).is_ok());
    auto c = a.exec(read_wr(10'000, dst, lr, 8 * (uint64_t{max_send_wr} + 1), 8), "READ after the rejected batch");
    CONF_EXPECT_WC(a, c, 10'000, Opcode::kRead, WcStatus::kSuccess, server);
    const std::vector<std::byte> initial = pattern(97, 0, 8);
    CONF_EXPECT_EQ(a.probe, local.load_u64(8 * (uint64_t{max_send_wr} + 1)), load_u64(initial.data()));
    // Exactly max_send_wr in one batch, with nothing outstanding, fits.
    batch.pop_back();
    CONF_EXPECT(a.probe, a.post(batch).is_ok());
    for (uint64_t i = 0; i < max_send_wr; ++i) {
      c = a.next("a WRITE of a full-queue batch");
      CONF_EXPECT_WC(a, c, 1 + i, Opcode::kWrite, WcStatus::kSuccess, server);
      if (!c) return;
    }
    a.expect_quiet("after the full-queue batch");
  });
  w.run();

  BOOST_TEST(target.load_u64(0) == 5000 + uint64_t{max_send_wr} - 1);
  BOOST_TEST(target.guards_intact());
}

void check_send_queue_reuse(const BackendUnderTest& b) {
  World w(b, "send_queue_reuse");
  const NodeId server = w.add_node("server0", true);
  const NodeId client = w.add_node("client0", false);
  const uint32_t max_send_wr = w.setup_env(client).transport->limits().max_send_wr;
  BOOST_REQUIRE(max_send_wr >= 1);
  GuardedBuffer& target = w.buffer(8 * uint64_t{max_send_wr}, 104);
  GuardedBuffer& local = w.buffer(8 * uint64_t{max_send_wr}, 105);
  const Region tr = w.register_region(server, target, kRemoteRead);
  const Region lr = w.register_region(client, local, kLocalOnly);
  constexpr int kRounds = 50;

  w.spawn(client, "client0", [&](Actor& a) {
    // Once its completion has been delivered, a request no longer counts
    // against max_send_wr: a client that keeps a full window in flight
    // (every selector's batch reader does) must be able to refill it at
    // once. Unsignaled requests are retired by the signaled one after them.
    std::vector<WorkRequest> batch;
    uint64_t wr_id = 0;
    for (int round = 0; round < kRounds; ++round) {
      const bool unsignaled_prefix = round % 2 == 1;
      batch.clear();
      for (uint64_t i = 0; i < max_send_wr; ++i) {
        batch.push_back(read_wr(++wr_id, remote_at(tr.remote(), 8 * i), lr, 8 * i, 8));
        batch.back().signaled = !unsignaled_prefix || i + 1 == max_send_wr;
      }
      const Status s = a.post(batch);
      if (!s.is_ok()) {
        CONF_FAIL(a.probe, "post() of a full window right after the previous window completed, round " +
                               std::to_string(round) + ": " + s.to_string());
        return;
      }
      const uint64_t expected = unsignaled_prefix ? 1 : max_send_wr;
      for (uint64_t i = 0; i < expected; ++i) {
        auto c = a.next("a READ of a full window");
        const uint64_t id = unsignaled_prefix ? wr_id : wr_id - max_send_wr + 1 + i;
        CONF_EXPECT_WC(a, c, id, Opcode::kRead, WcStatus::kSuccess, server);
        if (!c) return;
      }
    }
    const std::vector<std::byte> expected = pattern(104, 0, target.size());
    CONF_EXPECT_BYTES(a.probe, local.data(), expected.data(), target.size());
    a.expect_quiet("after full windows");
  });
  w.run();
}

void check_unsignaled_completions(const BackendUnderTest& b) {
  World w(b, "unsignaled_completions");
  const NodeId server = w.add_node("server0", true);
  GuardedBuffer& target = w.buffer(256, 99);
  const Region tr = w.register_region(server, target, kRemoteRead | kRemoteWrite | kRemoteAtomic);
  target.store_u64(8, 1000);
  const NodeId quiet_client = w.add_node("client_success", false);
  const NodeId error_client = w.add_node("client_error", false);
  GuardedBuffer& local = w.buffer(1024, 100);
  GuardedBuffer& error_local = w.buffer(64, 101);
  const Region lr = w.register_region(quiet_client, local, kLocalOnly);
  const Region er = w.register_region(error_client, error_local, kLocalOnly);
  const uint32_t max_send_wr = w.setup_env(quiet_client).transport->limits().max_send_wr;
  BOOST_REQUIRE(max_send_wr >= 3);
  const uint64_t k = std::min<uint64_t>(16, max_send_wr - 2);

  w.spawn(quiet_client, "unsignaled_successes", [&](Actor& a) {
    std::vector<WorkRequest> batch;
    for (uint64_t i = 0; i < k; ++i) {
      local.store_u64(8 * i, i + 1);
      batch.push_back(write_wr(i + 1, remote_at(tr.remote(), 0), lr, 8 * i, 8));
      batch.back().signaled = false;
    }
    batch.push_back(faa_wr(50, remote_at(tr.remote(), 8), lr, 512, 5));
    batch.back().signaled = false;
    batch.push_back(read_wr(100, remote_at(tr.remote(), 0), lr, 600, 16));
    CONF_EXPECT(a.probe, a.post(batch).is_ok());
    // The READ's completion is the first and only one.
    auto c = a.next("the signaled READ after unsignaled requests");
    CONF_EXPECT_WC(a, c, 100, Opcode::kRead, WcStatus::kSuccess, server);
    CONF_EXPECT_EQ(a.probe, local.load_u64(600), k);
    CONF_EXPECT_EQ(a.probe, local.load_u64(608), uint64_t{1005});
    // An unsignaled FAA still returns the old value into its buffer.
    CONF_EXPECT_EQ(a.probe, local.load_u64(512), uint64_t{1000});
    a.expect_quiet("after unsignaled successes");
  });
  w.spawn(error_client, "unsignaled_error", [&](Actor& a) {
    WorkRequest wr = write_wr(7, remote_at(tr.remote(), tr.length), er, 0, 8);
    wr.signaled = false;
    auto c = a.exec(wr, "unsignaled out-of-bounds WRITE");
    CONF_EXPECT_WC(a, c, 7, Opcode::kWrite, WcStatus::kRemoteAccessError, server);
    a.expect_quiet("after an unsignaled error");
  });
  w.run();

  BOOST_TEST(target.load_u64(0) == k);
  BOOST_TEST(target.load_u64(8) == 1005u);
  BOOST_TEST(target.first_change(16, target.size()) == -1);
  BOOST_TEST(target.guards_intact());
}

void check_poll_and_wait(const BackendUnderTest& b) {
  World w(b, "poll_and_wait");
  const NodeId server = w.add_node("server0", true);
  const NodeId client = w.add_node("client0", false);
  GuardedBuffer& target = w.buffer(256, 102);
  GuardedBuffer& local = w.buffer(1024, 103);
  const Region tr = w.register_region(server, target, kRemoteRead);
  const Region lr = w.register_region(client, local, kLocalOnly);
  const uint32_t max_send_wr = w.setup_env(client).transport->limits().max_send_wr;
  const uint64_t n = std::min<uint64_t>(8, max_send_wr);

  w.spawn(client, "client0", [&](Actor& a) {
    std::array<Completion, 3> out;
    Transport& t = a.transport();
    CONF_EXPECT_EQ(a.probe, t.poll(out), size_t{0});
    CONF_EXPECT_EQ(a.probe, t.wait(out, kMillisecond), size_t{0});

    // n completions drained through a 3-slot span: never more than fits,
    // all of them, in order.
    std::vector<WorkRequest> batch;
    for (uint64_t i = 0; i < n; ++i) batch.push_back(read_wr(i + 1, remote_at(tr.remote(), 8 * i), lr, 8 * i, 8));
    CONF_EXPECT(a.probe, a.post(batch).is_ok());
    std::vector<Completion> got;
    const Nanos deadline = a.env.clock->now() + b.completion_timeout;
    while (got.size() < n && a.env.clock->now() < deadline) {
      const size_t k = t.wait(out, deadline - a.env.clock->now());
      CONF_EXPECT(a.probe, k <= out.size());
      got.insert(got.end(), out.begin(), out.begin() + std::min(k, out.size()));
    }
    CONF_EXPECT_EQ(a.probe, got.size(), n);
    for (uint64_t i = 0; i < got.size(); ++i) {
      CONF_EXPECT_WC(a, std::optional<Completion>(got[i]), i + 1, Opcode::kRead, WcStatus::kSuccess, server);
    }
    CONF_EXPECT_EQ(a.probe, t.poll(out), size_t{0});
    CONF_EXPECT_EQ(a.probe, t.wait(out, kMillisecond), size_t{0});

    // poll() alone finds a completion, given time to pass between polls
    // (sleeping, not spinning, so simulated time advances too).
    CONF_EXPECT(a.probe, a.post(read_wr(42, remote_at(tr.remote(), 0), lr, 512, 8)).is_ok());
    size_t polled = 0;
    const Nanos poll_deadline = a.env.clock->now() + b.completion_timeout;
    while (polled == 0 && a.env.clock->now() < poll_deadline) {
      polled = t.poll(out);
      if (polled == 0) a.env.clock->sleep_for(50 * kMicrosecond);
    }
    CONF_EXPECT_EQ(a.probe, polled, size_t{1});
    if (polled >= 1) CONF_EXPECT_WC(a, std::optional<Completion>(out[0]), 42, Opcode::kRead, WcStatus::kSuccess, server);
    CONF_EXPECT_EQ(a.probe, load_u64(local.data() + 512), target.load_u64(0));
    a.expect_quiet("after poll and wait");
  });
  w.run();
}

}  // namespace locus::conformance
