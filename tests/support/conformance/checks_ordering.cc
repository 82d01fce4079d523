// Conformance: requests to one peer execute and complete in posting order,
// and messages from one sender are received in send order. Cell's
// "write then bump the version" and the RPC layer's request streams are
// correct only under this ordering.
#include <algorithm>

#include <boost/test/unit_test.hpp>

#include "tests/support/conformance/conformance_checks.h"
#include "tests/support/conformance/conformance_harness.h"

namespace locus::conformance {

void check_writes_then_read_in_order(const BackendUnderTest& b) {
  World w(b, "writes_then_read_in_order");
  const NodeId server = w.add_node("server0", true);
  const NodeId client = w.add_node("client0", false);
  GuardedBuffer& target = w.buffer(256, 60);
  GuardedBuffer& local = w.buffer(8 * 1024, 61);
  const Region tr = w.register_region(server, target, kRemoteRead | kRemoteWrite | kRemoteAtomic);
  const Region lr = w.register_region(client, local, kLocalOnly);
  const TransportLimits limits = w.setup_env(client).transport->limits();
  BOOST_REQUIRE(limits.max_send_wr >= 6);
  // All writes, the CAS and the READs are outstanding at once.
  const uint64_t n = std::min<uint64_t>(128, limits.max_send_wr - 4);
  constexpr uint64_t kWord = 16, kCasWord = 64;
  constexpr uint64_t kResult = 7000, kCasResult = 7008;  // local slots for the READs

  w.spawn(client, "client0", [&](Actor& a) {
    for (uint64_t i = 0; i < n; ++i) local.store_u64(8 * i, i + 1);
    // Half posted one by one, half as one batch: order holds across post()
    // calls as well as within a batch.
    const uint64_t half = n / 2;
    for (uint64_t i = 0; i < half; ++i) {
      CONF_EXPECT(a.probe, a.post(write_wr(i + 1, remote_at(tr.remote(), kWord), lr, 8 * i, 8)).is_ok());
    }
    std::vector<WorkRequest> batch;
    for (uint64_t i = half; i < n; ++i) batch.push_back(write_wr(i + 1, remote_at(tr.remote(), kWord), lr, 8 * i, 8));
    // A CAS that can only succeed if the WRITE before it (of n into the
    // CAS word) has executed, then READs of both words.
    local.store_u64(6000, n);
    batch.push_back(write_wr(n + 1, remote_at(tr.remote(), kCasWord), lr, 6000, 8));
    batch.push_back(cas_wr(n + 2, remote_at(tr.remote(), kCasWord), lr, 6008, n, n + 100));
    batch.push_back(read_wr(n + 3, remote_at(tr.remote(), kWord), lr, kResult, 8));
    batch.push_back(read_wr(n + 4, remote_at(tr.remote(), kCasWord), lr, kCasResult, 8));
    CONF_EXPECT(a.probe, a.post(batch).is_ok());
    std::vector<std::optional<Completion>> got;
    while (got.size() < n + 4) {
      got.push_back(a.next("ordered completions"));
      if (!got.back()) return;
    }
    for (uint64_t i = 0; i < n + 4; ++i) {
      const Opcode op = i < n + 1 ? Opcode::kWrite : i == n + 1 ? Opcode::kCas : Opcode::kRead;
      CONF_EXPECT_WC(a, got[i], i + 1, op, WcStatus::kSuccess, server);
    }
    CONF_EXPECT_EQ(a.probe, local.load_u64(kResult), n);          // the last WRITE won
    CONF_EXPECT_EQ(a.probe, local.load_u64(6008), n);             // CAS saw the WRITE before it
    CONF_EXPECT_EQ(a.probe, local.load_u64(kCasResult), n + 100);  // READ saw the CAS before it
    a.expect_quiet("after ordered requests");
  });
  w.run();

  BOOST_TEST(target.load_u64(kWord) == n);
  BOOST_TEST(target.load_u64(kCasWord) == n + 100);
  BOOST_TEST(target.guards_intact());
}

void check_receives_in_send_order(const BackendUnderTest& b) {
  World w(b, "receives_in_send_order");
  const NodeId server = w.add_node("server0", true);
  const NodeId client = w.add_node("client0", false);
  const TransportLimits limits = w.setup_env(client).transport->limits();
  const uint64_t n = std::min<uint64_t>({64, limits.max_send_wr, limits.max_recv_wr});
  BOOST_REQUIRE(n >= 2);
  constexpr uint32_t kSlot = 64;
  GuardedBuffer& inbox = w.buffer(kSlot * n, 62);
  GuardedBuffer& outbox = w.buffer(kSlot * n, 63);
  const Region ir = w.register_region(server, inbox, kLocalOnly);
  const Region orr = w.register_region(client, outbox, kLocalOnly);
  Latch& posted = w.latch(server);

  w.spawn(server, "receiver", [&](Actor& a) {
    std::vector<RecvRequest> recvs;
    for (uint64_t i = 0; i < n; ++i) recvs.push_back(recv_req(1000 + i, ir, kSlot * i, kSlot));
    CONF_EXPECT(a.probe, a.post_recv(recvs).is_ok());
    posted.open();
    for (uint64_t i = 0; i < n; ++i) {
      auto c = a.next("receive in send order");
      CONF_EXPECT_WC(a, c, 1000 + i, Opcode::kRecv, WcStatus::kSuccess, client);
      if (!c) return;
      CONF_EXPECT_EQ(a.probe, c->byte_len, uint32_t{8 + static_cast<uint32_t>(i % 7)});
      // Receives are consumed oldest first, so message i lands in slot i.
      CONF_EXPECT_EQ(a.probe, inbox.load_u64(kSlot * i), 0xABC000 + i);
    }
    a.expect_quiet("receiver");
  });
  w.spawn(client, "sender", [&](Actor& a) {
    CONF_EXPECT(a.probe, posted.wait(b.completion_timeout));
    // Lengths vary so a message delivered into the wrong receive shows up
    // in byte_len as well as in the payload.
    std::vector<WorkRequest> sends;
    for (uint64_t i = 0; i < n; ++i) {
      outbox.store_u64(kSlot * i, 0xABC000 + i);
      sends.push_back(send_wr(i + 1, server, orr, kSlot * i, 8 + static_cast<uint32_t>(i % 7)));
    }
    // The first third one at a time, the rest as one batch.
    const uint64_t third = n / 3;
    for (uint64_t i = 0; i < third; ++i) CONF_EXPECT(a.probe, a.post(sends[i]).is_ok());
    CONF_EXPECT(a.probe, a.post(std::span<const WorkRequest>(sends).subspan(third)).is_ok());
    for (uint64_t i = 0; i < n; ++i) {
      auto c = a.next("SEND completion");
      CONF_EXPECT_WC(a, c, i + 1, Opcode::kSend, WcStatus::kSuccess, server);
      if (!c) return;
    }
    a.expect_quiet("sender");
  });
  w.run();
  BOOST_TEST(inbox.guards_intact());
}

}  // namespace locus::conformance
