// The shared torn-read policy (core/common/torn_read.h) on its own: the
// pauses it asks for and the budget it allows, against a clock that only
// records the sleeps, so the sequence is checked exactly and without time.
// Cell, Catfish and Pilaf all retry through it; their results depend on
// this sequence being no pause, then 1 us doubling to 1 ms, for 64 reads.
#include <boost/test/unit_test.hpp>

#include <vector>

#include "core/common/torn_read.h"

namespace locus {
namespace {

// Stands in for the Env's Clock: all TornRetry needs is sleep_for.
struct RecordingClock {
  void sleep_for(Nanos duration) { sleeps_ns.push_back(duration); }
  std::vector<Nanos> sleeps_ns;
};

// Reads an object that is always torn, as a client would; returns the reads.
uint32_t read_always_torn(const TornReadPolicy& policy, RecordingClock& clock) {
  TornRetry retry(policy, clock);
  uint32_t reads = 0;
  do {
    ++reads;
  } while (retry.again());
  BOOST_TEST(retry.torn_in_a_row() == reads);
  return reads;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(torn_read_policy)

BOOST_AUTO_TEST_CASE(defaults_are_what_cell_and_catfish_used) {
  const TornReadPolicy p;
  BOOST_TEST(p.max_attempts == 64u);
  BOOST_TEST(p.backoff_base_ns == 1 * kMicrosecond);
  BOOST_TEST(p.backoff_max_ns == 1 * kMillisecond);
}

BOOST_AUTO_TEST_CASE(pauses_none_after_the_first_then_double_to_the_cap) {
  const TornReadPolicy p;
  BOOST_TEST(p.pause_ns(1) == 0);
  Nanos expect = 1 * kMicrosecond;
  for (uint32_t torn = 2; torn <= 11; ++torn, expect *= 2) BOOST_TEST(p.pause_ns(torn) == expect);
  BOOST_TEST(p.pause_ns(11) == 512 * kMicrosecond);
  BOOST_TEST(p.pause_ns(12) == 1 * kMillisecond);  // 1024 us, capped
  BOOST_TEST(p.pause_ns(64) == 1 * kMillisecond);
  BOOST_TEST(p.pause_ns(1'000'000) == 1 * kMillisecond);  // no overflow past the cap
}

BOOST_AUTO_TEST_CASE(retry_reads_max_attempts_times_with_the_policy_pauses) {
  const TornReadPolicy p;
  RecordingClock clock;
  BOOST_TEST(read_always_torn(p, clock) == 64u);
  // No sleep after the first torn copy, none after the last (the caller
  // gives up instead): one sleep for each of torn copies 2..63.
  std::vector<Nanos> expect;
  for (uint32_t torn = 2; torn < 64; ++torn) expect.push_back(p.pause_ns(torn));
  BOOST_TEST(clock.sleeps_ns == expect, boost::test_tools::per_element());
  BOOST_TEST(clock.sleeps_ns.front() == 1 * kMicrosecond);
  BOOST_TEST(clock.sleeps_ns.back() == 1 * kMillisecond);
}

BOOST_AUTO_TEST_CASE(a_custom_policy_is_followed) {
  const TornReadPolicy p{.max_attempts = 5, .backoff_base_ns = 10, .backoff_max_ns = 25};
  RecordingClock clock;
  BOOST_TEST(read_always_torn(p, clock) == 5u);
  BOOST_TEST(clock.sleeps_ns == (std::vector<Nanos>{10, 20, 25}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(every_budget_allows_one_read) {
  RecordingClock clock;
  BOOST_TEST(read_always_torn(TornReadPolicy{.max_attempts = 1}, clock) == 1u);
  BOOST_TEST(read_always_torn(TornReadPolicy{.max_attempts = 0}, clock) == 1u);
  BOOST_TEST(clock.sleeps_ns.empty());
}

BOOST_AUTO_TEST_CASE(back_off_counts_kept_by_the_caller) {
  // Catfish keeps one count per node of a batch and calls the policy directly.
  const TornReadPolicy p;
  RecordingClock clock;
  p.back_off(clock, 1);
  BOOST_TEST(clock.sleeps_ns.empty());
  p.back_off(clock, 3);
  BOOST_TEST(clock.sleeps_ns == (std::vector<Nanos>{2 * kMicrosecond}), boost::test_tools::per_element());
  BOOST_TEST(p.allows_another(63));
  BOOST_TEST(!p.allows_another(64));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace locus
