// Tests for core/check: the history recorder and the linearizability
// checker with each model. The register and key-value cases are those
// Porcupine's and Knossos's suites describe (the MIT 6.824 quiz histories,
// zero-length operations, stale reads, writes that timed out and may or
// may not have happened, concurrent writes read in two orders); the model
// cases check that each index's typical violation is caught (a scan, a
// lookup or a search missing what was acknowledged before it started).
// Properties: a sequential history made concurrent by widening its
// intervals stays linearizable, and any change to a result of a history
// whose operations do not overlap is caught.
#include "core/check/linearizability.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <fmt/format.h>
#include <rapidcheck/boost_test.h>

#include "core/check/history.h"
#include "core/check/models.h"
#include "core/check/persistent_map.h"
#include "core/common/random.h"

namespace locus::check {
std::ostream& operator<<(std::ostream& os, Verdict v) { return os << to_string(v); }
}  // namespace locus::check

using namespace locus;
using namespace locus::check;

namespace {

// Verdicts here must not depend on how fast (or how loaded, or how
// sanitized) the machine is: no wall-clock budget. CI once got kUnknown
// from the 20k-operation scan history under ThreadSanitizer after 60 s.
const CheckOptions kUntimed{.time_budget_ns = 0};

Operation op(OpKind kind, std::string key, uint64_t value, Nanos t0_ns, Nanos t1_ns, Outcome outcome,
             uint32_t client = 0) {
  Operation o;
  o.client = client;
  o.kind = kind;
  o.key = std::move(key);
  o.value = value;
  o.invoke_ns = t0_ns;
  o.response_ns = t1_ns;
  o.outcome = outcome;
  return o;
}
Operation put(std::string k, uint64_t v, Nanos t0, Nanos t1, uint32_t c = 0) {
  return op(OpKind::kPut, std::move(k), v, t0, t1, t1 == kNeverNs ? Outcome::kUnknown : Outcome::kOk, c);
}
// A get that returned `v`, or not found when v is empty.
Operation get(std::string k, std::optional<uint64_t> v, Nanos t0, Nanos t1, uint32_t c = 0) {
  Operation o = op(OpKind::kGet, std::move(k), 0, t0, t1, v ? Outcome::kOk : Outcome::kNotFound, c);
  o.result_value = v.value_or(0);
  return o;
}
Operation del(std::string k, bool found, Nanos t0, Nanos t1) {
  return op(OpKind::kDelete, std::move(k), 0, t0, t1, found ? Outcome::kOk : Outcome::kNotFound);
}
Operation scan(std::string k, uint32_t limit, std::vector<std::string> keys, Nanos t0, Nanos t1) {
  Operation o = op(OpKind::kScan, std::move(k), 0, t0, t1, Outcome::kOk);
  o.limit = limit;
  o.result_keys = std::move(keys);
  return o;
}
Operation with_ids(Operation o, std::vector<uint64_t> ids) {
  o.result_ids = std::move(ids);
  return o;
}
Operation rect_op(OpKind kind, uint64_t id, Rect r, Nanos t0, Nanos t1, Outcome outcome = Outcome::kOk) {
  Operation o = op(kind, "", id, t0, t1, outcome);
  o.rect = r;
  return o;
}

template <class M>
Verdict verdict(const M& model, const History& h) {
  CheckResult r = check_history(model, h, kUntimed);
  BOOST_TEST_MESSAGE(r.report(h));
  return r.verdict;
}

constexpr auto kYes = Verdict::kLinearizable;
constexpr auto kNo = Verdict::kNotLinearizable;

}  // namespace

BOOST_AUTO_TEST_SUITE(register_and_kv)

// Porcupine's TestRegisterModel (6.824 2017 quiz 2, section VII); the
// register's initial 0 is "not found" here.
BOOST_AUTO_TEST_CASE(porcupine_register_quiz) {
  BOOST_TEST(verdict(KvModel(), {put("x", 100, 0, 100), get("x", 100, 25, 75, 1), get("x", {}, 30, 60, 2)}) == kYes);
  BOOST_TEST(verdict(KvModel(), {put("x", 200, 0, 100), get("x", 200, 10, 30, 1), get("x", {}, 40, 90, 2)}) == kNo);
}

// Porcupine's TestZeroDuration: operations that start and end at once.
BOOST_AUTO_TEST_CASE(porcupine_zero_duration) {
  BOOST_TEST(verdict(KvModel(), {put("x", 100, 0, 100), get("x", 100, 25, 75, 1), get("x", {}, 30, 30, 2),
                                 get("x", {}, 30, 30, 3)}) == kYes);
  BOOST_TEST(verdict(KvModel(), {put("x", 200, 0, 100), get("x", 200, 10, 10, 1), get("x", 200, 10, 10, 2),
                                 get("x", {}, 40, 90, 3)}) == kNo);
}

