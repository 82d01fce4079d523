// Tests for core/metrics: histogram percentiles within bucket precision on
// known distributions, merge equal to recording everything in one place,
// empty-histogram behaviour, and the writers' output (table columns, JSON
// that parses back, YCSB's exact line shapes, CSV).
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "core/common/random.h"
#include "core/metrics/latency_histogram.h"
#include "core/metrics/op_stats.h"
#include "core/metrics/run_result.h"

using namespace locus;
using namespace locus::metrics;

namespace {

// A reported value may differ from the true one by half a bucket: 1/256.
constexpr double kRelativePrecision = 1.0 / 256;

void check_near(double reported, double truth) {
  BOOST_CHECK_MESSAGE(std::fabs(reported - truth) <= truth * kRelativePrecision + 1.0,
                      "reported " << reported << " vs true " << truth);
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

RunResult sample_run() {
  RunResult r;
  r.name = "pilaf-get";
  r.backend = "loopback";
  r.index = "pilaf";
  r.seed = 42;
  r.duration_ns = 2 * kSecond;
  const auto read = r.stats.op("READ");
  const auto update = r.stats.op("UPDATE");
  for (int i = 1; i <= 1000; ++i) r.stats.record(read, i * kMicrosecond);
  for (int i = 1; i <= 100; ++i) r.stats.record(update, 10 * kMicrosecond, i % 10 != 0);
  r.stats.add_retries(update, 7);
  r.stats.add(r.stats.counter("cas_conflicts"), 3);
  r.extra["ratio"] = 0.25;
  return r;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(latency_histogram)

BOOST_AUTO_TEST_CASE(bucket_geometry_is_dense_and_precise) {
  size_t previous = 0;
  const std::vector<uint64_t> values = {0,    1,         127,         128, 255, 256, 257,
                                        1000, 123456789, 100'000'000'000, LatencyHistogram::kMaxTrackedNs};
  for (uint64_t v : values) {
    const size_t i = LatencyHistogram::bucket_index(v);
    BOOST_REQUIRE_LT(i, LatencyHistogram::kBucketCount);
    BOOST_CHECK_GE(i, previous);
    previous = i;
    const uint64_t lo = LatencyHistogram::bucket_lower_ns(i);
    const uint64_t width = LatencyHistogram::bucket_width_ns(i);
    BOOST_CHECK(v >= lo && v < lo + width);
    BOOST_CHECK_LE(static_cast<double>(width), std::max(1.0, static_cast<double>(v) / 128.0));
  }
  // Consecutive buckets meet exactly.
  for (size_t i = 0; i + 1 < LatencyHistogram::kBucketCount; ++i) {
    BOOST_REQUIRE_EQUAL(LatencyHistogram::bucket_lower_ns(i) + LatencyHistogram::bucket_width_ns(i),
                        LatencyHistogram::bucket_lower_ns(i + 1));
  }
  // 100 s fits below the top bucket.
  BOOST_CHECK_LT(LatencyHistogram::bucket_index(100 * kSecond), LatencyHistogram::kBucketCount - 1);
}

BOOST_AUTO_TEST_CASE(percentiles_of_uniform_values) {
  LatencyHistogram h;
  for (Nanos v = 1; v <= 100'000; ++v) h.record(v * 100);  // 100 ns .. 10 ms
  BOOST_CHECK_EQUAL(h.count(), 100'000u);
  BOOST_CHECK_EQUAL(h.min(), 100);
  BOOST_CHECK_EQUAL(h.max(), 10'000'000);
  BOOST_CHECK_CLOSE(h.mean(), 5'000'050.0, 1e-9);
  for (double q : {50.0, 90.0, 99.0, 99.9}) {
    BOOST_TEST_CONTEXT("p" << q) { check_near(static_cast<double>(h.percentile(q)), q * 100'000.0); }
  }
  BOOST_CHECK_EQUAL(h.percentile(0), 100);
  BOOST_CHECK_EQUAL(h.percentile(100), 10'000'000);
}

BOOST_AUTO_TEST_CASE(percentiles_of_exponential_values) {
  // Exponential with mean 20 us: the q-quantile is -mean * ln(1 - q).
  Random rng(1);
  LatencyHistogram h;
  std::vector<double> values;
  constexpr int kCount = 200'000;
  for (int i = 0; i < kCount; ++i) {
    const double v = -20'000.0 * std::log(1.0 - rng.uniform_double());
    values.push_back(std::floor(v));
    h.record(static_cast<Nanos>(v));
  }
  std::sort(values.begin(), values.end());
  for (double q : {50.0, 90.0, 99.0, 99.9}) {
    const double exact = values[static_cast<size_t>(std::ceil(q / 100 * kCount)) - 1];
    BOOST_TEST_CONTEXT("p" << q) { check_near(static_cast<double>(h.percentile(q)), exact); }
  }
}

BOOST_AUTO_TEST_CASE(long_and_odd_values) {
  LatencyHistogram h;
  h.record(-5);                // a clock step back counts as 0
  h.record(150 * kSecond);     // beyond 100 s, still exact at the extremes
  h.record(4000 * kSecond);    // beyond the tracked range: top bucket, exact max
  BOOST_CHECK_EQUAL(h.min(), 0);
  BOOST_CHECK_EQUAL(h.max(), 4000 * kSecond);
  check_near(static_cast<double>(h.percentile(60)), 150.0 * kSecond);
  BOOST_CHECK_EQUAL(h.percentile(100), 4000 * kSecond);
}

BOOST_AUTO_TEST_CASE(empty_histogram) {
  LatencyHistogram h;
  BOOST_CHECK_EQUAL(h.count(), 0u);
  BOOST_CHECK_EQUAL(h.min(), 0);
  BOOST_CHECK_EQUAL(h.max(), 0);
  BOOST_CHECK_EQUAL(h.mean(), 0.0);
  BOOST_CHECK_EQUAL(h.percentile(50), 0);
  BOOST_CHECK_EQUAL(h.percentile(99.9), 0);
  LatencyHistogram other;
  other.record(1234);
  h.merge(LatencyHistogram());  // merging empty changes nothing
  BOOST_CHECK_EQUAL(h.count(), 0u);
  other.merge(h);
  BOOST_CHECK_EQUAL(other.min(), 1234);
  BOOST_CHECK_EQUAL(other.count(), 1u);
}

BOOST_AUTO_TEST_CASE(merge_equals_recording_all) {
  Random rng(2);
  LatencyHistogram all, a, b;
  for (int i = 0; i < 50'000; ++i) {
    const Nanos v = static_cast<Nanos>(rng.uniform(5'000'000));
    all.record(v);
    (i % 3 == 0 ? a : b).record(v);
  }
  a.merge(b);
  BOOST_CHECK_EQUAL(a.count(), all.count());
  BOOST_CHECK_EQUAL(a.min(), all.min());
  BOOST_CHECK_EQUAL(a.max(), all.max());
  BOOST_CHECK_EQUAL(a.sum_ns(), all.sum_ns());
  for (size_t i = 0; i < LatencyHistogram::kBucketCount; ++i) {
    BOOST_REQUIRE_EQUAL(a.bucket_count_at(i), all.bucket_count_at(i));
  }
  for (double q : {50.0, 90.0, 99.0, 99.9}) BOOST_CHECK_EQUAL(a.percentile(q), all.percentile(q));
  a.reset();
  BOOST_CHECK_EQUAL(a.count(), 0u);
  BOOST_CHECK_EQUAL(a.percentile(50), 0);
}

// A client's latencies span a few powers of two: its histogram holds
// those buckets only (a simulation has tens of thousands of them), and
// values that arrive below, above and between the held ones (and merges
// of histograms holding other ranges) count as if every bucket were held.
BOOST_AUTO_TEST_CASE(holds_only_the_buckets_it_needs) {
  LatencyHistogram empty;
  BOOST_CHECK_EQUAL(empty.stored_buckets(), 0u);
  Random rng(3);
  LatencyHistogram narrow;
  for (int i = 0; i < 10'000; ++i) narrow.record(static_cast<Nanos>(10'000 + rng.uniform(290'000)));
  BOOST_CHECK_LT(narrow.stored_buckets(), LatencyHistogram::kBucketCount / 4);

  // Out of order: middle, far above, far below, zero, the top, in between.
  const std::vector<Nanos> values{50'000, 9'000'000'000, 300, 0, Nanos{1} << 45, 4'000'000, 127, 128};
  LatencyHistogram h, low, high;
  for (Nanos v : values) {
    h.record(v);
    (v < 100'000 ? low : high).record(v);
  }
  high.merge(low);  // a histogram held below this one's buckets
  for (size_t i = 0; i < LatencyHistogram::kBucketCount; ++i) {
    const uint64_t want = static_cast<uint64_t>(std::count_if(values.begin(), values.end(), [&](Nanos v) {
      return LatencyHistogram::bucket_index(static_cast<uint64_t>(v)) == i;
    }));
    BOOST_REQUIRE_EQUAL(h.bucket_count_at(i), want);
    BOOST_REQUIRE_EQUAL(high.bucket_count_at(i), want);
  }
  for (double q : {10.0, 50.0, 90.0}) BOOST_CHECK_EQUAL(h.percentile(q), high.percentile(q));
  BOOST_CHECK_EQUAL(h.percentile(37.5), 128);  // the 3rd of 8 values, in a one-value bucket
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(op_stats)

BOOST_AUTO_TEST_CASE(per_thread_stats_merge_by_name) {
  OpStats t1, t2;
  const auto get1 = t1.op("get");
  const auto put2 = t2.op("put");  // t2 registers in another order
  const auto get2 = t2.op("get");
  t1.record(get1, 1000);
  t1.record(get1, 3000, false);
  t1.add_retries(get1, 2);
  t1.add(t1.counter("server_side"), 5);
  t2.record(get2, 2000);
  t2.record(put2, 9000);
  t2.add(t2.counter("server_side"), 1);
  t2.add(t2.counter("client_side"), 4);

  OpStats total;
  total.merge(t1);
  total.merge(t2);
  const OpSummary* get = total.find_op("get");
  BOOST_REQUIRE(get != nullptr);
  BOOST_CHECK_EQUAL(get->count(), 3u);
  BOOST_CHECK_EQUAL(get->ok, 2u);
  BOOST_CHECK_EQUAL(get->failed, 1u);
  BOOST_CHECK_EQUAL(get->retries, 2u);
  BOOST_CHECK_EQUAL(get->latency.max(), 3000);
  BOOST_CHECK_EQUAL(total.find_op("put")->count(), 1u);
  BOOST_CHECK(total.find_op("scan") == nullptr);
  BOOST_CHECK_EQUAL(total.counter_value("server_side"), 6);
  BOOST_CHECK_EQUAL(total.counter_value("client_side"), 4);
  BOOST_CHECK_EQUAL(total.total_ops(), 4u);
  BOOST_CHECK_EQUAL(total.total_failed(), 1u);
  total.reset();
  BOOST_CHECK_EQUAL(total.total_ops(), 0u);
  BOOST_CHECK_EQUAL(total.op("get"), 0u);  // names (and ids) survive reset
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(writers)

BOOST_AUTO_TEST_CASE(table_has_columns_and_rows) {
  const std::string table = format_table({sample_run()});
  std::istringstream lines(table);
  std::string header;
  std::getline(lines, header);
  for (const char* column : {"run", "op", "count", "ops/s", "mean us", "p50 us", "p90 us", "p99 us", "p99.9 us",
                             "max us"}) {
    BOOST_CHECK_MESSAGE(contains(header, column), column);
  }
  BOOST_CHECK(contains(table, "READ"));
  BOOST_CHECK(contains(table, "500.0"));  // 1000 reads over 2 s
  BOOST_CHECK(contains(table, "1000.00"));  // max read latency in us
  BOOST_CHECK(contains(table, "failed=10"));
  BOOST_CHECK(contains(table, "retries=7"));
  BOOST_CHECK(contains(table, "cas_conflicts=3"));
  BOOST_CHECK(contains(table, "ratio=0.25"));
  std::string row;
  std::getline(lines, row);
  BOOST_CHECK_EQUAL(row.find("READ"), header.find("op"));  // aligned under its header
}

BOOST_AUTO_TEST_CASE(json_round_trip) {
  const RunResult run = sample_run();
  const auto doc = nlohmann::json::parse(to_json_string({run}));
  const auto& r = doc.at("runs").at(0);
  BOOST_CHECK_EQUAL(r.at("name").get<std::string>(), "pilaf-get");
  BOOST_CHECK_EQUAL(r.at("backend").get<std::string>(), "loopback");
  BOOST_CHECK_EQUAL(r.at("seed").get<uint64_t>(), 42u);
  BOOST_CHECK_EQUAL(r.at("duration_ns").get<int64_t>(), 2 * kSecond);
  BOOST_CHECK_EQUAL(r.at("total_ops").get<uint64_t>(), 1100u);
  BOOST_CHECK_CLOSE(r.at("throughput_ops_per_s").get<double>(), 550.0, 1e-9);
  const auto& read = r.at("ops").at(0);
  BOOST_CHECK_EQUAL(read.at("op").get<std::string>(), "READ");
  BOOST_CHECK_EQUAL(read.at("count").get<uint64_t>(), 1000u);
  const OpSummary* summary = run.stats.find_op("READ");
  BOOST_CHECK_EQUAL(read.at("latency_ns").at("p99").get<int64_t>(), summary->latency.percentile(99));
  BOOST_CHECK_EQUAL(read.at("latency_ns").at("p999").get<int64_t>(), summary->latency.percentile(99.9));
  BOOST_CHECK_CLOSE(read.at("latency_ns").at("mean").get<double>(), 500'500.0, 1e-9);
  const auto& update = r.at("ops").at(1);
  BOOST_CHECK_EQUAL(update.at("failed").get<uint64_t>(), 10u);
  BOOST_CHECK_EQUAL(update.at("retries").get<uint64_t>(), 7u);
  BOOST_CHECK_EQUAL(r.at("counters").at("cas_conflicts").get<int64_t>(), 3);
  BOOST_CHECK_EQUAL(r.at("extra").at("ratio").get<double>(), 0.25);

  const std::string path =
      (std::filesystem::temp_directory_path() / ("locus_metrics_test_" + std::to_string(::getpid()) + ".json"))
          .string();
  BOOST_REQUIRE(write_json_file(path, {run, run}).is_ok());
  std::ifstream in(path);
  BOOST_CHECK_EQUAL(nlohmann::json::parse(in).at("runs").size(), 2u);
  std::remove(path.c_str());
  const Status bad = write_json_file("/nonexistent-dir/x.json", {run});
  BOOST_CHECK(!bad.is_ok());
  BOOST_CHECK(contains(bad.message(), "/nonexistent-dir/x.json"));
}

// A simulated run lists how busy each resource was: in the JSON as a
// "resources" array, in the CSV as a column per resource (empty for a run
// without it); a run without resources has no "resources" key.
BOOST_AUTO_TEST_CASE(resource_utilization_in_json_and_csv) {
  RunResult simulated = sample_run();
  simulated.name = "simulated";
  simulated.resources = {{"server0.nic.rdma", "nic", 0.985}, {"server0.cpu", "cpu", 0.25}};
  const auto doc = nlohmann::json::parse(to_json_string({simulated, sample_run()}));
  const auto& resources = doc.at("runs").at(0).at("resources");
  BOOST_REQUIRE_EQUAL(resources.size(), 2u);
  BOOST_CHECK_EQUAL(resources.at(0).at("name").get<std::string>(), "server0.nic.rdma");
  BOOST_CHECK_EQUAL(resources.at(0).at("kind").get<std::string>(), "nic");
  BOOST_CHECK_EQUAL(resources.at(0).at("utilization").get<double>(), 0.985);
  BOOST_CHECK_EQUAL(resources.at(1).at("name").get<std::string>(), "server0.cpu");
  BOOST_CHECK(!doc.at("runs").at(1).contains("resources"));

  std::istringstream csv(format_csv({simulated, sample_run()}));
  std::string header, first, last;
  std::getline(csv, header);
  std::getline(csv, first);  // simulated, READ
  for (std::string line; std::getline(csv, line);) last = line;  // sample, UPDATE
  BOOST_CHECK(contains(header, ",utilization.server0.nic.rdma,utilization.server0.cpu"));
  BOOST_CHECK(first.rfind("simulated,", 0) == 0);
  BOOST_CHECK(first.ends_with(",0.985,0.25"));
  BOOST_CHECK(last.ends_with(",,"));
}

BOOST_AUTO_TEST_CASE(ycsb_summary_lines) {
  RunResult run = sample_run();
  const std::string text = to_ycsb_summary(run);
  const OpSummary* read = run.stats.find_op("READ");
  const std::vector<std::string> expected_lines = {
      "[OVERALL], RunTime(ms), 2000",
      "[OVERALL], Throughput(ops/sec), 550.0",
      "[READ], Operations, 1000",
      "[READ], AverageLatency(us), 500.5",
      "[READ], MinLatency(us), 1",
      "[READ], MaxLatency(us), 1000",
      "[READ], 50thPercentileLatency(us), " + std::to_string(read->latency.percentile(50) / 1000),
      "[READ], 95thPercentileLatency(us), " + std::to_string(read->latency.percentile(95) / 1000),
      "[READ], 99thPercentileLatency(us), " + std::to_string(read->latency.percentile(99) / 1000),
      "[READ], 99.9PercentileLatency(us), " + std::to_string(read->latency.percentile(99.9) / 1000),
      "[READ], Return=OK, 1000",
      "[UPDATE], Operations, 100",
      "[UPDATE], AverageLatency(us), 10.0",
      "[UPDATE], MinLatency(us), 10",
      "[UPDATE], Return=OK, 90",
      "[UPDATE], Return=ERROR, 10",
  };
  for (const std::string& line : expected_lines) {
    BOOST_CHECK_MESSAGE(contains(text, line + "\n"), "missing: " << line << "\n" << text);
  }
  // Every line is "[SECTION], name, value".
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    BOOST_CHECK(line.front() == '[' && std::count(line.begin(), line.end(), ',') == 2);
  }
  // Java's Double.toString for large and empty cases.
  run.duration_ns = 1;  // 1.1e12 ops/s
  BOOST_CHECK(contains(to_ycsb_summary(run), "[OVERALL], Throughput(ops/sec), 1.1E12\n"));
  run.duration_ns = 0;
  BOOST_CHECK(contains(to_ycsb_summary(run), "[OVERALL], Throughput(ops/sec), 0.0\n"));
}

BOOST_AUTO_TEST_CASE(csv_rows_and_columns) {
  RunResult other = sample_run();
  other.name = "with,comma";
  other.extra.clear();
  other.extra["clients"] = 8;
  const std::string csv = format_csv({sample_run(), other});
  std::istringstream lines(csv);
  std::string header;
  std::getline(lines, header);
  BOOST_CHECK(contains(header, "run,backend,index,seed,duration_s,op,count"));
  BOOST_CHECK(contains(header, "latency_us_p999"));
  BOOST_CHECK(contains(header, ",clients,ratio,counter.cas_conflicts"));
  const auto columns = std::count(header.begin(), header.end(), ',');
  int rows = 0;
  for (std::string line; std::getline(lines, line); ++rows) {
    // The quoted comma adds one comma to the text, not a column.
    const bool quoted = contains(line, "\"with,comma\"");
    BOOST_CHECK_EQUAL(std::count(line.begin(), line.end(), ','), columns + (quoted ? 1 : 0));
  }
  BOOST_CHECK_EQUAL(rows, 4);
  BOOST_CHECK(contains(csv, "pilaf-get,loopback,pilaf,42,2,READ,1000,1000,0,0,500,"));
}

BOOST_AUTO_TEST_SUITE_END()
