// Tests for core/workload: the YCSB generators produce the distributions
// they claim (within sampling tolerance), the standard workloads mix
// operations in their stated proportions, property parsing names the bad
// property, keys match YCSB's, and a seed fully determines a client's stream.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "core/common/random.h"
#include "core/workload/counters.h"
#include "core/workload/generators.h"
#include "core/workload/keys.h"
#include "core/workload/workload.h"
#include "core/workload/workload_spec.h"
#include "core/workload/zipfian.h"

using namespace locus;
using namespace locus::workload;

namespace {

std::string key_of(uint64_t keynum, bool hashed, uint32_t zeropadding) {
  char buf[96];
  const size_t n = build_key(keynum, hashed, zeropadding, buf, sizeof(buf));
  return std::string(buf, n);
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(generators)

BOOST_AUTO_TEST_CASE(uniform_mean_and_range) {
  Random rng(1);
  UniformGenerator gen(100, 199);
  constexpr int kDraws = 100'000;
  double sum = 0;
  for (int i = 0; i < kDraws; ++i) {
    const uint64_t v = gen.next(rng);
    BOOST_REQUIRE(v >= 100 && v <= 199);
    sum += static_cast<double>(v);
  }
  // Standard error of the mean is ~29 / sqrt(1e5) = 0.09.
  BOOST_CHECK_CLOSE(sum / kDraws, 149.5, 0.3);
}

BOOST_AUTO_TEST_CASE(zeta_matches_ycsb_precomputed_constant) {
  // YCSB's ScrambledZipfianGenerator hard-codes zeta(10^10, 0.99).
  BOOST_CHECK_CLOSE(zeta(ScrambledZipfianGenerator::kItemSpace, 0.99), 26.46902820178302, 1e-9);
  // The closed-form tail agrees with summing term by term.
  const uint64_t n = 5'000'000;
  double exact = 0;
  for (uint64_t k = 1; k <= n; ++k) exact += std::pow(static_cast<double>(k), -0.8);
  BOOST_CHECK_CLOSE(zeta(n, 0.8), exact, 1e-9);
}

BOOST_AUTO_TEST_CASE(zipfian_rank_frequencies_follow_theta) {
  constexpr double kTheta = 0.99;
  constexpr uint64_t kItems = 1000;
  constexpr int kDraws = 400'000;
  Random rng(7);
  ZipfianGenerator gen(0, kItems - 1, kTheta);
  std::vector<int> freq(kItems, 0);
  for (int i = 0; i < kDraws; ++i) {
    const uint64_t v = gen.next(rng);
    BOOST_REQUIRE(v < kItems);
    ++freq[v];
  }
  BOOST_CHECK_EQUAL(std::max_element(freq.begin(), freq.end()) - freq.begin(), 0);
  // P(item 0) = 1 / zeta(n); Gray's method is exact for the first two items.
  BOOST_CHECK_CLOSE(static_cast<double>(freq[0]) / kDraws, 1.0 / gen.zetan(), 2.0);
  // freq(0) / freq(r) ~ (r + 1)^theta; Gray's closed form only approximates
  // ranks >= 2, so those get a wider tolerance.
  BOOST_CHECK_CLOSE(static_cast<double>(freq[0]) / freq[1], std::pow(2.0, kTheta), 5.0);
  for (int r : {3, 9}) {
    BOOST_CHECK_CLOSE(static_cast<double>(freq[0]) / freq[r], std::pow(r + 1.0, kTheta), 25.0);
  }
  // The head dominates: the top 10 items take far more than 10 / 1000.
  int top10 = 0;
  for (int r = 0; r < 10; ++r) top10 += freq[r];
  BOOST_CHECK_GT(static_cast<double>(top10) / kDraws, 0.35);
}

BOOST_AUTO_TEST_CASE(zipfian_incremental_zeta_equals_fresh) {
  Random rng(3);
  ZipfianGenerator grown(0, 999, 0.99);
  for (uint64_t n : {1'500u, 20'000u, 20'001u}) {
    const uint64_t v = grown.next(rng, n);
    BOOST_CHECK_LT(v, n);
    BOOST_CHECK_CLOSE(grown.zetan(), ZipfianGenerator(0, n - 1, 0.99).zetan(), 1e-10);
  }
  grown.next(rng, 500);  // shrinking recomputes from scratch
  BOOST_CHECK_CLOSE(grown.zetan(), zeta(500, 0.99), 1e-12);
}

BOOST_AUTO_TEST_CASE(scrambled_zipfian_stays_in_range_and_scatters_hot_keys) {
  Random rng(11);
  ScrambledZipfianGenerator gen(1000, 1999);
  std::map<uint64_t, int> freq;
  constexpr int kDraws = 100'000;
  for (int i = 0; i < kDraws; ++i) {
    const uint64_t v = gen.next(rng);
    BOOST_REQUIRE(v >= 1000 && v <= 1999);
    ++freq[v];
  }
  // The hottest key is where the hash sends zipfian item 0, not the minimum.
  const uint64_t hottest = std::max_element(freq.begin(), freq.end(), [](auto& a, auto& b) {
                             return a.second < b.second;
                           })->first;
  BOOST_CHECK_EQUAL(hottest, 1000 + ycsb_hash(0) % 1000);
  BOOST_CHECK_GT(freq.size(), 900u);  // skewed, but most keys get drawn
}

BOOST_AUTO_TEST_CASE(hotspot_fraction_of_ops_in_hot_set) {
  Random rng(5);
  HotspotIntegerGenerator gen(0, 9999, 0.2, 0.8);
  BOOST_CHECK_EQUAL(gen.hot_count(), 2000u);
  constexpr int kDraws = 100'000;
  int hot = 0;
  for (int i = 0; i < kDraws; ++i) {
    const uint64_t v = gen.next(rng);
    BOOST_REQUIRE(v <= 9999);
    hot += gen.is_hot(v) ? 1 : 0;
  }
  BOOST_CHECK_CLOSE(static_cast<double>(hot) / kDraws, 0.8, 1.5);
  // Degenerate fractions never divide by zero.
  HotspotIntegerGenerator all_cold(0, 9, 0.0, 0.9);
  HotspotIntegerGenerator all_hot(0, 9, 1.0, 0.1);
  for (int i = 0; i < 100; ++i) {
    BOOST_CHECK(!all_cold.is_hot(all_cold.next(rng)));
    BOOST_CHECK(all_hot.is_hot(all_hot.next(rng)));
  }
}

BOOST_AUTO_TEST_CASE(acknowledged_counter_out_of_order) {
  AcknowledgedCounter counter(100, 64);
  BOOST_CHECK_EQUAL(counter.last(), 99u);
  const uint64_t a = counter.next(), b = counter.next(), c = counter.next();
  BOOST_CHECK_EQUAL(a, 100u);
  BOOST_CHECK(counter.acknowledge(b).is_ok());
  BOOST_CHECK_EQUAL(counter.last(), 99u);  // a is still in flight
  BOOST_CHECK(counter.acknowledge(a).is_ok());
  BOOST_CHECK_EQUAL(counter.last(), 101u);
  BOOST_CHECK(counter.acknowledge(c).is_ok());
  BOOST_CHECK_EQUAL(counter.last(), 102u);
  BOOST_CHECK(counter.acknowledge(c).code() == StatusCode::kInvalidArgument);     // twice
  BOOST_CHECK(counter.acknowledge(500).code() == StatusCode::kInvalidArgument);   // never issued
  // More than the window ahead of the oldest unfinished insert.
  const uint64_t oldest = counter.next();
  uint64_t far = oldest;
  for (int i = 0; i < 64; ++i) far = counter.next();
  BOOST_CHECK(counter.acknowledge(far).code() == StatusCode::kResourceExhausted);
  BOOST_CHECK(counter.acknowledge(oldest).is_ok());
  BOOST_CHECK(counter.acknowledge(far).is_ok());
}

BOOST_AUTO_TEST_CASE(acknowledged_counter_shared_by_threads) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 20'000;
  AcknowledgedCounter counter(1000);
  std::vector<std::thread> threads;
  std::array<bool, kThreads> ok{};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&counter, &ok, t] {
      bool all_ok = true;
      for (int i = 0; i < kPerThread; ++i) {
        const uint64_t k = counter.next();
        // Readers must never see last() pass an unacknowledged number.
        all_ok &= counter.last() < k;
        all_ok &= counter.acknowledge(k).is_ok();
      }
      ok[t] = all_ok;
    });
  }
  for (auto& th : threads) th.join();
  for (bool b : ok) BOOST_CHECK(b);
  BOOST_CHECK_EQUAL(counter.last(), 1000u + kThreads * kPerThread - 1);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(keys_and_values)