BOOST_AUTO_TEST_CASE(stale_read_after_completed_write) {
  BOOST_TEST(verdict(KvModel(), {put("x", 1, 0, 10), put("x", 2, 20, 30), get("x", 1, 40, 50)}) == kNo);
  BOOST_TEST(verdict(KvModel(), {put("x", 1, 0, 10), put("x", 2, 20, 30), get("x", 2, 40, 50)}) == kYes);
  // A read of a value nobody wrote (Knossos's simplest bad history).
  BOOST_TEST(verdict(KvModel(), {put("x", 1, 0, 10), get("x", 7, 20, 30)}) == kNo);
}

// Knossos: two overlapping writes may land in either order, but every
// reader after both must agree on one.
BOOST_AUTO_TEST_CASE(concurrent_writes_read_in_one_order) {
  History h{put("x", 1, 0, 100, 0), put("x", 2, 0, 100, 1), get("x", 1, 10, 20, 2), get("x", 2, 30, 40, 2)};
  BOOST_TEST(verdict(KvModel(), h) == kYes);
  h.push_back(get("x", 1, 50, 60, 2));
  BOOST_TEST(verdict(KvModel(), h) == kNo);
  History after{put("x", 1, 0, 10, 0), put("x", 2, 0, 10, 1), get("x", 1, 20, 30, 2), get("x", 2, 40, 50, 3)};
  BOOST_TEST(verdict(KvModel(), after) == kNo);
}

// A write that timed out may take effect at any time after its call, or never.
BOOST_AUTO_TEST_CASE(pending_write_may_or_may_not_happen) {
  BOOST_TEST(verdict(KvModel(), {put("x", 1, 0, kNeverNs), get("x", {}, 10, 20), get("x", {}, 30, 40)}) == kYes);
  BOOST_TEST(verdict(KvModel(), {put("x", 1, 0, kNeverNs), get("x", {}, 10, 20), get("x", 1, 30, 40)}) == kYes);
  // Once seen it stays: a later read may not miss it.
  BOOST_TEST(verdict(KvModel(), {put("x", 1, 0, kNeverNs), get("x", 1, 10, 20), get("x", {}, 30, 40)}) == kNo);
  // It may land after the same client's next write.
  BOOST_TEST(verdict(KvModel(), {put("x", 1, 0, kNeverNs), put("x", 2, 10, 20), get("x", 1, 30, 40)}) == kYes);
  // But not before its own call.
  BOOST_TEST(verdict(KvModel(), {get("x", 1, 0, 10), put("x", 1, 20, kNeverNs)}) == kNo);
  // A read with no answer accepts anything.
  Operation lost = get("x", 5, 10, 20);
  lost.outcome = Outcome::kUnknown;
  BOOST_TEST(verdict(KvModel(), {put("x", 1, 0, 5), lost}) == kYes);
}

// Timed-out writes nothing observed are left out of the search; those a
// read, a scan or a delete may have seen must stay.
BOOST_AUTO_TEST_CASE(timed_out_writes_that_were_observed_stay) {
  BOOST_TEST(verdict(KvModel(), {put("x", 1, 0, kNeverNs), del("x", true, 10, 20)}) == kYes);
  BOOST_TEST(verdict(KvModel(), {put("x", 1, 0, kNeverNs), del("x", true, 10, 20), del("x", true, 30, 40)}) == kNo);
  BOOST_TEST(verdict(SortedMapModel(), {put("a", 1, 0, 5), put("c", 3, 0, kNeverNs), scan("a", 0, {"a", "c"}, 10, 20),
                                        scan("a", 0, {"a"}, 30, 40)}) == kNo);
  BOOST_TEST(verdict(SortedMapModel(), {put("a", 1, 0, 5), put("c", 3, 0, kNeverNs), scan("a", 0, {"a"}, 10, 20),
                                        scan("a", 0, {"a", "c"}, 30, 40)}) == kYes);
  History h{op(OpKind::kInsert, "k", 1, 0, kNeverNs, Outcome::kUnknown),
            with_ids(op(OpKind::kLookup, "k", 0, 10, 20, Outcome::kOk), {1}),
            op(OpKind::kLookup, "k", 0, 30, 40, Outcome::kNotFound)};
  BOOST_TEST(verdict(MultimapModel(), h) == kNo);
  h[2].outcome = Outcome::kOk;
  h[2].result_ids = {1};
  BOOST_TEST(verdict(MultimapModel(), h) == kYes);
}

