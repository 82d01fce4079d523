// The linearizability checker's range scans over a multimap (core/check
// MultimapModel, kScan): hand-built histories in which a scan misses an
// acknowledged pair, returns a deleted one, returns pairs out of order or
// past its limit must be rejected, and their correct counterparts (and
// scans racing the writes they may or may not see) accepted. The NAM
// index's own histories with scans are in nam_gc_test.
#include <boost/test/unit_test.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/check/history.h"
#include "core/check/linearizability.h"
#include "core/check/models.h"

namespace locus::check {
namespace {

const CheckOptions kUntimed{.time_budget_ns = 0};

Operation write(OpKind kind, std::string key, uint64_t payload, Nanos t0, Nanos t1, Outcome outcome = Outcome::kOk) {
  Operation o;
  o.kind = kind;
  o.key = std::move(key);
  o.value = payload;
  o.invoke_ns = t0;
  o.response_ns = t1;
  o.outcome = outcome;
  return o;
}

// A scan from `from` (up to but not including `end` when not empty) that
// returned `pairs`.
Operation scan(std::string from, std::string end, uint32_t limit, std::vector<std::pair<std::string, uint64_t>> pairs,
               Nanos t0, Nanos t1) {
  Operation o = write(OpKind::kScan, std::move(from), 0, t0, t1);
  o.bounded = !end.empty();
  o.end_key = std::move(end);
  o.limit = limit;
  for (auto& [k, p] : pairs) {
    o.result_keys.push_back(k);
    o.result_ids.push_back(p);
  }
  return o;
}

bool linearizable(const History& h) {
  const CheckResult r = check_history(MultimapModel(), h, kUntimed);
  BOOST_TEST_MESSAGE(r.report(h));
  BOOST_REQUIRE(r.verdict != Verdict::kUnknown);
  return r.linearizable();
}

// Three keys with two payloads on k02, all acknowledged before time 10.
History loaded() {
  return {write(OpKind::kInsert, "k01", 1, 0, 10), write(OpKind::kInsert, "k02", 5, 0, 10),
          write(OpKind::kInsert, "k02", 3, 0, 10), write(OpKind::kInsert, "k03", 7, 0, 10)};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(multimap_scan)

BOOST_AUTO_TEST_CASE(a_scan_returns_exactly_the_range) {
  History h = loaded();
  h.push_back(scan("k02", "", 0, {{"k02", 3}, {"k02", 5}, {"k03", 7}}, 20, 30));
  BOOST_TEST(linearizable(h));
  h.back() = scan("k02", "", 0, {{"k02", 3}, {"k03", 7}}, 20, 30);  // missed an acknowledged pair
  BOOST_TEST(!linearizable(h));
  h.back() = scan("k02", "", 0, {{"k02", 5}, {"k02", 3}, {"k03", 7}}, 20, 30);  // out of order
  BOOST_TEST(!linearizable(h));
  h.back() = scan("k02", "", 0, {{"k02", 3}, {"k02", 5}, {"k02", 5}, {"k03", 7}}, 20, 30);  // one twice
  BOOST_TEST(!linearizable(h));
}

BOOST_AUTO_TEST_CASE(bounds_and_limits) {
  History h = loaded();
  h.push_back(scan("k01", "k03", 0, {{"k01", 1}, {"k02", 3}, {"k02", 5}}, 20, 30));
  BOOST_TEST(linearizable(h));
  h.back() = scan("k01", "k03", 0, {{"k01", 1}, {"k02", 3}, {"k02", 5}, {"k03", 7}}, 20, 30);  // past its end
  BOOST_TEST(!linearizable(h));
  h.back() = scan("k02", "", 1, {{"k02", 3}}, 20, 30);
  BOOST_TEST(linearizable(h));
  h.back() = scan("k02", "", 1, {{"k02", 5}}, 20, 30);  // not the first pair
  BOOST_TEST(!linearizable(h));
  h.back() = scan("k02", "", 2, {{"k02", 3}}, 20, 30);  // stopped short of its limit
  BOOST_TEST(!linearizable(h));
}

BOOST_AUTO_TEST_CASE(a_deleted_pair_must_not_come_back) {
  History h = loaded();
  h.push_back(write(OpKind::kDelete, "k02", 3, 20, 30));
  h.push_back(scan("k00", "", 0, {{"k01", 1}, {"k02", 5}, {"k03", 7}}, 40, 50));
  BOOST_TEST(linearizable(h));
  h.back() = scan("k00", "", 0, {{"k01", 1}, {"k02", 3}, {"k02", 5}, {"k03", 7}}, 40, 50);
  BOOST_TEST(!linearizable(h));
}

BOOST_AUTO_TEST_CASE(a_scan_racing_writes_sees_one_instant) {
  History h = loaded();
  h.push_back(write(OpKind::kInsert, "k04", 9, 20, 60));
  h.push_back(write(OpKind::kDelete, "k01", 1, 20, 60));
  // Concurrent with both: before, after or between them.
  for (auto pairs : std::vector<std::vector<std::pair<std::string, uint64_t>>>{
           {{"k01", 1}, {"k03", 7}}, {{"k03", 7}, {"k04", 9}}, {{"k01", 1}, {"k03", 7}, {"k04", 9}}, {{"k03", 7}}}) {
    History racing = h;
    racing.push_back(scan("k01", "", 0, {}, 30, 40));
    racing.back().result_keys.clear();
    for (auto& [k, p] : pairs) {
      if (k == "k03") {  // k02's pairs are always there
        racing.back().result_keys.insert(racing.back().result_keys.end(), {"k02", "k02"});
        racing.back().result_ids.insert(racing.back().result_ids.end(), {3, 5});
      }
      racing.back().result_keys.push_back(k);
      racing.back().result_ids.push_back(p);
    }
    BOOST_TEST(linearizable(racing));
  }
  // Two scans, one after the other, that saw the insert and then not.
  History back = h;
  back.push_back(scan("k03", "", 0, {{"k03", 7}, {"k04", 9}}, 30, 35));
  back.push_back(scan("k03", "", 0, {{"k03", 7}}, 40, 45));
  BOOST_TEST(!linearizable(back));
}

BOOST_AUTO_TEST_CASE(histories_without_scans_keep_per_key_partitions) {
  History h = loaded();
  h.push_back(write(OpKind::kLookup, "k02", 0, 20, 30));
  h.back().result_ids = {5, 3};
  const CheckResult r = check_history(MultimapModel(), h, kUntimed);
  BOOST_TEST(r.linearizable());
  BOOST_TEST(r.partitions == 3u);
  h.push_back(scan("k02", "k03", 0, {{"k02", 3}, {"k02", 5}}, 20, 30));
  // The scan joins k02 and k03 (its end bound counts, conservatively).
  BOOST_TEST(check_history(MultimapModel(), h, kUntimed).partitions == 2u);
  h.push_back(scan("k01", "", 0, {{"k01", 1}, {"k02", 3}, {"k02", 5}, {"k03", 7}}, 20, 30));
  BOOST_TEST(check_history(MultimapModel(), h, kUntimed).partitions == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace locus::check
