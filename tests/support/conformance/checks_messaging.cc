// Conformance: SEND/RECV and WRITE_WITH_IMM, the carriers of every RPC and
// of Catfish's ring-buffer messaging. A receive completion must say who
// sent how many bytes; an over-long message must fail loudly on both sides;
// a SEND that finds no receive must wait (RNR retry) or fail as configured,
// never vanish.
#include <algorithm>

#include <boost/test/unit_test.hpp>

#include "tests/support/conformance/conformance_checks.h"
#include "tests/support/conformance/conformance_harness.h"

namespace locus::conformance {

void check_send_recv_delivers(const BackendUnderTest& b) {
  World w(b, "send_recv_delivers");
  const NodeId server = w.add_node("server0", true);
  const NodeId client = w.add_node("client0", false);
  GuardedBuffer& inbox = w.buffer(4096, 40);
  GuardedBuffer& outbox = w.buffer(4096, 41);
  const Region ir = w.register_region(server, inbox, kLocalOnly);
  const Region orr = w.register_region(client, outbox, kLocalOnly);
  Latch& posted = w.latch(server);
  constexpr uint32_t kRecvLength = 256, kMessage = 100;

  w.spawn(server, "receiver", [&](Actor& a) {
    CONF_EXPECT(a.probe, a.post_recv(recv_req(7, ir, 0, kRecvLength)).is_ok());
    posted.open();
    auto c = a.next("receive of a 100-byte SEND");
    CONF_EXPECT_WC(a, c, 7, Opcode::kRecv, WcStatus::kSuccess, client);
    if (c) {
      CONF_EXPECT_EQ(a.probe, c->byte_len, kMessage);
      CONF_EXPECT(a.probe, !c->has_imm);
    }
    const std::vector<std::byte> expected = pattern(41, 8, kMessage);
    CONF_EXPECT_BYTES(a.probe, inbox.data(), expected.data(), kMessage);
    CONF_EXPECT_UNTOUCHED(a.probe, inbox, kMessage, inbox.size());
    a.expect_quiet("receiver after one message");
  });
  w.spawn(client, "sender", [&](Actor& a) {
    CONF_EXPECT(a.probe, posted.wait(b.completion_timeout));
    auto c = a.exec(send_wr(1, server, orr, 8, kMessage), "SEND");
    CONF_EXPECT_WC(a, c, 1, Opcode::kSend, WcStatus::kSuccess, server);
    a.expect_quiet("sender after one message");
  });
  w.run();
  BOOST_TEST(inbox.guards_intact());
}

void check_send_zero_length_and_max_size(const BackendUnderTest& b) {
  World w(b, "send_zero_length_and_max_size");
  const NodeId server = w.add_node("server0", true);
  const NodeId client = w.add_node("client0", false);
  const TransportLimits limits = w.setup_env(client).transport->limits();
  BOOST_REQUIRE(limits.max_message_bytes > 0);
  // Far beyond any RPC locus sends; keeps a backend with a huge limit from
  // costing gigabytes here.
  const uint32_t big = std::min<uint32_t>(limits.max_message_bytes, 16u << 20);
  GuardedBuffer& inbox = w.buffer(64 + uint64_t{big}, 42);
  GuardedBuffer& outbox = w.buffer(big, 43);
  const Region ir = w.register_region(server, inbox, kLocalOnly);
  const Region orr = w.register_region(client, outbox, kLocalOnly);
  Latch& posted = w.latch(server);

  w.spawn(server, "receiver", [&](Actor& a) {
    const RecvRequest recvs[] = {recv_req(1, ir, 0, 64), recv_req(2, ir, 64, big)};
    CONF_EXPECT(a.probe, a.post_recv(recvs).is_ok());
    posted.open();
    auto c = a.next("receive of a zero-length SEND");
    CONF_EXPECT_WC(a, c, 1, Opcode::kRecv, WcStatus::kSuccess, client);
    if (c) CONF_EXPECT_EQ(a.probe, c->byte_len, 0u);
    c = a.next("receive of a max_message_bytes SEND");
    CONF_EXPECT_WC(a, c, 2, Opcode::kRecv, WcStatus::kSuccess, client);
    if (c) CONF_EXPECT_EQ(a.probe, c->byte_len, big);
    CONF_EXPECT_UNTOUCHED(a.probe, inbox, 0, 64);
    const std::vector<std::byte> expected = pattern(43, 0, big);
    CONF_EXPECT_BYTES(a.probe, inbox.data() + 64, expected.data(), big);
    a.expect_quiet("receiver");
  });
  w.spawn(client, "sender", [&](Actor& a) {
    CONF_EXPECT(a.probe, posted.wait(b.completion_timeout));
    const WorkRequest sends[] = {send_wr(1, server, orr, 0, 0), send_wr(2, server, orr, 0, big)};
    CONF_EXPECT(a.probe, a.post(sends).is_ok());
    auto c = a.next("zero-length SEND");
    CONF_EXPECT_WC(a, c, 1, Opcode::kSend, WcStatus::kSuccess, server);
    c = a.next("max_message_bytes SEND");
    CONF_EXPECT_WC(a, c, 2, Opcode::kSend, WcStatus::kSuccess, server);
    a.expect_quiet("sender");
  });
  w.run();
  BOOST_TEST(inbox.guards_intact());
}

void check_write_with_imm(const BackendUnderTest& b) {
  World w(b, "write_with_imm");
  const NodeId server = w.add_node("server0", true);
  const NodeId client = w.add_node("client0", false);
  GuardedBuffer& target = w.buffer(4096, 44);
  GuardedBuffer& inbox = w.buffer(256, 45);
  GuardedBuffer& outbox = w.buffer(4096, 46);
  const Region tr = w.register_region(server, target, kRemoteRead | kRemoteWrite);
  const Region ir = w.register_region(server, inbox, kLocalOnly);
  const Region orr = w.register_region(client, outbox, kLocalOnly);
  Latch& posted = w.latch(server);
  constexpr uint32_t kImm = 0xC0FFEE01, kLength = 300;
  constexpr uint64_t kOffset = 40;

  w.spawn(server, "receiver", [&](Actor& a) {
    CONF_EXPECT(a.probe, a.post_recv(recv_req(9, ir, 0, 256)).is_ok());
    posted.open();
    auto c = a.next("receive carrying the immediate");
    CONF_EXPECT_WC(a, c, 9, Opcode::kRecv, WcStatus::kSuccess, client);
    if (c) {
      CONF_EXPECT(a.probe, c->has_imm);
      CONF_EXPECT_EQ(a.probe, c->imm, kImm);
    }
    // The immediate is the "data is here" signal (Catfish's ring buffers),
    // so the written bytes must be visible once it is delivered.
    const std::vector<std::byte> expected = pattern(46, 0, kLength);
    CONF_EXPECT_BYTES(a.probe, target.data() + kOffset, expected.data(), kLength);
    // The data goes to the remote address, never into the receive buffer.
    CONF_EXPECT_UNTOUCHED(a.probe, inbox, 0, inbox.size());
    a.expect_quiet("receiver");
  });
  w.spawn(client, "writer", [&](Actor& a) {
    CONF_EXPECT(a.probe, posted.wait(b.completion_timeout));
    auto c = a.exec(write_imm_wr(1, remote_at(tr.remote(), kOffset), orr, 0, kLength, kImm), "WRITE_WITH_IMM");
    CONF_EXPECT_WC(a, c, 1, Opcode::kWriteWithImm, WcStatus::kSuccess, server);
    a.expect_quiet("writer");
  });
  w.run();

  BOOST_TEST(target.first_change(0, kOffset) == -1);
  BOOST_TEST(target.first_change(kOffset + kLength, target.size()) == -1);
  BOOST_TEST(target.guards_intact());
  BOOST_TEST(inbox.guards_intact());
}

void check_message_longer_than_receive(const BackendUnderTest& b) {
  World w(b, "message_longer_than_receive");
  const NodeId server = w.add_node("server0", true);
  const NodeId client = w.add_node("client0", false);
  // The receive buffer is the first 64 bytes of a larger registration, so
  // an overflowing copy would land in registered memory, not the guard.
  GuardedBuffer& inbox = w.buffer(1024, 47);
  GuardedBuffer& outbox = w.buffer(1024, 48);
  const Region ir = w.register_region(server, inbox, kLocalOnly);
  const Region orr = w.register_region(client, outbox, kLocalOnly);
  Latch& posted = w.latch(server);

  w.spawn(server, "receiver", [&](Actor& a) {
    CONF_EXPECT(a.probe, a.post_recv(recv_req(5, ir, 0, 64)).is_ok());
    posted.open();
    auto c = a.next("receive too small for the message");
    CONF_EXPECT_WC(a, c, 5, Opcode::kRecv, WcStatus::kLocalLengthError, client);
    CONF_EXPECT_UNTOUCHED(a.probe, inbox, 64, inbox.size());
    a.expect_quiet("receiver");
  });
  w.spawn(client, "sender", [&](Actor& a) {
    CONF_EXPECT(a.probe, posted.wait(b.completion_timeout));
    auto c = a.exec(send_wr(1, server, orr, 0, 128), "SEND of 128 bytes into a 64-byte receive");
    CONF_EXPECT_WC(a, c, 1, Opcode::kSend, WcStatus::kRemoteOperationError, server);
    a.expect_quiet("sender");
  });
  w.run();
  BOOST_TEST(inbox.guards_intact());
}

void check_send_without_receive(const BackendUnderTest& b) {
  World w(b, "send_without_receive");
  const NodeId server = w.add_node("server0", true);
  GuardedBuffer& target = w.buffer(256, 49);
  const Region tr = w.register_region(server, target, kRemoteRead | kRemoteWrite);
  const Nanos timeout = (b.rnr == RnrBehaviour::kRetry ? b.rnr_retry_budget : 0) + b.completion_timeout;

  // Nobody ever posts a receive on server0.
  for (Opcode op : {Opcode::kSend, Opcode::kWriteWithImm}) {
    const std::string name = op == Opcode::kSend ? "send" : "write_with_imm";
    const NodeId client = w.add_node("client_" + name, false);
    GuardedBuffer& outbox = w.buffer(64, 50);
    const Region orr = w.register_region(client, outbox, kLocalOnly);
    w.spawn(client, name, [&, op, orr, server, timeout](Actor& a) {
      const WorkRequest wr = op == Opcode::kSend ? send_wr(1, server, orr, 0, 16)
                                                 : write_imm_wr(1, remote_at(tr.remote(), 0), orr, 0, 16, 3);
      CONF_EXPECT(a.probe, a.post(wr).is_ok());
      auto c = a.next("request with no receive posted at the target", timeout);
      CONF_EXPECT_WC(a, c, 1, op, WcStatus::kRnrRetryExceeded, server);
      a.expect_quiet("after RNR failure");
    });
  }
  w.run();
}

void check_receive_posted_late(const BackendUnderTest& b) {
  World w(b, "receive_posted_late");
  const NodeId server = w.add_node("server0", true);
  const NodeId client = w.add_node("client0", false);
  GuardedBuffer& inbox = w.buffer(256, 51);
  GuardedBuffer& outbox = w.buffer(256, 52);
  const Region ir = w.register_region(server, inbox, kLocalOnly);
  const Region orr = w.register_region(client, outbox, kLocalOnly);
  Latch& sent = w.latch(client);      // the SEND has been posted
  Latch& settled = w.latch(client);   // the sender has its completion
  const bool retries = b.rnr == RnrBehaviour::kRetry;
  // Well inside the retry budget, so a backend that retries must catch it.
  const Nanos delay = retries ? b.rnr_retry_budget / 5 : 0;
  constexpr uint32_t kMessage = 48;

  w.spawn(server, "receiver", [&](Actor& a) {
    CONF_EXPECT(a.probe, sent.wait(b.completion_timeout));
    if (retries) {
      a.env.clock->sleep_for(delay);
    } else {
      // Post only after the SEND has failed: a message that failed with
      // RNR must not be delivered later.
      CONF_EXPECT(a.probe, settled.wait(b.completion_timeout));
    }
    CONF_EXPECT(a.probe, a.post_recv(recv_req(3, ir, 0, 256)).is_ok());
    if (retries) {
      auto c = a.next("late receive");
      CONF_EXPECT_WC(a, c, 3, Opcode::kRecv, WcStatus::kSuccess, client);
      if (c) CONF_EXPECT_EQ(a.probe, c->byte_len, kMessage);
      const std::vector<std::byte> expected = pattern(52, 0, kMessage);
      CONF_EXPECT_BYTES(a.probe, inbox.data(), expected.data(), kMessage);
    }
    a.expect_quiet("receiver");
  });
  w.spawn(client, "sender", [&](Actor& a) {
    CONF_EXPECT(a.probe, a.post(send_wr(1, server, orr, 0, kMessage)).is_ok());
    sent.open();
    auto c = a.next("SEND before any receive", b.rnr_retry_budget + b.completion_timeout);
    CONF_EXPECT_WC(a, c, 1, Opcode::kSend, retries ? WcStatus::kSuccess : WcStatus::kRnrRetryExceeded, server);
    settled.open();
    a.expect_quiet("sender");
  });
  w.run();
  if (!retries) BOOST_TEST(inbox.first_change(0, inbox.size()) == -1);
}

}  // namespace locus::conformance