BOOST_AUTO_TEST_CASE(delete_results) {
  BOOST_TEST(verdict(KvModel(), {put("x", 1, 0, 10), del("x", true, 20, 30), get("x", {}, 40, 50)}) == kYes);
  BOOST_TEST(verdict(KvModel(), {put("x", 1, 0, 10), del("x", true, 20, 30), get("x", 1, 40, 50)}) == kNo);
  BOOST_TEST(verdict(KvModel(), {put("x", 1, 0, 10), del("x", false, 20, 30)}) == kNo);
  BOOST_TEST(verdict(KvModel(), {put("x", 1, 0, 30), del("x", false, 20, 30)}) == kYes);
}

// P-compositionality: keys are checked apart and the smallest failing key
// is the one reported, with its operations.
BOOST_AUTO_TEST_CASE(reports_smallest_failing_partition) {
  History h{put("a", 1, 0, 10),        put("a", 2, 20, 30),   get("a", 1, 40, 50),  get("a", 1, 60, 70),
            put("b", 1, 0, 10),        get("b", {}, 20, 30),  put("c", 1, 0, 10),   get("c", 1, 20, 30)};
  CheckResult r = check_history(KvModel(), h, kUntimed);
  BOOST_TEST_MESSAGE(r.report(h));
  BOOST_TEST(r.partitions == 3u);
  BOOST_TEST(r.verdict == kNo);
  BOOST_TEST((r.failing_ops == std::vector<size_t>{4, 5}));
  BOOST_TEST((r.longest_linearized == std::vector<size_t>{4}));
  BOOST_TEST(r.report(h).find("get(b) -> not found") != std::string::npos);
  // The report opens with where the search stopped: after put(b), with
  // get(b) the one operation that could not come next.
  const std::string report = r.report(h);
  BOOST_TEST(report.find("stopped after 1 of them; its last 1:\n  #4 ") != std::string::npos);
  BOOST_TEST(report.find("could come next:\n  #5 ") != std::string::npos);
  BOOST_TEST(report.find("could come next:") < report.find("the whole partition:"));
}

