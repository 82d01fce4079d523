// Conformance: READ and WRITE move exactly the bytes asked for, of any
// length from zero to a megabyte, at any offset up to the last byte of a
// region, and nothing else. Index nodes are read at unaligned offsets and
// right up to the ends of their pools, so all of these are load-bearing.
#include <boost/test/unit_test.hpp>

#include "tests/support/conformance/conformance_checks.h"
#include "tests/support/conformance/conformance_harness.h"

namespace locus::conformance {

void check_write_then_read_exact(const BackendUnderTest& b) {
  World w(b, "write_then_read_exact");
  const NodeId server = w.add_node("server0", true);
  const NodeId client = w.add_node("client0", false);
  GuardedBuffer& target = w.buffer(16 * 1024, 1);
  GuardedBuffer& local = w.buffer(16 * 1024, 2);
  const Region tr = w.register_region(server, target, kRemoteRead | kRemoteWrite);
  const Region lr = w.register_region(client, local, kLocalOnly);
  // An odd offset and length: nothing may assume word alignment.
  constexpr uint64_t kOffset = 101;
  constexpr uint32_t kLength = 4093;
  constexpr uint64_t kReadBack = 8192;  // where in `local` the READ lands

  w.spawn(client, "client0", [&](Actor& a) {
    auto c = a.exec(write_wr(1, remote_at(tr.remote(), kOffset), lr, 0, kLength), "WRITE");
    CONF_EXPECT_WC(a, c, 1, Opcode::kWrite, WcStatus::kSuccess, server);
    // Read a little either side of what was written: the WRITE must not
    // have spilled.
    c = a.exec(read_wr(2, remote_at(tr.remote(), kOffset - 5), lr, kReadBack, kLength + 10), "READ");
    CONF_EXPECT_WC(a, c, 2, Opcode::kRead, WcStatus::kSuccess, server);
    std::vector<std::byte> expected = pattern(1, kOffset - 5, 5);
    const std::vector<std::byte> written = pattern(2, 0, kLength);
    expected.insert(expected.end(), written.begin(), written.end());
    const std::vector<std::byte> after = pattern(1, kOffset + kLength, 5);
    expected.insert(expected.end(), after.begin(), after.end());
    CONF_EXPECT_BYTES(a.probe, local.data() + kReadBack, expected.data(), expected.size());
    // The READ wrote nothing outside its local buffer.
    CONF_EXPECT_UNTOUCHED(a.probe, local, kLength, kReadBack);
    CONF_EXPECT_UNTOUCHED(a.probe, local, kReadBack + kLength + 10, local.size());
    a.expect_quiet("after WRITE and READ");
  });
  w.run();

  const std::vector<std::byte> written = pattern(2, 0, kLength);
  BOOST_TEST(first_mismatch(target.data() + kOffset, written.data(), kLength) == -1);
  BOOST_TEST(target.first_change(0, kOffset) == -1);
  BOOST_TEST(target.first_change(kOffset + kLength, target.size()) == -1);
  BOOST_TEST(target.guards_intact());
  BOOST_TEST(local.guards_intact());
}

void check_zero_length_read_write(const BackendUnderTest& b) {
  World w(b, "zero_length_read_write");
  const NodeId server = w.add_node("server0", true);
  const NodeId client = w.add_node("client0", false);
  GuardedBuffer& target = w.buffer(1024, 3);
  GuardedBuffer& local = w.buffer(1024, 4);
  const Region tr = w.register_region(server, target, kRemoteRead | kRemoteWrite);
  const Region lr = w.register_region(client, local, kLocalOnly);

  w.spawn(client, "client0", [&](Actor& a) {
    auto c = a.exec(write_wr(1, remote_at(tr.remote(), 8), lr, 16, 0), "zero-length WRITE");
    CONF_EXPECT_WC(a, c, 1, Opcode::kWrite, WcStatus::kSuccess, server);
    c = a.exec(read_wr(2, remote_at(tr.remote(), 8), lr, 16, 0), "zero-length READ");
    CONF_EXPECT_WC(a, c, 2, Opcode::kRead, WcStatus::kSuccess, server);
    // [length, length + 0) does not leave the region.
    c = a.exec(read_wr(3, remote_at(tr.remote(), tr.length), lr, 16, 0), "zero-length READ at the end");
    CONF_EXPECT_WC(a, c, 3, Opcode::kRead, WcStatus::kSuccess, server);
    c = a.exec(write_wr(4, remote_at(tr.remote(), tr.length), lr, 16, 0), "zero-length WRITE at the end");
    CONF_EXPECT_WC(a, c, 4, Opcode::kWrite, WcStatus::kSuccess, server);
    a.expect_quiet("after zero-length transfers");
  });
  w.run();

  BOOST_TEST(target.first_change(0, target.size()) == -1);
  BOOST_TEST(local.first_change(0, local.size()) == -1);
  BOOST_TEST(target.guards_intact());
  BOOST_TEST(local.guards_intact());
}

void check_large_transfer_exact(const BackendUnderTest& b) {
  World w(b, "large_transfer_exact");
  constexpr uint32_t kLength = 1u << 20;
  const NodeId server = w.add_node("server0", true);
  const NodeId client = w.add_node("client0", false);
  GuardedBuffer& target = w.buffer(kLength, 5);
  GuardedBuffer& local = w.buffer(2 * uint64_t{kLength}, 6);
  const Region tr = w.register_region(server, target, kRemoteRead | kRemoteWrite);
  const Region lr = w.register_region(client, local, kLocalOnly);

  w.spawn(client, "client0", [&](Actor& a) {
    // READ the untouched region first, then overwrite it whole and READ it
    // back: both directions at full size, ending on the region's last byte.
    auto c = a.exec(read_wr(1, remote_at(tr.remote(), 0), lr, kLength, kLength), "1 MiB READ");
    CONF_EXPECT_WC(a, c, 1, Opcode::kRead, WcStatus::kSuccess, server);
    std::vector<std::byte> expected = pattern(5, 0, kLength);
    CONF_EXPECT_BYTES(a.probe, local.data() + kLength, expected.data(), kLength);

    c = a.exec(write_wr(2, remote_at(tr.remote(), 0), lr, 0, kLength), "1 MiB WRITE");
    CONF_EXPECT_WC(a, c, 2, Opcode::kWrite, WcStatus::kSuccess, server);
    c = a.exec(read_wr(3, remote_at(tr.remote(), 0), lr, kLength, kLength), "1 MiB READ back");
    CONF_EXPECT_WC(a, c, 3, Opcode::kRead, WcStatus::kSuccess, server);
    expected = pattern(6, 0, kLength);
    CONF_EXPECT_BYTES(a.probe, local.data() + kLength, expected.data(), kLength);
    a.expect_quiet("after 1 MiB transfers");
  });
  w.run();

  const std::vector<std::byte> expected = pattern(6, 0, kLength);
  BOOST_TEST(first_mismatch(target.data(), expected.data(), kLength) == -1);
  BOOST_TEST(target.guards_intact());
  BOOST_TEST(local.guards_intact());
}

void check_end_of_region(const BackendUnderTest& b) {
  World w(b, "end_of_region");
  // The region sits inside a larger buffer, so bytes just past its end are
  // ordinary memory a sloppy bounds check would happily write.
  constexpr uint64_t kBefore = 256, kLength = 4000, kAfter = 256;
  const NodeId server = w.add_node("server0", true);
  const NodeId client = w.add_node("client0", false);
  GuardedBuffer& target = w.buffer(kBefore + kLength + kAfter, 7);
  GuardedBuffer& local = w.buffer(8192, 8);
  const Region tr = w.register_region(server, target, kRemoteRead | kRemoteWrite, kBefore, kLength);
  const Region lr = w.register_region(client, local, kLocalOnly);

  w.spawn(client, "client0", [&](Actor& a) {
    auto c = a.exec(write_wr(1, remote_at(tr.remote(), kLength - 8), lr, 0, 8), "WRITE of the last 8 bytes");
    CONF_EXPECT_WC(a, c, 1, Opcode::kWrite, WcStatus::kSuccess, server);
    c = a.exec(write_wr(2, remote_at(tr.remote(), kLength - 1), lr, 100, 1), "WRITE of the last byte");
    CONF_EXPECT_WC(a, c, 2, Opcode::kWrite, WcStatus::kSuccess, server);
    c = a.exec(read_wr(3, remote_at(tr.remote(), kLength - 1), lr, 4000, 1), "READ of the last byte");
    CONF_EXPECT_WC(a, c, 3, Opcode::kRead, WcStatus::kSuccess, server);
    CONF_EXPECT_EQ(a.probe, local.data()[4000], GuardedBuffer::pattern_byte(8, 100));
    c = a.exec(read_wr(4, remote_at(tr.remote(), 0), lr, 4096, kLength), "READ of the whole region");
    CONF_EXPECT_WC(a, c, 4, Opcode::kRead, WcStatus::kSuccess, server);
    std::vector<std::byte> expected = pattern(7, kBefore, kLength);
    for (uint64_t i = 0; i < 7; ++i) expected[kLength - 8 + i] = GuardedBuffer::pattern_byte(8, i);
    expected[kLength - 1] = GuardedBuffer::pattern_byte(8, 100);
    CONF_EXPECT_BYTES(a.probe, local.data() + 4096, expected.data(), kLength);
    a.expect_quiet("after end-of-region transfers");
  });
  w.run();

  BOOST_TEST(target.first_change(0, kBefore + kLength - 8) == -1);
  BOOST_TEST(target.first_change(kBefore + kLength, target.size()) == -1);
  BOOST_TEST(target.guards_intact());
}

}  // namespace locus::conformance
