// BackoffSelector (Catfish Algorithm 1) against scripted heartbeats: a
// busy heartbeat offloads n requests with n in [(r-1)N, rN); consecutive
// busy heartbeats raise r; a quiet one resets it; stale (same sequence) and
// early (within Inv) heartbeats are ignored; below T the server side is
// chosen. Also reading the 16-byte slot, attached through the generic
// Selector interface as CatfishClient does, and configuration by name.
#include <boost/test/unit_test.hpp>

#include <set>

#include "core/common/random.h"
#include "core/selector/backoff_selector.h"
#include "core/selector/selector_config.h"

namespace locus::selector {
namespace {

constexpr NodeId kServer = 2;
constexpr uint32_t kN = 8;

BackoffConfig config() {
  BackoffConfig c;
  c.n = kN;
  c.threshold = 0.95;
  c.interval_ns = 10 * kMillisecond;
  return c;
}

HeartbeatRecord beat(uint64_t sequence, double utilisation) { return HeartbeatRecord{utilisation, sequence}; }

// Choices until the first server-side one, which is not counted.
uint64_t offloads_until_server(BackoffSelector& s, Nanos now) {
  uint64_t n = 0;
  while (s.choose(kServer, now) == Path::kClient) ++n;
  return n;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(backoff_selector)

BOOST_AUTO_TEST_CASE(quiet_server_keeps_the_server_side) {
  Random rng(1);
  BackoffSelector s(config(), rng);
  Nanos now = 0;
  for (uint64_t seq = 1; seq <= 50; ++seq) {
    now += 10 * kMillisecond;
    s.offer_heartbeat(kServer, beat(seq, 0.95), now);  // at T is not above T
    for (int i = 0; i < 20; ++i) BOOST_TEST(s.choose(kServer, now) == Path::kServer);
  }
  BOOST_TEST(s.state(kServer)->r_busy == 0u);
  BOOST_TEST(s.backoff_stats().heartbeats_taken == 50u);
  BOOST_TEST(s.backoff_stats().busy_heartbeats == 0u);
}

BOOST_AUTO_TEST_CASE(busy_heartbeat_offloads_within_first_window) {
  std::set<uint64_t> seen;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    Random rng(seed);
    BackoffSelector s(config(), rng);
    s.offer_heartbeat(kServer, beat(1, 0.99), 0);
    BOOST_TEST(s.state(kServer)->r_busy == 1u);
    const uint64_t n = offloads_until_server(s, 0);
    BOOST_TEST(n < kN);
    seen.insert(n);
  }
  BOOST_TEST(seen.size() == kN);  // every value of [0, N) occurs
}

BOOST_AUTO_TEST_CASE(consecutive_busy_rounds_grow_r_busy) {
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    Random rng(seed);
    BackoffSelector s(config(), rng);
    Nanos now = 0;
    for (uint32_t r = 1; r <= 5; ++r) {
      s.offer_heartbeat(kServer, beat(r, 0.99), now);
      BOOST_TEST(s.state(kServer)->r_busy == r);
      // The new count replaces what was pending: it lies in [(r-1)N, rN).
      const uint64_t pending = s.state(kServer)->r_off;
      BOOST_TEST(pending >= (r - 1) * kN);
      BOOST_TEST(pending < r * kN);
      // Use up part of the window before the next heartbeat.
      if (s.choose(kServer, now) != (pending > 0 ? Path::kClient : Path::kServer)) BOOST_FAIL("choice");
      now += 10 * kMillisecond;
    }
    const uint64_t n = offloads_until_server(s, now);
    BOOST_TEST(n >= 4 * kN - 1);
    BOOST_TEST(n < 5 * kN);
  }
}

BOOST_AUTO_TEST_CASE(quiet_heartbeat_resets_r_busy) {
  Random rng(7);
  BackoffSelector s(config(), rng);
  s.offer_heartbeat(kServer, beat(1, 1.0), 0);
  s.offer_heartbeat(kServer, beat(2, 1.0), 10 * kMillisecond);
  s.offer_heartbeat(kServer, beat(3, 1.0), 20 * kMillisecond);
  BOOST_TEST(s.state(kServer)->r_busy == 3u);
  const uint64_t pending = s.state(kServer)->r_off;
  s.offer_heartbeat(kServer, beat(4, 0.2), 30 * kMillisecond);
  BOOST_TEST(s.state(kServer)->r_busy == 0u);
  // The pending offloads still run out (clients return at different times).
  BOOST_TEST(s.state(kServer)->r_off == pending);
  BOOST_TEST(offloads_until_server(s, 30 * kMillisecond) == pending);
  // Busy again: back to the first window.
  s.offer_heartbeat(kServer, beat(5, 0.99), 40 * kMillisecond);
  BOOST_TEST(s.state(kServer)->r_busy == 1u);
  BOOST_TEST(s.state(kServer)->r_off < kN);
}

BOOST_AUTO_TEST_CASE(stale_and_early_heartbeats_are_ignored) {
  Random rng(3);
  BackoffSelector s(config(), rng);
  s.offer_heartbeat(kServer, beat(0, 1.0), 0);  // nothing written yet
  BOOST_TEST(s.state(kServer)->r_busy == 0u);
  s.offer_heartbeat(kServer, beat(1, 1.0), 0);
  BOOST_TEST(s.state(kServer)->r_busy == 1u);
  // The same heartbeat read again changes nothing.
  for (int i = 1; i <= 10; ++i) s.offer_heartbeat(kServer, beat(1, 1.0), i * kMillisecond / 2);
  BOOST_TEST(s.state(kServer)->r_busy == 1u);
  BOOST_TEST(s.backoff_stats().stale_heartbeats == 11u);
  // A new one within Inv of the last taken waits for its turn.
  s.offer_heartbeat(kServer, beat(2, 1.0), 6 * kMillisecond);
  BOOST_TEST(s.state(kServer)->r_busy == 1u);
  BOOST_TEST(s.backoff_stats().early_heartbeats == 1u);
  s.offer_heartbeat(kServer, beat(2, 1.0), 10 * kMillisecond);
  BOOST_TEST(s.state(kServer)->r_busy == 2u);
  BOOST_TEST(s.backoff_stats().heartbeats_taken == 2u);
}

BOOST_AUTO_TEST_CASE(reads_the_attached_slot) {
  Random rng(5);
  BackoffConfig c = config();
  c.interval_ns = 0;
  BackoffSelector s(c, rng);
  alignas(8) std::byte slot[kHeartbeatSlotBytes] = {};
  s.attach_server_feedback(kServer, slot);
  BOOST_TEST(s.choose(kServer, 0) == Path::kServer);  // no heartbeat yet
  write_heartbeat(slot, beat(1, 0.3));
  BOOST_TEST(s.choose(kServer, 1) == Path::kServer);  // below T: server side
  BOOST_TEST(read_heartbeat(slot).utilisation == 0.3);
  write_heartbeat(slot, beat(2, 0.99));
  uint64_t offloaded = 0;
  for (int i = 0; i < 100; ++i) offloaded += s.choose(kServer, 2) == Path::kClient;
  BOOST_TEST(offloaded < kN);
  BOOST_TEST(s.backoff_stats().heartbeats_taken == 2u);
  BOOST_TEST(s.stats().client_choices == offloaded);
}

// What CatfishClient relies on: it hands the heartbeat slot to whatever
// selector it was given, through the generic interface, without knowing
// its kind.
BOOST_AUTO_TEST_CASE(takes_server_feedback_through_the_generic_interface) {
  Random rng(6);
  BackoffConfig c = config();
  c.interval_ns = 0;
  BackoffSelector backoff(c, rng);
  Selector& s = backoff;
  alignas(8) std::byte slot[kHeartbeatSlotBytes] = {};
  s.attach_server_feedback(kServer, slot);
  BOOST_TEST(s.choose(kServer, 0) == Path::kServer);  // no heartbeat yet
  write_heartbeat(slot, beat(1, 0.99));
  (void)s.choose(kServer, 1);  // r_busy 1 offloads [0, N) requests: perhaps none
  write_heartbeat(slot, beat(2, 0.99));
  // r_busy 2 offloads [N, 2N), at least one: this choice is client-side.
  BOOST_TEST(s.choose(kServer, 2) == Path::kClient);
  BOOST_TEST(backoff.state(kServer)->r_busy == 2u);
  BOOST_TEST(backoff.backoff_stats().heartbeats_taken == 2u);
}

BOOST_AUTO_TEST_CASE(configured_by_name) {
  SelectorConfig c;
  BOOST_TEST(set_selector_property(c, "kind", "backoff").is_ok());
  BOOST_TEST(set_selector_property(c, "backoff.n", "16").is_ok());
  BOOST_TEST(set_selector_property(c, "backoff.threshold", "0.8").is_ok());
  BOOST_TEST(set_selector_property(c, "backoff.interval_ms", "5").is_ok());
  BOOST_TEST(c.backoff.n == 16u);
  BOOST_TEST(c.backoff.threshold == 0.8);
  BOOST_TEST(c.backoff.interval_ns == 5 * kMillisecond);
  BOOST_TEST(selector_kind_name(*parse_selector_kind("backoff")) == "backoff");
  Random rng(1);
  auto sel = make_selector(c, rng);
  BOOST_REQUIRE(sel.is_ok());
  BOOST_TEST((*sel)->name() == "backoff");
  BOOST_TEST(set_selector_property(c, "backoff.n", "many").code() == StatusCode::kInvalidArgument);
  c.backoff.n = 0;
  BOOST_TEST(c.validate().code() == StatusCode::kInvalidArgument);
  c.backoff.n = 8;
  c.backoff.threshold = 1.5;
  BOOST_TEST(c.validate().code() == StatusCode::kInvalidArgument);
  // The other kinds still parse.
  for (const char* k : {"server_only", "client_only", "fixed_ratio", "jsq", "latency_window"}) {
    BOOST_TEST(parse_selector_kind(k).is_ok());
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace locus::selector