BOOST_AUTO_TEST_CASE(budget_yields_unknown) {
  History h;
  for (uint64_t i = 0; i < 8; ++i) h.push_back(put("x", i, 0, 100, static_cast<uint32_t>(i)));
  h.push_back(get("x", 3, 200, 300));
  CheckResult r = check_history(KvModel(), h, {.time_budget_ns = 0, .step_budget = 5});
  BOOST_TEST(r.verdict == Verdict::kUnknown);
  BOOST_TEST(r.steps == 5u);
  BOOST_TEST(check_history(KvModel(), h, kUntimed).verdict == kYes);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(models)

BOOST_AUTO_TEST_CASE(scan_must_see_acknowledged_puts) {
  History base{put("a", 1, 0, 10), put("c", 3, 0, 10)};
  auto with = [&](Operation o) {
    History h = base;
    h.push_back(std::move(o));
    return h;
  };
  BOOST_TEST(verdict(SortedMapModel(), with(scan("a", 0, {"a"}, 20, 30))) == kNo);
  BOOST_TEST(verdict(SortedMapModel(), with(scan("a", 0, {"a", "c"}, 20, 30))) == kYes);
  BOOST_TEST(verdict(SortedMapModel(), with(scan("a", 1, {"a"}, 20, 30))) == kYes);
  BOOST_TEST(verdict(SortedMapModel(), with(scan("b", 0, {"c"}, 20, 30))) == kYes);
  BOOST_TEST(verdict(SortedMapModel(), with(scan("a", 0, {"c", "a"}, 20, 30))) == kNo);  // not ascending
  Operation bounded = scan("a", 0, {"a"}, 20, 30);
  bounded.bounded = true;
  bounded.end_key = "c";
  BOOST_TEST(verdict(SortedMapModel(), with(bounded)) == kYes);
  // A put concurrent with the scan may or may not be seen.
  History racing{put("a", 1, 0, 10), put("c", 3, 15, 35), scan("a", 0, {"a"}, 20, 30)};
  BOOST_TEST(verdict(SortedMapModel(), racing) == kYes);
  racing.back().result_keys = {"a", "c"};
  BOOST_TEST(verdict(SortedMapModel(), racing) == kYes);
  // A scan that saw the put, then one that did not.
  racing.push_back(scan("a", 0, {"a"}, 40, 50));
  BOOST_TEST(verdict(SortedMapModel(), racing) == kNo);
}

BOOST_AUTO_TEST_CASE(scan_partitions_by_key_range) {
  History h{put("a", 1, 0, 10), put("c", 3, 0, 10), put("z", 1, 0, 10), scan("a", 1, {"a"}, 20, 30),
            scan("x", 0, {"z"}, 20, 30), get("m", {}, 0, 5)};
  CheckResult r = check_history(SortedMapModel(), h, kUntimed);
  BOOST_TEST(r.verdict == kYes);
  // {a, scan a..a}, {c}, {m}, {x.., z}
  BOOST_TEST(r.partitions == 4u);
}

BOOST_AUTO_TEST_CASE(multimap_lookup_must_see_acknowledged_payloads) {
  History h{op(OpKind::kInsert, "k", 1, 0, 10, Outcome::kOk), op(OpKind::kInsert, "k", 2, 0, 10, Outcome::kOk),
            op(OpKind::kInsert, "j", 9, 0, 10, Outcome::kOk)};
  History missing = h;
  missing.push_back(with_ids(op(OpKind::kLookup, "k", 0, 20, 30, Outcome::kOk), {1}));
  BOOST_TEST(verdict(MultimapModel(), missing) == kNo);
  History all = h;
  all.push_back(with_ids(op(OpKind::kLookup, "k", 0, 20, 30, Outcome::kOk), {2, 1}));
  BOOST_TEST(verdict(MultimapModel(), all) == kYes);
  all.push_back(op(OpKind::kDelete, "k", 1, 40, 50, Outcome::kOk));
  all.push_back(with_ids(op(OpKind::kLookup, "k", 0, 60, 70, Outcome::kOk), {1, 2}));
  BOOST_TEST(verdict(MultimapModel(), all) == kNo);
  all.back().result_ids = {2};
  BOOST_TEST(verdict(MultimapModel(), all) == kYes);
  History racing{op(OpKind::kInsert, "k", 1, 0, 40, Outcome::kOk), op(OpKind::kLookup, "k", 0, 10, 20, Outcome::kNotFound)};
  BOOST_TEST(verdict(MultimapModel(), racing) == kYes);
  racing.push_back(op(OpKind::kDelete, "k", 7, 50, 60, Outcome::kOk));  // never inserted
  BOOST_TEST(verdict(MultimapModel(), racing) == kNo);
}

BOOST_AUTO_TEST_CASE(rect_search_must_see_acknowledged_inserts) {
  const Rect unit{0, 0, 1, 1}, far{5, 5, 6, 6}, query{0.5, 0.5, 2, 2};
  History h{rect_op(OpKind::kInsert, 1, unit, 0, 10), rect_op(OpKind::kInsert, 2, far, 0, 10)};
  auto search = [&](std::vector<uint64_t> ids, Nanos t0, Nanos t1) {
    return with_ids(rect_op(OpKind::kSearch, 0, query, t0, t1), std::move(ids));
  };
  History missed = h;
  missed.push_back(search({}, 20, 30));
  BOOST_TEST(verdict(RectSetModel(), missed) == kNo);
  History too_many = h;
  too_many.push_back(search({1, 2}, 20, 30));
  BOOST_TEST(verdict(RectSetModel(), too_many) == kNo);
  History right = h;
  right.push_back(search({1}, 20, 30));
  BOOST_TEST(verdict(RectSetModel(), right) == kYes);
  right.push_back(rect_op(OpKind::kDelete, 1, {}, 40, 50));
  right.push_back(search({1}, 60, 70));
  BOOST_TEST(verdict(RectSetModel(), right) == kNo);
  right.back().result_ids.clear();
  BOOST_TEST(verdict(RectSetModel(), right) == kYes);
  History racing{rect_op(OpKind::kInsert, 1, unit, 0, 100), search({}, 10, 20), search({1}, 30, 40)};
  BOOST_TEST(verdict(RectSetModel(), racing) == kYes);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(recorder)

// Threads share a real linearizable register (an atomic) and record every
// call; times come from one atomic counter read before and after, so each
// recorded interval contains the operation. Every 50th call is left
// unanswered, as if it timed out.
BOOST_AUTO_TEST_CASE(threads_on_an_atomic_register_record_a_linearizable_history) {
  HistoryRecorder recorder;
  std::atomic<uint64_t> reg{0}, clock{1};
  std::vector<std::thread> threads;
  constexpr int kThreads = 4, kOps = 2000;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ClientHistory& mine = recorder.client(static_cast<uint32_t>(t));
      Random rng(static_cast<uint64_t>(t) + 1);
      for (int i = 0; i < kOps; ++i) {
        const bool write = rng.bernoulli(0.5);
        const uint64_t v = static_cast<uint64_t>(t) * kOps + static_cast<uint64_t>(i) + 1;
        Operation o;
        o.kind = write ? OpKind::kPut : OpKind::kGet;
        o.key = "r";
        o.value = v;
        const size_t ticket = mine.invoke(std::move(o), static_cast<Nanos>(clock.fetch_add(1)));
        uint64_t seen = 0;
        if (write) reg.store(v);
        else seen = reg.load();
        const Nanos done_ns = static_cast<Nanos>(clock.fetch_add(1));
        if (i % 50 == 49) continue;  // no answer
        mine.op(ticket).result_value = seen;
        mine.respond(ticket, write || seen != 0 ? Outcome::kOk : Outcome::kNotFound, done_ns);
      }
    });
  }
  for (auto& th : threads) th.join();
  const History h = recorder.merge();
  BOOST_TEST(h.size() == size_t{kThreads * kOps});
  size_t pending = 0;
  for (size_t i = 0; i < h.size(); ++i) {
    pending += h[i].pending();
    if (i > 0) BOOST_TEST(h[i - 1].invoke_ns <= h[i].invoke_ns);
  }
  BOOST_TEST(pending == size_t{kThreads * kOps / 50});
  const auto start = std::chrono::steady_clock::now();
  CheckResult r = check_history(KvModel(), h, kUntimed);
  BOOST_TEST_MESSAGE(fmt::format("{} ops on one key: {} in {:.3f} s", h.size(), r.report(h),
                                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()));
  BOOST_TEST(r.verdict == kYes);
}