BOOST_AUTO_TEST_CASE(keys_match_ycsb) {
  BOOST_CHECK_EQUAL(key_of(5, false, 1), "user5");
  BOOST_CHECK_EQUAL(key_of(5, false, 8), "user00000005");
  // YCSB's first hashed key, familiar from every YCSB load log.
  BOOST_CHECK_EQUAL(key_of(0, true, 1), "user6284781860667377211");
  BOOST_CHECK_EQUAL(fnv1a_64(0), 0xa8c7f832281a39c5ULL);
  char small[5];
  BOOST_CHECK_EQUAL(build_key(12345, false, 1, small, sizeof(small)), 0u);
  BOOST_CHECK_GE(max_key_bytes(1), key_of(~uint64_t{0}, false, 1).size());
}

BOOST_AUTO_TEST_CASE(values_fill_caller_buffer) {
  WorkloadSpec spec;
  spec.fieldcount = 4;
  spec.fieldlength = 25;
  auto wl = Workload::create(spec);
  BOOST_REQUIRE(wl.is_ok());
  Random rng(9);
  std::vector<char> buf(wl->max_value_bytes());
  BOOST_CHECK_EQUAL(wl->build_record(rng, 1, buf.data(), buf.size()), 100u);
  BOOST_CHECK(std::all_of(buf.begin(), buf.end(), [](char c) { return c >= ' ' && c <= '~'; }));
  BOOST_CHECK_EQUAL(wl->build_update_value(rng, 1, buf.data(), buf.size()), 25u);  // writeallfields=false
  BOOST_CHECK_EQUAL(wl->build_record(rng, 1, buf.data(), 99), 0u);

  spec.fieldlengthdistribution = LengthDistribution::kZipfian;
  spec.minfieldlength = 5;
  auto zipf = Workload::create(spec);
  BOOST_REQUIRE(zipf.is_ok());
  for (int i = 0; i < 1000; ++i) {
    const size_t n = zipf->build_record(rng, i, buf.data(), buf.size());
    BOOST_REQUIRE(n >= 20 && n <= 100);
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(workloads)

BOOST_AUTO_TEST_CASE(standard_workload_proportions_observed) {
  constexpr int kOps = 100'000;
  for (char letter : std::string("ABCDEF")) {
    BOOST_TEST_CONTEXT("workload " << letter) {
      auto spec = standard_workload(letter);
      BOOST_REQUIRE(spec.is_ok());
      BOOST_REQUIRE(spec->validate().is_ok());
      auto wl = Workload::create(*spec);
      BOOST_REQUIRE(wl.is_ok());
      Random rng(42);
      std::array<int, kOpKindCount> seen{};
      double scan_length_sum = 0;
      for (int i = 0; i < kOps; ++i) {
        const Op op = wl->next_operation(rng);
        ++seen[static_cast<int>(op.kind)];
        if (op.kind == OpKind::kInsert) {
          BOOST_REQUIRE(wl->acknowledge_insert(op.keynum).is_ok());
        } else {
          BOOST_REQUIRE_LE(op.keynum, wl->inserts().last());
        }
        if (op.kind == OpKind::kScan) {
          BOOST_REQUIRE(op.scan_length >= 1 && op.scan_length <= 100);
          scan_length_sum += op.scan_length;
        }
      }
      const double expected[kOpKindCount] = {
          spec->readproportion, spec->updateproportion,          spec->insertproportion,
          spec->scanproportion, spec->readmodifywriteproportion, spec->deleteproportion};
      for (int k = 0; k < kOpKindCount; ++k) {
        BOOST_TEST_CONTEXT(op_kind_name(static_cast<OpKind>(k))) {
          BOOST_CHECK_SMALL(static_cast<double>(seen[k]) / kOps - expected[k], 0.006);
        }
      }
      if (seen[static_cast<int>(OpKind::kScan)] > 0) {
        BOOST_CHECK_CLOSE(scan_length_sum / seen[static_cast<int>(OpKind::kScan)], 50.5, 2.0);
      }
    }
  }
  BOOST_CHECK(!standard_workload('G').is_ok());
}

BOOST_AUTO_TEST_CASE(latest_skews_to_recent_inserts) {
  auto spec = standard_workload('D');
  BOOST_REQUIRE(spec.is_ok());
  spec->recordcount = 10'000;
  auto wl = Workload::create(*spec);
  BOOST_REQUIRE(wl.is_ok());
  Random rng(17);
  auto hottest_and_recent_share = [&](uint64_t latest) {
    std::map<uint64_t, int> freq;
    int recent = 0;
    constexpr int kDraws = 50'000;
    for (int i = 0; i < kDraws; ++i) {
      const uint64_t k = wl->next_keynum(rng);
      BOOST_REQUIRE_LE(k, latest);
      ++freq[k];
      recent += latest - k < 100 ? 1 : 0;
    }
    const uint64_t hottest = std::max_element(freq.begin(), freq.end(), [](auto& a, auto& b) {
                               return a.second < b.second;
                             })->first;
    return std::pair{hottest, static_cast<double>(recent) / kDraws};
  };
  auto [hottest, recent_share] = hottest_and_recent_share(9'999);
  BOOST_CHECK_EQUAL(hottest, 9'999u);
  BOOST_CHECK_GT(recent_share, 0.4);  // the newest 1% of keys take a large share
  // As inserts are acknowledged, the popular end moves with them.
  for (int inserted = 0; inserted < 500;) {
    const Op op = wl->next_operation(rng);
    if (op.kind != OpKind::kInsert) continue;
    BOOST_REQUIRE(wl->acknowledge_insert(op.keynum).is_ok());
    ++inserted;
  }
  const uint64_t latest = wl->inserts().last();
  BOOST_CHECK_GT(latest, 9'999u);
  BOOST_CHECK_EQUAL(hottest_and_recent_share(latest).first, latest);
}

BOOST_AUTO_TEST_CASE(clients_share_one_insert_counter) {
  auto spec = standard_workload('D');
  BOOST_REQUIRE(spec.is_ok());
  auto counter = Workload::make_insert_counter(*spec);
  auto c1 = Workload::create(*spec, counter);
  auto c2 = Workload::create(*spec, counter);
  BOOST_REQUIRE(c1.is_ok() && c2.is_ok());
  Random r1(1), r2(2);
  std::vector<uint64_t> inserted;
  for (int i = 0; i < 4000; ++i) {
    for (auto* client : {&*c1, &*c2}) {
      const Op op = client->next_operation(client == &*c1 ? r1 : r2);
      if (op.kind != OpKind::kInsert) continue;
      inserted.push_back(op.keynum);
      BOOST_REQUIRE(client->acknowledge_insert(op.keynum).is_ok());
    }
  }
  // Insert key numbers continue after the loaded keys, without repeats, and
  // both clients see the same readable range.
  std::sort(inserted.begin(), inserted.end());
  BOOST_REQUIRE(!inserted.empty());
  BOOST_CHECK_EQUAL(inserted.front(), spec->recordcount);
  BOOST_CHECK_EQUAL(inserted.back(), spec->recordcount + inserted.size() - 1);
  BOOST_CHECK_EQUAL(c1->inserts().last(), inserted.back());
  BOOST_CHECK_EQUAL(c2->inserts().last(), inserted.back());
  // A counter that starts inside the loaded range is rejected.
  BOOST_CHECK(!Workload::create(*spec, std::make_shared<AcknowledgedCounter>(10)).is_ok());
}

BOOST_AUTO_TEST_CASE(same_seed_same_stream) {
  auto spec = standard_workload('E');
  BOOST_REQUIRE(spec.is_ok());
  auto run = [&](uint64_t seed) {
    auto wl = Workload::create(*spec);
    BOOST_REQUIRE(wl.is_ok());
    Random rng(seed);
    std::string trace;
    std::vector<char> value(wl->max_value_bytes());
    for (int i = 0; i < 2000; ++i) {
      const Op op = wl->next_operation(rng);
      trace += std::to_string(static_cast<int>(op.kind)) + ":" + std::to_string(op.keynum) + ":" +
               std::to_string(op.scan_length) + ";";
      if (op.kind == OpKind::kInsert) {
        const size_t n = wl->build_record(rng, op.keynum, value.data(), value.size());
        trace.append(value.data(), n);
        BOOST_REQUIRE(wl->acknowledge_insert(op.keynum).is_ok());
      }
    }
    return trace;
  };
  BOOST_CHECK(run(1234) == run(1234));
  BOOST_CHECK(run(1234) != run(1235));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(properties)

BOOST_AUTO_TEST_CASE(parse_and_round_trip) {
  WorkloadSpec spec;
  BOOST_CHECK(set_property(spec, "recordcount", "5000").is_ok());
  BOOST_CHECK(set_property(spec, " requestdistribution ", "hotspot").is_ok());
  BOOST_CHECK(set_property(spec, "hotspotopnfraction", "0.75").is_ok());
  BOOST_CHECK(set_property(spec, "insertorder", "ordered").is_ok());
  BOOST_CHECK(set_property(spec, "writeallfields", "true").is_ok());
  BOOST_CHECK_EQUAL(spec.recordcount, 5000u);
  BOOST_CHECK(spec.requestdistribution == RequestDistribution::kHotspot);
  BOOST_CHECK_EQUAL(spec.hotspotopnfraction, 0.75);

  WorkloadSpec copy;
  for (const auto& [name, value] : to_properties(spec)) {
    BOOST_REQUIRE_MESSAGE(set_property(copy, name, value).is_ok(), name << "=" << value);
  }
  BOOST_CHECK(to_properties(copy) == to_properties(spec));
}

BOOST_AUTO_TEST_CASE(errors_name_the_property) {
  WorkloadSpec spec;
  struct Case {
    const char* name;
    const char* value;
  };
  for (const Case& c : {Case{"readproportion", "abc"}, Case{"readproportion", "1.5"},
                        Case{"recordcount", "-3"}, Case{"fieldcount", "99999999999"},
                        Case{"requestdistribution", "pareto"}, Case{"insertorder", "random"},
                        Case{"readallfields", "yes"}, Case{"maxscanlength", ""}}) {
    const Status s = set_property(spec, c.name, c.value);
    BOOST_CHECK(s.code() == StatusCode::kInvalidArgument);
    BOOST_CHECK_MESSAGE(contains(s.message(), c.name), s.message());
  }
  const Status unknown = set_property(spec, "readproprtion", "0.5");
  BOOST_CHECK(contains(unknown.message(), "unknown workload property 'readproprtion'"));
}

// workload.deleteproportion: parsed and round-tripped, counted in the sum
// of proportions (the message names it), and drawn at its share with keys
// from the loaded and acknowledged range, named DELETE.
BOOST_AUTO_TEST_CASE(deleteproportion_parses_validates_and_draws_its_share) {
  WorkloadSpec spec;
  BOOST_CHECK_EQUAL(spec.deleteproportion, 0.0);
  BOOST_REQUIRE(set_property(spec, "deleteproportion", "0.2").is_ok());
  BOOST_CHECK_EQUAL(spec.deleteproportion, 0.2);
  const Status bad = set_property(spec, "deleteproportion", "1.2");
  BOOST_CHECK_MESSAGE(contains(bad.message(), "deleteproportion"), bad.message());
  const Status sum = spec.validate();  // 0.95 + 0.05 + 0.2
  BOOST_CHECK_MESSAGE(contains(sum.message(), "deleteproportion sum to 1.2"), sum.message());
  bool listed = false;
  for (const auto& [name, value] : to_properties(spec)) listed |= name == "deleteproportion" && value == "0.2";
  BOOST_CHECK(listed);

  spec.readproportion = 0.4;
  spec.updateproportion = 0.0;
  spec.insertproportion = 0.4;
  spec.recordcount = 500;
  BOOST_REQUIRE(spec.validate().is_ok());
  auto wl = Workload::create(spec);
  BOOST_REQUIRE(wl.is_ok());
  Random rng(5);
  constexpr int kOps = 50'000;
  std::array<int, kOpKindCount> seen{};
  for (int i = 0; i < kOps; ++i) {
    const Op op = wl->next_operation(rng);
    ++seen[static_cast<int>(op.kind)];
    if (op.kind == OpKind::kInsert) BOOST_REQUIRE(wl->acknowledge_insert(op.keynum).is_ok());
    if (op.kind == OpKind::kDelete) BOOST_REQUIRE_LE(op.keynum, wl->inserts().last());
  }
  BOOST_CHECK_SMALL(static_cast<double>(seen[static_cast<int>(OpKind::kDelete)]) / kOps - 0.2, 0.01);
  BOOST_CHECK_SMALL(static_cast<double>(seen[static_cast<int>(OpKind::kInsert)]) / kOps - 0.4, 0.01);
  BOOST_CHECK_EQUAL(op_kind_name(OpKind::kDelete), "DELETE");
}

BOOST_AUTO_TEST_CASE(validate_rejects_inconsistent_specs) {
  WorkloadSpec spec;
  BOOST_CHECK(spec.validate().is_ok());
  spec.updateproportion = 0.5;  // 0.95 + 0.5
  BOOST_CHECK(contains(spec.validate().message(), "sum to"));
  spec.updateproportion = 0.05;
  spec.recordcount = 0;
  BOOST_CHECK(contains(spec.validate().message(), "recordcount"));
  spec.recordcount = 100;
  spec.minscanlength = 10;
  spec.maxscanlength = 5;
  BOOST_CHECK(contains(spec.validate().message(), "minscanlength"));
  spec.maxscanlength = 50;
  spec.zipfianconstant = 1.0;
  BOOST_CHECK(contains(spec.validate().message(), "zipfianconstant"));
  spec.zipfianconstant = 0.99;
  spec.insertstart = 60;
  spec.insertcount = 50;
  BOOST_CHECK(contains(spec.validate().message(), "insertcount"));
  BOOST_CHECK(!Workload::create(spec).is_ok());
}

BOOST_AUTO_TEST_SUITE_END()