BOOST_AUTO_TEST_CASE(discarded_calls_leave_the_history) {
  HistoryRecorder recorder;
  ClientHistory& c = recorder.client(7);
  const size_t a = c.invoke(put("x", 1, 0, 0), 5);
  c.respond(a, Outcome::kOk, 9);
  c.discard(c.invoke(put("x", 2, 0, 0), 10));
  const History h = recorder.merge();
  BOOST_TEST(h.size() == 1u);
  BOOST_TEST(h[0].client == 7u);
  BOOST_TEST(describe(h[0]) == "c7 put(x, 1) -> ok  [5, 9]");
  BOOST_TEST(&recorder.client(7) == &c);
}

BOOST_AUTO_TEST_SUITE_END()

namespace {

// Gives each operation of a history in linearization order the result a
// plain std::map gives it (the reference the models are checked against).
void fill_results(History& h, const std::vector<size_t>& order) {
  std::map<std::string, uint64_t> map;
  for (size_t i : order) {
    Operation& o = h[i];
    auto it = map.find(o.key);
    const bool found = it != map.end();
    switch (o.kind) {
      case OpKind::kPut: map[o.key] = o.value; o.outcome = Outcome::kOk; break;
      case OpKind::kDelete: o.outcome = found ? Outcome::kOk : Outcome::kNotFound; if (found) map.erase(it); break;
      case OpKind::kGet:
        o.outcome = found ? Outcome::kOk : Outcome::kNotFound;
        o.result_value = found ? it->second : 0;
        break;
      case OpKind::kScan:
        o.outcome = Outcome::kOk;
        o.result_keys.clear();
        for (auto s = map.lower_bound(o.key); s != map.end() && (o.limit == 0 || o.result_keys.size() < o.limit); ++s)
          o.result_keys.push_back(s->first);
        break;
      default: break;
    }
  }
}

// A random sequential history over keys k0..k3, ending with a get: operation
// i at [10 i, 10 i + 5].
History random_sequential(bool with_scans) {
  const auto n = *rc::gen::inRange<size_t>(1, 60);
  History h;
  std::vector<size_t> order;
  for (size_t i = 0; i < n; ++i) {
    const int kinds = with_scans ? 4 : 3;
    const auto kind = std::array{OpKind::kPut, OpKind::kGet, OpKind::kDelete, OpKind::kScan}[*rc::gen::inRange(0, kinds)];
    Operation o = op(kind, "k" + std::to_string(*rc::gen::inRange(0, 4)), *rc::gen::inRange<uint64_t>(1, 100),
                     static_cast<Nanos>(10 * i), static_cast<Nanos>(10 * i + 5), Outcome::kOk);
    o.limit = *rc::gen::inRange<uint32_t>(0, 3);
    h.push_back(std::move(o));
    order.push_back(i);
  }
  h.push_back(op(OpKind::kGet, "k0", 0, static_cast<Nanos>(10 * n), static_cast<Nanos>(10 * n + 5), Outcome::kOk));
  order.push_back(n);
  fill_results(h, order);
  return h;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(properties)

// Widening intervals only adds orders; the sequential one stays valid.
RC_BOOST_PROP(widened_sequential_histories_are_linearizable, (bool with_scans)) {
  History h = random_sequential(with_scans);
  for (Operation& o : h) {
    o.invoke_ns -= *rc::gen::inRange<Nanos>(0, 60);
    o.response_ns += *rc::gen::inRange<Nanos>(0, 60);
    if (*rc::gen::inRange(0, 20) == 0) {  // timed out: any effect, any result
      o.response_ns = kNeverNs;
      o.outcome = Outcome::kUnknown;
    }
  }
  const CheckResult r =
      with_scans ? check_history(SortedMapModel(), h, kUntimed) : check_history(KvModel(), h, kUntimed);
  RC_ASSERT(r.verdict == kYes);
}

// Without overlap the sequential order is the only one, so any result that
// differs from it must be caught.
RC_BOOST_PROP(a_changed_result_of_a_sequential_history_is_caught, (bool with_scans)) {
  History h = random_sequential(with_scans);
  std::vector<size_t> readers;
  for (size_t i = 0; i < h.size(); ++i)
    if (h[i].kind != OpKind::kPut) readers.push_back(i);
  Operation& o = h[*rc::gen::elementOf(readers)];
  switch (o.kind) {
    case OpKind::kGet:
      if (o.outcome == Outcome::kOk && *rc::gen::arbitrary<bool>()) o.outcome = Outcome::kNotFound;
      else o.result_value += 1000, o.outcome = Outcome::kOk;  // a value never written
      break;
    case OpKind::kDelete: o.outcome = o.outcome == Outcome::kOk ? Outcome::kNotFound : Outcome::kOk; break;
    default:
      if (o.result_keys.empty() || (o.limit == 0 && *rc::gen::arbitrary<bool>())) o.result_keys.push_back("k9");
      else o.result_keys.erase(o.result_keys.begin() + *rc::gen::inRange<size_t>(0, o.result_keys.size()));
      break;
  }
  const CheckResult r =
      with_scans ? check_history(SortedMapModel(), h, kUntimed) : check_history(KvModel(), h, kUntimed);
  RC_ASSERT(r.verdict == kNo);
}

// The checker's shared-structure map (RectSetModel's states) against
// std::map: every version keeps its contents after later ones are made
// from it, and two versions are equal exactly when their entries are,
// whatever order built them.
RC_BOOST_PROP(persistent_map_versions_match_std_map, ()) {
  std::vector<PersistentMap<uint64_t, int>> versions{{}};
  std::vector<std::map<uint64_t, int>> expected{{}};
  const auto n = *rc::gen::inRange<size_t>(1, 200);
  for (size_t i = 0; i < n; ++i) {
    const size_t from = *rc::gen::inRange<size_t>(0, versions.size());
    const auto key = *rc::gen::inRange<uint64_t>(0, 40);
    std::map<uint64_t, int> m = expected[from];
    if (*rc::gen::inRange(0, 3) == 0) {
      versions.push_back(versions[from].erase(key));
      m.erase(key);
    } else {
      const int value = *rc::gen::inRange(0, 3);
      versions.push_back(versions[from].set(key, value));
      m[key] = value;
    }
    expected.push_back(std::move(m));
  }
  for (size_t v = 0; v < versions.size(); ++v) {
    std::vector<std::pair<uint64_t, int>> got;
    versions[v].for_each([&](uint64_t k, int x) { got.emplace_back(k, x); });
    const std::vector<std::pair<uint64_t, int>> want(expected[v].begin(), expected[v].end());
    RC_ASSERT(got == want);
    RC_ASSERT(versions[v].size() == expected[v].size());
    for (uint64_t k = 0; k < 40; ++k) {
      const int* x = versions[v].find(k);
      auto it = expected[v].find(k);
      RC_ASSERT((x == nullptr) == (it == expected[v].end()));
      if (x != nullptr) RC_ASSERT(*x == it->second);
    }
    const size_t w = *rc::gen::inRange<size_t>(0, versions.size());
    RC_ASSERT((versions[v] == versions[w]) == (expected[v] == expected[w]));
  }
}

BOOST_AUTO_TEST_SUITE_END()

namespace {

// 100,000 operations over `keys` keys by 8 clients, each issuing its next
// call when the last returns; each operation takes effect at a random
// point of its interval, so the history is linearizable by construction.
// One in 200 calls is left without an answer.
History concurrent_kv_history(uint64_t keys, int ops = 100'000, bool scans = false) {
  constexpr int kClients = 8;
  Random rng(42);
  History h;
  std::vector<std::pair<Nanos, size_t>> effect;  // (time it takes effect, index)
  for (int c = 0; c < kClients; ++c) {
    Nanos now_ns = static_cast<Nanos>(rng.uniform(100));
    for (int i = 0; i < ops / kClients; ++i) {
      const auto kind =
          std::array{OpKind::kGet, OpKind::kGet, OpKind::kPut, OpKind::kDelete, OpKind::kScan}[rng.uniform(scans ? 5 : 4)];
      const Nanos invoke_ns = now_ns + static_cast<Nanos>(rng.uniform(50));
      const Nanos response_ns = invoke_ns + 20 + static_cast<Nanos>(rng.uniform(500));
      h.push_back(op(kind, "key" + std::to_string(rng.uniform(keys)), rng.uniform(1'000'000) + 1, invoke_ns,
                     response_ns, Outcome::kOk, static_cast<uint32_t>(c)));
      h.back().limit = static_cast<uint32_t>(1 + rng.uniform(10));
      effect.emplace_back(invoke_ns + static_cast<Nanos>(rng.uniform(static_cast<uint64_t>(response_ns - invoke_ns))),
                          h.size() - 1);
      now_ns = response_ns;
    }
  }
  std::sort(effect.begin(), effect.end());
  std::vector<size_t> order;
  for (const auto& e : effect) order.push_back(e.second);
  fill_results(h, order);
  for (size_t i = 0; i < h.size(); i += 200) {
    h[i].response_ns = kNeverNs;
    h[i].outcome = Outcome::kUnknown;
  }
  return h;
}

// `ops` operations on rectangles by 8 clients, as concurrent_kv_history:
// 40% inserts of new ids, the rest searches of random windows, after 500
// rectangles loaded first (not yet sequenced: sequence_load); linearizable
// by construction.
History concurrent_rect_history(int ops) {
  constexpr int kClients = 8;
  Random rng(7);
  auto rect = [&](double size) {
    const double x = static_cast<double>(rng.uniform(1000)), y = static_cast<double>(rng.uniform(1000));
    return Rect{x, y, x + size, y + size};
  };
  History h;
  std::vector<std::pair<Nanos, size_t>> effect;  // (time it takes effect, index)
  uint64_t next_id = 1;
  for (int i = 0; i < 500; ++i) {  // the load, overlapping as drivers record it
    h.push_back(op(OpKind::kInsert, "", next_id++, -2, -1, Outcome::kOk));
    h.back().rect = rect(10);
    effect.emplace_back(-1, h.size() - 1);
  }
  for (int c = 0; c < kClients; ++c) {
    Nanos now_ns = 10;
    for (int i = 0; i < ops / kClients; ++i) {
      const bool insert = rng.uniform(5) < 2;
      const Nanos invoke_ns = now_ns + static_cast<Nanos>(rng.uniform(50));
      const Nanos response_ns = invoke_ns + 20 + static_cast<Nanos>(rng.uniform(500));
      h.push_back(op(insert ? OpKind::kInsert : OpKind::kSearch, "", insert ? next_id++ : 0, invoke_ns, response_ns,
                     Outcome::kOk, static_cast<uint32_t>(c)));
      h.back().rect = rect(insert ? 10 : 100);
      effect.emplace_back(invoke_ns + static_cast<Nanos>(rng.uniform(static_cast<uint64_t>(response_ns - invoke_ns))),
                          h.size() - 1);
      now_ns = response_ns;
    }
  }
  std::sort(effect.begin(), effect.end());
  std::vector<std::pair<uint64_t, Rect>> held;
  for (const auto& [at_ns, i] : effect) {
    Operation& o = h[i];
    if (o.kind == OpKind::kInsert) {
      held.emplace_back(o.value, o.rect);
      continue;
    }
    for (const auto& [id, r] : held)
      if (r.intersects(o.rect)) o.result_ids.push_back(id);
  }
  return h;
}

template <class M = KvModel>
double check_seconds(const History& h, CheckResult& r, const M& model = {}) {
  const auto start = std::chrono::steady_clock::now();
  r = check_history(model, h, kUntimed);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(performance)

// Prints the time; then a changed get must be caught.
BOOST_AUTO_TEST_CASE(kv_history_of_100k_operations) {
  History h = concurrent_kv_history(1000);
  CheckResult r;
  const double took_s = check_seconds(h, r);
  BOOST_TEST_MESSAGE(fmt::format("100k ops, 1000 keys, 8 clients: {} in {:.3f} s", r.report(h), took_s));
  BOOST_TEST(r.verdict == kYes);

  size_t victim = 1;
  while (h[victim].kind != OpKind::kGet || h[victim].pending()) ++victim;
  h[victim].result_value += 7'000'000;
  h[victim].outcome = Outcome::kOk;
  const CheckResult bad = check_history(KvModel(), h, kUntimed);
  BOOST_TEST(bad.verdict == kNo);
  BOOST_TEST((std::find(bad.failing_ops.begin(), bad.failing_ops.end(), victim) != bad.failing_ops.end()));
  const std::string report = bad.report(h);
  BOOST_TEST_MESSAGE(report.substr(0, report.find('\n', 400)));
}

// A wall-clock budget (read every 1024 steps) stops a search that takes
// longer; without one the same history is decided.
BOOST_AUTO_TEST_CASE(time_budget_yields_unknown) {
  const History h = concurrent_kv_history(10);
  const CheckResult r = check_history(KvModel(), h, {.time_budget_ns = 1});
  BOOST_TEST(r.verdict == Verdict::kUnknown);
  BOOST_TEST(r.steps == 1024u);
}

// Ten hot keys: 10,000 operations a key, often overlapping.
BOOST_AUTO_TEST_CASE(kv_history_of_100k_operations_on_10_keys) {
  const History h = concurrent_kv_history(10);
  CheckResult r;
  const double took_s = check_seconds(h, r);
  BOOST_TEST_MESSAGE(fmt::format("100k ops, 10 keys, 8 clients: {} in {:.3f} s", r.report(h), took_s));
  BOOST_TEST(r.verdict == kYes);
}

// Scans of up to ten keys among 200: their ranges join keys into larger
// partitions.
BOOST_AUTO_TEST_CASE(sorted_map_history_of_20k_operations_with_scans) {
  const History h = concurrent_kv_history(200, 20'000, true);
  CheckResult r;
  const double took_s = check_seconds(h, r, SortedMapModel());
  BOOST_TEST_MESSAGE(fmt::format("20k ops with scans, 200 keys, 8 clients: {} in {:.3f} s", r.report(h), took_s));
  BOOST_TEST(r.verdict == kYes);
}

// One partition (a search spans every id) whose states hold 500 to 4,500
// rectangles: each step shares the state's structure rather than copying
// it. Then a search missing a rectangle must be caught.
BOOST_AUTO_TEST_CASE(rect_history_of_10k_operations) {
  History h = concurrent_rect_history(10'000);
  sequence_load(h, 500);
  CheckResult r;
  const double took_s = check_seconds(h, r, RectSetModel());
  BOOST_TEST_MESSAGE(fmt::format("10k rectangle ops, 4k inserts, 8 clients: {} in {:.3f} s", r.report(h), took_s));
  BOOST_TEST(r.verdict == kYes);

  // (An early one: proving that no order exists searches every order of
  // the operations before the failing one.)
  size_t victim = 0;
  for (size_t i = 0; i < h.size(); ++i)
    if (h[i].kind == OpKind::kSearch && !h[i].result_ids.empty() &&
        (victim == 0 || h[i].invoke_ns < h[victim].invoke_ns))
      victim = i;
  h[victim].result_ids.pop_back();
  BOOST_TEST(check_history(RectSetModel(), h, kUntimed).verdict == kNo);
}

// A failing check in a partition holding a load: with the load's calls
// overlapping (as drivers record them) the search must try every subset
// of them and does not finish within 100,000 steps (nor within a million:
// tried); sequenced, it decides at once.
BOOST_AUTO_TEST_CASE(a_sequenced_load_keeps_a_failing_check_short) {
  History h = concurrent_rect_history(400);
  size_t victim = 500;  // client 0's first search that found something
  while (h[victim].kind != OpKind::kSearch || h[victim].result_ids.empty()) ++victim;
  h[victim].result_ids.pop_back();
  const CheckOptions bounded{.time_budget_ns = 0, .step_budget = 100'000};
  BOOST_TEST(check_history(RectSetModel(), h, bounded).verdict == Verdict::kUnknown);
  sequence_load(h, 500);
  const CheckResult r = check_history(RectSetModel(), h, bounded);
  BOOST_TEST(r.verdict == kNo);
  BOOST_TEST_MESSAGE(fmt::format("sequenced load: failure found in {} steps", r.steps));
}

BOOST_AUTO_TEST_SUITE_END()
